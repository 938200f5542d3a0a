"""``solrace deal VARIANT --seed N [--option NAME=VALUE ...] [--json]``: show the deal a
seed gives, the same on every machine (docs/DEALS.md), to check a revealed seed against
the board you played or to look at a deal before racing on it.

The readable print numbers the piles and lists each bottom → top, face-down cards as
``##``; hearts and diamonds are red on a terminal (never when output is not a terminal,
when ``NO_COLOR`` is set, or with ``--color never``). ``--json`` prints the full layout
(RULES.md interchange format, face-down cards named), which ``Game.from_layout`` reads.
Bad input gets one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from typing import Any, TextIO

import engine
from engine.shuffle import SEED_MAX, check_seed
from engine.variants import Variant

RED = "\x1b[31m"
DIM = "\x1b[2m"
RESET = "\x1b[0m"


class UsageError(ValueError):
    """Bad command-line input: reported as one line, exit status 2."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``deal`` subcommand."""
    p = subparsers.add_parser(
        "deal", help="show the deal a seed gives",
        description="Show the layout that VARIANT deals from SEED with these options: the "
        "same on every machine, so a revealed seed can be checked against the board played.",
        epilog=f"variants: {', '.join(engine.VARIANTS)}. Options per variant: see docs/ENGINE.md "
        "or RULES.md (e.g. --option kings_to_bottom=off, --option empty_pile=any).",
    )
    p.add_argument("variant", metavar="VARIANT", help="one of: " + ", ".join(engine.VARIANTS))
    p.add_argument("--seed", metavar="N",
                   help=f"the seed: an integer 0 .. {SEED_MAX} (decimal, or hex with 0x)")
    p.add_argument("--option", "-o", metavar="NAME=VALUE", action="append", default=[],
                   help="a variant option, e.g. redeals=3 or foundation_takeback=on "
                   "(repeat for several)")
    p.add_argument("--json", action="store_true",
                   help="print the full layout as JSON (face-down cards named)")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour red suits: auto (on a terminal, unless NO_COLOR is set), "
                   "always or never")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the deal; 0 on success, 2 (one line on stderr) on bad input."""
    try:
        variant = parse_variant(args.variant)
        seed = parse_seed(args.seed)
        options = parse_options(variant, args.option)
        game = engine.new_game(variant.name, seed=seed, **options)
    except (UsageError, engine.EngineError) as exc:
        print(f"solrace deal: {exc}", file=sys.stderr)
        return 2
    out = sys.stdout
    if args.json:
        out.write(json.dumps(game.to_layout()) + "\n")
        return 0
    out.write(render(game, seed, use_color(args.color, out)))
    return 0


def parse_variant(text: str) -> Variant:
    """The variant named ``text`` (any case)."""
    return engine.get_variant(text.strip().lower())


def parse_seed(text: str | None) -> int:
    """A seed from decimal digits or ``0x`` hex, within 0 .. 2**64-1."""
    if text is None:
        raise UsageError(f"--seed N is required (an integer 0 .. {SEED_MAX})")
    t = text.strip().replace("_", "")
    try:
        value = int(t, 16) if t.lower().startswith("0x") else int(t, 10)
    except ValueError:
        raise UsageError(
            f"bad seed {text!r}: write an integer 0 .. {SEED_MAX} (decimal, or hex with 0x)"
        ) from None
    return check_seed(value)


def parse_options(variant: Variant, given: list[str]) -> dict[str, Any]:
    """``["redeals=3", ...]`` → ``{"redeals": 3}``, each value read by its option's
    ``OptionSpec.parse_text``; unknown names and bad values raise ``BadOption``."""
    options: dict[str, Any] = {}
    for item in given:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UsageError(f"option {item!r} must be written NAME=VALUE (e.g. redeals=3)")
        if name in options:
            raise UsageError(f"option {name} is given twice")
        spec = variant.options.get(name)
        if spec is None:
            variant.resolve_options({name: value})  # raises BadOption naming the valid ones
        else:
            options[name] = spec.parse_text(variant.name, name, value)
    return options


def use_color(choice: str, out: TextIO) -> bool:
    """Whether to colour: ``always``/``never`` as said; ``auto`` on a terminal unless the
    NO_COLOR environment variable is set to anything but the empty string."""
    if choice != "auto":
        return choice == "always"
    return not os.environ.get("NO_COLOR") and out.isatty()


def card(code: str, color: bool) -> str:
    """A face-up card's code, red for hearts and diamonds when colouring."""
    return f"{RED}{code}{RESET}" if color and code[1] in "HD" else code


def render(game: engine.Game, seed: int, color: bool) -> str:
    """The readable print: a title line, one line per pile, the foundations, the redeals
    left (where the variant has redeals), the state hash and the legal moves."""
    view = game.view()
    opts = ", ".join(f"{k}={_text(v)}" for k, v in view["options"].items())
    lines = [f"{game.variant.title}, seed {seed}" + (f" ({opts})" if opts else "")]
    width = len(str(len(view["tableau"])))
    down_mark = f"{DIM}##{RESET}" if color else "##"
    for number, pile in enumerate(view["tableau"], 1):
        cards = [down_mark] * pile["down"] + [card(c, color) for c in pile["up"]]
        lines.append(f"{number:>{width}}: " + (" ".join(cards) if cards else "(empty)"))
    tops = [f"{s}:" + (card("A23456789TJQK"[height - 1] + s, color) if height else "--")
            for s, height in view["foundations"].items()]
    lines.append("foundations: " + " ".join(tops) + f"  (progress {game.progress}/52)")
    if "redeals" in view["options"]:
        lines.append(f"redeals left: {view['redeals_left']}")
    lines.append(f"state hash: {game.state_hash():#010x}")
    moves = [str(m) for m in game.legal_moves()]
    listed = f"legal moves ({len(moves)}): " + (" ".join(moves) if moves else "none")
    lines.extend(textwrap.wrap(listed, width=88, subsequent_indent="  "))
    return "\n".join(lines) + "\n"


def _text(value: object) -> str:
    """An option value as typed on the command line."""
    return str(value).lower() if isinstance(value, bool) else str(value)
