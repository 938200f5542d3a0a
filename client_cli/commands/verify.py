"""``solrace verify RESULTS_FILE``: check a race's results (JSON or MessagePack) — the
commitment, the deal, every move, the ranking. Exit 0 when consistent, 1 otherwise."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``verify`` subcommand."""
    p = subparsers.add_parser(
        "verify", help="check a race's results against its revealed seed",
        description="Recompute the seed commitment, re-deal, replay every move log and "
        "recompute the ranking of a saved Results message: a file written by "
        "--save-results (.json or .msgpack), or what --json prints (watch, bot, demo).",
    )
    p.add_argument(
        "results", metavar="RESULTS_FILE",
        help="the saved results (--save-results file, or a --json output)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print a verdict; 0 if the results check out, 1 if not (or unreadable)."""
    from client_cli.results_file import read_results
    from protocol.verify import verify_results

    try:
        data = Path(args.results).read_bytes()
        results = read_results(data)
    except (OSError, ValueError) as exc:
        print(f"solrace verify: {exc}", file=sys.stderr)
        return 1
    problems = verify_results(results).problems
    seats = len(results.logs)
    moves = sum(len(log.moves) for log in results.logs)
    if problems:
        print(f"MISMATCH: race {results.code} ({results.variant}, seed {results.seed}):")
        for problem in problems:
            print(f"  - {problem}")
        return 1
    print(f"OK: race {results.code} ({results.variant}, seed {results.seed}) verified: "
          f"commitment matches, {seats} seat(s), {moves} move(s) replayed, ranking correct")
    return 0
