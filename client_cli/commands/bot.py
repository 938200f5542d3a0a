"""``solrace bot URL CODE``: join a room with a bot strategy and play until the race ends."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``bot`` subcommand."""
    from client_cli.bots import STRATEGIES

    p = subparsers.add_parser(
        "bot",
        help="play a room with a bot strategy",
        description="Join room CODE on the server at URL as a bot (bots always say so), "
        "say ready, play until the race is over, then print the results and the seed check.",
    )
    p.add_argument("url", help="server URL, e.g. ws://127.0.0.1:8765")
    p.add_argument("code", help="the room code")
    p.add_argument(
        "--strategy",
        default="greedy",
        choices=sorted(STRATEGIES),
        help="how the bot plays (default %(default)s)",
    )
    p.add_argument("--name", help="player name (default: the strategy's name)")
    p.add_argument("--seed", type=int, help="seed of the bot's own random choices")
    p.add_argument(
        "--think",
        type=float,
        default=0.0,
        metavar="S",
        help="pause S seconds between moves (default 0)",
    )
    p.add_argument(
        "--max-moves",
        type=int,
        default=3000,
        help="resign after this many moves (default %(default)s)",
    )
    p.add_argument("--json", action="store_true", help="print the outcome as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Play; 0 when the race finished and the seed check passed."""
    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    from client_cli.bots import make_bot
    from client_cli.sdk import RaceClient, RaceError, play_bot
    from client_cli.tui.plain import results_json, results_text

    bot = make_bot(args.strategy, args.seed)
    name = args.name or f"{args.strategy}-bot"
    client = RaceClient(args.url, name, bot=True)
    try:
        await client.connect()
        await client.join(args.code, "player")
        if not args.json:
            print(
                f"joined room {args.code} as seat {client.room.seat} ({args.strategy})", flush=True
            )
        await client.ready()
        outcome = await play_bot(
            client, bot, max_moves=args.max_moves, think_s=args.think, results_timeout=None
        )
    except RaceError as exc:
        print(f"solrace bot: {exc.message} ({exc.code})", file=sys.stderr)
        return 1
    finally:
        await client.close()
    room = client.room
    if args.json:
        data = results_json(room, room.commitment)
        data["bot"] = {
            "seat": outcome.seat,
            "status": outcome.status,
            "progress": outcome.progress,
            "moves": outcome.moves,
            "rejected": outcome.rejected,
        }
        print(json.dumps(data, indent=2))
        return 0 if data.get("seed_check", {}).get("ok") else 1
    print(f"{name}: {outcome.status}, {outcome.progress} cards in {outcome.moves} moves")
    text, check = results_text(room, room.commitment)
    print(text)
    return 0 if check is not None and check.ok else 1
