"""``solrace replay RESULTS``: a finished race played again from its results file alone."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``replay`` subcommand."""
    p = subparsers.add_parser(
        "replay",
        help="replay a finished race from its results file",
        description="Rebuild every board of a finished race from its results (the seed "
        "deals the board, the logs give every move and its race clock) and play it again: "
        "all boards side by side, space pauses, +/- change the speed, n steps, e ends. "
        "Reads what --save-results writes (.json, .msgpack) and the --json outputs. "
        "Without a terminal (or with --plain) it prints the final boards.",
    )
    p.add_argument("results", metavar="RESULTS_FILE", help="the saved results")
    p.add_argument(
        "--speed", type=float, default=1.0, metavar="X",
        help="start X times faster than the race went (default 1)",
    )
    p.add_argument("--plain", action="store_true", help="print the final boards, no view")
    p.add_argument("--ascii", action="store_true", help="suit letters instead of symbols")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Replay; 1 with one line on stderr if the file cannot be read or replayed."""
    import engine
    from client_cli.replay import Replay
    from client_cli.results_file import read_results

    try:
        results = read_results(Path(args.results).read_bytes())
        replay = Replay(results)
    except (OSError, ValueError) as exc:  # engine errors are ValueErrors too
        print(f"solrace replay: {exc}", file=sys.stderr)
        return 1
    if args.speed <= 0:
        print("solrace replay: --speed must be positive", file=sys.stderr)
        return 2
    if args.plain or not sys.stdout.isatty():
        try:
            replay.seek_end()
        except engine.EngineError as exc:
            print(f"solrace replay: the log does not replay: {exc}", file=sys.stderr)
            return 1
        print(final_boards(replay, symbols=not args.ascii))
        return 0
    from client_cli.tui.replay import ReplayApp

    ReplayApp(results, speed=args.speed, symbols=not args.ascii).run()
    return 0


def final_boards(replay: object, symbols: bool = True) -> str:
    """Every board at the end of the race, two abreast, as plain text."""
    from client_cli.replay import Replay
    from client_cli.tui.render import clock_text
    from client_cli.tui.watch import COLUMN, side_by_side, titled_board

    assert isinstance(replay, Replay)
    results = replay.results
    head = (f"replay of room {results.code}: {results.variant}, seed {results.seed}, "
            f"{len(replay.timeline)} moves over {clock_text(replay.end_ms)}")
    blocks = [
        titled_board(replay.status(seat), replay.names.get(seat, f"seat {seat}"),
                     replay.games[seat].view(), replay.moves[seat], COLUMN - 1, symbols)
        for seat in replay.seats
    ]
    lines = [line.plain.rstrip() for line in side_by_side(blocks, COLUMN)]
    return "\n".join([head, "", *lines]).rstrip()
