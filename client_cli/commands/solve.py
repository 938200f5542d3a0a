"""``solrace solve VARIANT (--seed N | --layout FILE) [--option NAME=VALUE ...]
[--max-seconds S] [--max-nodes N] [--json]``: decide whether a deal (or a saved
position) can be won, and print a solution when it can.

The verdict is ``won`` (with the moves, in the notation ``Game.play`` takes),
``unwinnable`` (every reachable position was searched) or ``unknown`` (the budget ran
out first). Brisbane is solved knowing its face-down cards. ``--layout FILE`` reads a
full-information layout (RULES.md interchange format, e.g. from ``solrace deal --json``;
``-`` reads stdin); its variant must be VARIANT and it carries its own options.
The exit status is 0 whatever the verdict, 2 (one line on stderr) on bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from typing import Any

import engine
from engine.solver import DEFAULT_BUDGET, SolveResult, load_layout, solve

from .deal import UsageError, parse_options, parse_seed, parse_variant

PROG = "solrace solve"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``solve`` subcommand."""
    p = subparsers.add_parser(
        "solve", help="decide whether a deal can be won, with a solution",
        description="Search the deal VARIANT gets from SEED (or a saved position) and print "
        "the verdict: won (with a solution), unwinnable, or unknown when the budget runs out.",
        epilog=f"variants: {', '.join(engine.VARIANTS)}. Exit status 0 whatever the verdict; "
        "2 on bad input. See docs/SOLVER.md.",
    )
    p.add_argument("variant", metavar="VARIANT", help="one of: " + ", ".join(engine.VARIANTS))
    p.add_argument("--seed", metavar="N", help="the seed of the deal: an integer 0 .. 2**64-1")
    p.add_argument("--option", "-o", metavar="NAME=VALUE", action="append", default=[],
                   help="a variant option, e.g. redeals=3 (repeat for several; not with --layout)")
    p.add_argument("--layout", metavar="FILE",
                   help="solve the position in this layout JSON file instead ('-': stdin)")
    p.add_argument("--max-seconds", metavar="S", default=str(DEFAULT_BUDGET.max_seconds),
                   help=f"stop after S seconds (default {DEFAULT_BUDGET.max_seconds:g})")
    p.add_argument("--max-nodes", metavar="N", default=str(DEFAULT_BUDGET.max_nodes),
                   help=f"stop after N positions (default {DEFAULT_BUDGET.max_nodes})")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object: verdict, moves, nodes, seconds, ...")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Solve and print; 0 on success whatever the verdict, 2 on bad input."""
    try:
        max_seconds = _positive(args.max_seconds, "--max-seconds", float)
        max_nodes = int(_positive(args.max_nodes, "--max-nodes", int))
        game, seed = _load(args)
    except (UsageError, engine.EngineError) as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    result = solve(game, max_nodes=max_nodes, max_seconds=max_seconds)
    if args.json:
        sys.stdout.write(json.dumps(to_json(game, seed, result)) + "\n")
    else:
        sys.stdout.write(render(game, seed, result))
    return 0


def _positive(text: str, flag: str, kind: type[float] | type[int]) -> float:
    try:
        value = kind(text)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise UsageError(f"{flag} takes {what} above 0, not {text!r}") from None
    if not value > 0 or value != value or value == float("inf"):
        raise UsageError(f"{flag} must be above 0 and finite, not {text!r}")
    return float(value)


def _load(args: argparse.Namespace) -> tuple[engine.Game, int | None]:
    """The game to solve, and its seed when it is a fresh deal."""
    variant = parse_variant(args.variant)
    if args.layout is None:
        seed = parse_seed(args.seed)
        options = parse_options(variant, args.option)
        return engine.new_game(variant.name, seed=seed, **options), seed
    if args.seed is not None or args.option:
        raise UsageError("--layout carries its own position and options: "
                         "leave out --seed and --option")
    layout = _read_json(args.layout)
    if isinstance(layout, dict):
        named = layout.get("variant")
        if not isinstance(named, str) or named.strip().lower() != variant.name:
            # never quote a huge or deeply nested value
            shown = repr(named) if isinstance(named, str) and len(named) <= 40 else (
                f"a value of type {type(named).__name__}")
            raise UsageError(f"the layout in {args.layout} is {shown}, not {variant.name!r}")
        layout = {**layout, "variant": variant.name}  # variant names are case-insensitive
    return load_layout(layout), None


def _read_json(path: str) -> Any:
    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as f:
                text = f.read()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}, "
                         f"column {exc.colno}") from None
    except RecursionError:  # the decoder recurses once per level of nesting
        raise UsageError(f"{path} is nested too deeply to be a layout") from None


def to_json(game: engine.Game, seed: int | None, result: SolveResult) -> dict[str, Any]:
    """The ``--json`` object."""
    return {
        "variant": game.name,
        "seed": seed,
        "options": dict(game.options),
        "verdict": result.verdict,
        "moves": list(result.moves),
        "nodes": result.nodes,
        "seconds": round(result.elapsed, 6),
        "reason": result.reason,
    }


def render(game: engine.Game, seed: int | None, result: SolveResult) -> str:
    """The readable report: what was solved, the verdict, the solution, the effort."""
    opts = ", ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                     for k, v in game.options.items())
    where = f"seed {seed}" if seed is not None else "layout"
    lines = [f"{game.variant.title}, {where}" + (f" ({opts})" if opts else "")]
    if result.verdict == "won":
        lines.append(f"verdict: won ({len(result.moves)} moves)")
        lines.extend(textwrap.wrap(" ".join(result.moves), width=88,
                                   initial_indent="  ", subsequent_indent="  "))
    else:
        lines.append(f"verdict: {result.verdict} ({result.reason})")
    rate = f", {result.nodes_per_second:,.0f}/s" if result.elapsed > 0 else ""
    lines.append(f"searched {result.nodes:,} positions in {result.elapsed:.3f} s{rate}")
    return "\n".join(lines) + "\n"
