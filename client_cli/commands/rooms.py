"""``solrace rooms URL``: the open public rooms on a server."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from client_cli.sdk.client import LIST_ROOMS_LIMIT


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``rooms`` subcommand."""
    p = subparsers.add_parser(
        "rooms",
        help="list the public rooms on a server",
        description="List the open public rooms on the server at URL, newest first: code, "
        "variant and options, ranking rule, phase, players and seats. Join one with "
        "solrace play URL --join CODE (or watch it).",
    )
    p.add_argument("url", help="server URL, e.g. ws://127.0.0.1:8765")
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.add_argument("--limit", type=_positive, default=LIST_ROOMS_LIMIT, metavar="N",
                   help=f"list at most N rooms, newest first (default {LIST_ROOMS_LIMIT}; "
                   "the server sends pages, read one after another)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the list; 1 with one line on stderr if the server cannot be asked."""
    from client_cli.sdk import RaceError

    try:
        rooms = asyncio.run(fetch(args.url, args.limit))
    except RaceError as exc:
        print(f"solrace rooms: {exc.message} ({exc.code})", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps([room_data(r) for r in rooms], indent=2))
    else:
        print(rooms_table(rooms))
        if len(rooms) >= args.limit:
            print(f"(the {args.limit} newest rooms; --limit N for more)")
    return 0


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


async def fetch(url: str, limit: int = LIST_ROOMS_LIMIT) -> list[Any]:
    """The server's public rooms, newest first, at most ``limit`` (read page by page)."""
    from client_cli.sdk import RaceClient

    async with RaceClient(url, "rooms", reconnect=False) as client:
        return await client.list_rooms(limit)


def room_data(room: Any) -> dict[str, Any]:
    """One room as plain data (long names, not wire keys)."""
    return {
        "code": room.code, "variant": room.variant, "options": room.options,
        "rank_by": room.rank_by, "phase": room.phase, "players": room.players,
        "max_players": room.max_players, "bots": room.bots, "spectators": room.spectators,
    }


def rooms_table(rooms: list[Any]) -> str:
    """The list as an aligned table (or a line saying there is none)."""
    if not rooms:
        return "no public rooms open (create one: solrace play URL --create VARIANT)"
    lines = [f"{'code':<10} {'variant':<13} {'rank':<8} {'phase':<9} {'seats':>5}  "
             f"{'bots':>4}  watch  options"]
    for r in rooms:
        options = ",".join(f"{k}={v}" for k, v in sorted(r.options.items())) or "-"
        seats = f"{r.players}/{r.max_players}"
        watch = "yes" if r.spectators else "no"
        lines.append(
            f"{r.code:<10} {r.variant:<13} {r.rank_by:<8} {r.phase:<9} {seats:>5}  "
            f"{r.bots:>4}  {watch:<5}  {options}"
        )
    return "\n".join(lines)
