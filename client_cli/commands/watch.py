"""``solrace watch URL CODE``: every board of a race, live, with the ranking."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``watch`` subcommand."""
    p = subparsers.add_parser(
        "watch",
        help="watch a race live",
        description="Watch room CODE as a spectator: every board (face-down cards hidden), "
        "live progress and ranking, then the results and the seed check. Without a "
        "terminal (or with --plain) it prints one progress line a second instead.",
    )
    p.add_argument("url", help="server URL, e.g. ws://127.0.0.1:8765")
    p.add_argument("code", help="the room code")
    p.add_argument("--plain", action="store_true", help="text lines, no full-screen view")
    p.add_argument("--json", action="store_true", help="(plain) print the results as JSON")
    p.add_argument("--ascii", action="store_true", help="suit letters instead of symbols")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Watch until the results (plain) or until q (full screen)."""
    if args.plain or args.json or not sys.stdout.isatty():
        return asyncio.run(watch_plain(args.url, args.code, as_json=args.json))
    from client_cli.tui.watch import WatchApp

    app = WatchApp(args.url, args.code, symbols=not args.ascii)
    result = app.run()
    return int(result if result is not None else app.exit_code)


async def watch_plain(url: str, code: str, *, as_json: bool = False, interval: float = 1.0) -> int:
    """Print a progress line every ``interval`` seconds until the results; then the
    results and the seed check. 0 when the seed check passed."""
    from client_cli.sdk import RaceClient, RaceError
    from client_cli.tui.plain import progress_line, results_json, results_text

    async with RaceClient(url, "spectator") as client:
        try:
            await client.join(code, "spectator")
        except RaceError as exc:
            print(f"solrace watch: {exc.message} ({exc.code})", file=sys.stderr)
            return 1
        committed = client.room.commitment
        while client.room.results is None:
            if not as_json and client.room.phase == "running":
                print(progress_line(client.room), flush=True)
            try:
                await client.wait_for(lambda r: r.results is not None, interval)
            except TimeoutError:
                continue
        if as_json:
            print(json.dumps(results_json(client.room, committed), indent=2))
            return 0
        text, check = results_text(client.room, committed)
        print(text)
        return 0 if check is not None and check.ok else 1
