"""``solrace watch URL CODE``: every board of a race, live, with the ranking."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from client_cli import results_file


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
    p.add_argument(
        "--json",
        action="store_true",
        help="(plain) print the results as JSON (solrace verify reads it)",
    )
    p.add_argument("--ascii", action="store_true", help="suit letters instead of symbols")
    results_file.add_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Watch until the results (plain) or until q (full screen)."""
    if results_file.path_refused("watch", args.save_results):
        return 2
    if args.plain or args.json or not sys.stdout.isatty():
        return asyncio.run(
            watch_plain(args.url, args.code, as_json=args.json, save_to=args.save_results)
        )
    from client_cli.tui.watch import WatchApp

    app = WatchApp(args.url, args.code, symbols=not args.ascii, save_results=args.save_results)
    result = app.run()
    if args.save_results and app.client.room.results is not None:
        print(f"results saved to {args.save_results}")
    return int(result if result is not None else app.exit_code)


async def watch_plain(
    url: str,
    code: str,
    *,
    as_json: bool = False,
    interval: float = 1.0,
    save_to: str | None = None,
    client_options: dict[str, Any] | None = None,
    joined: asyncio.Event | None = None,
    verdict_wait_s: float | None = None,
) -> int:
    """Print a progress line every ``interval`` seconds until the results; then the
    results and the seed check. 0 when the seed check passed; 1, with one line on
    stderr and never a traceback, when the server cannot be reached, refuses, or goes
    away for good (``client_options`` go to the ``RaceClient``: its resume tries;
    ``joined`` is set once in the room). Results that came without the deal's verdict
    wait up to ``verdict_wait_s`` (default ``VERDICT_WAIT_S``) for it."""
    from client_cli.sdk import RaceClient, RaceError

    client = RaceClient(url, "spectator", **(client_options or {}))
    try:
        await client.connect()
        await client.join(code, "spectator")
        if joined is not None:
            joined.set()
        return await _watch(client, as_json, interval, save_to, verdict_wait_s)
    except RaceError as exc:
        print(f"solrace watch: {exc.message} ({exc.code})", file=sys.stderr)
        return 1
    except OSError as exc:  # writing --save-results
        print(f"solrace watch: {exc}", file=sys.stderr)
        return 1
    finally:
        await client.close()


async def _watch(
    client: Any, as_json: bool, interval: float, save_to: str | None,
    verdict_wait_s: float | None,
) -> int:
    from client_cli.results_file import save_results
    from client_cli.sdk.client import VERDICT_WAIT_S
    from client_cli.tui.plain import progress_line, results_json, results_text

    committed = client.room.commitment
    while client.room.results is None:
        if not as_json and client.room.phase == "running":
            print(progress_line(client.room), flush=True)
        try:
            await client.wait_for(lambda r: r.results is not None, interval)
        except TimeoutError:
            continue
    # printed and saved with the results
    await client.wait_for_verdict(VERDICT_WAIT_S if verdict_wait_s is None else verdict_wait_s)
    if save_to:
        save_results(client.room.results, save_to)
    if as_json:
        data = results_json(client.room, committed)
        print(json.dumps(data, indent=2))
        return 0 if data["seed_check"]["ok"] else 1
    text, check = results_text(client.room, committed)
    print(text)
    if save_to:
        print(f"results saved to {save_to}")
    return 0 if check is not None and check.ok else 1
