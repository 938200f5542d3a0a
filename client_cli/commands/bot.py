"""``solrace bot URL CODE``: join a room with a bot strategy and play until the race ends.
``solrace bot --offline --variant V --seed N``: the same bot on a deal in this process."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from client_cli import results_file


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``bot`` subcommand."""
    from client_cli.bots import STRATEGIES

    p = subparsers.add_parser(
        "bot",
        help="play a room with a bot strategy (or a deal offline)",
        description="Join room CODE on the server at URL as a bot (bots always say so), "
        "say ready, play until the race is over, then print the results and the seed check. "
        "With --offline, play the deal of --variant and --seed in this process instead "
        "(no server) and print the outcome and every move.",
    )
    p.add_argument("url", nargs="?", help="server URL, e.g. ws://127.0.0.1:8765")
    p.add_argument("code", nargs="?", help="the room code")
    p.add_argument(
        "--strategy",
        default="greedy",
        choices=sorted(STRATEGIES),
        help="how the bot plays (default %(default)s)",
    )
    p.add_argument(
        "--name",
        help="player name (default: the strategy's name); with a name, a bot killed "
        "mid-race takes its seat back when started again with the same name",
    )
    p.add_argument(
        "--seed",
        type=int,
        help="seed of the bot's own random choices; with --offline, also the deal's seed",
    )
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
    results_file.add_argument(p)
    p.add_argument("--offline", action="store_true", help="play a deal here, without a server")
    p.add_argument("--variant", default="brisbane", help="(offline) the variant to deal")
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="K=V",
        help="(offline) a variant option, e.g. redeal_when=any_time (repeatable)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Play; 0 when the race finished and the seed check passed (offline: 0 once the game
    is over, whatever its outcome)."""
    if args.offline:
        return run_offline(args)
    if not args.url or not args.code:
        print("solrace bot: give URL and CODE (or --offline)", file=sys.stderr)
        return 2
    if results_file.path_refused("bot", args.save_results):
        return 2
    return asyncio.run(_run(args))


def run_offline(args: argparse.Namespace) -> int:
    """``--offline``: deal, play, print the outcome and the moves."""
    import engine
    from client_cli.bots import make_bot
    from client_cli.commands.play import parse_options
    from client_cli.sdk.offline import play_offline

    seed = 0 if args.seed is None else args.seed
    try:
        options = parse_options(args.variant, args.option)
        outcome = play_offline(
            make_bot(args.strategy, seed), args.variant, seed, options, max_moves=args.max_moves
        )
    except (ValueError, engine.EngineError) as exc:
        print(f"solrace bot: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({
            "variant": outcome.variant, "seed": outcome.seed, "options": outcome.options,
            "strategy": args.strategy, "status": outcome.status,
            "progress": outcome.progress, "moves": outcome.moves, "refused": outcome.refused,
        }, indent=2))
        return 0
    print(f"{args.strategy} on {outcome.variant}, seed {outcome.seed}: {outcome.status}, "
          f"{outcome.progress}/52 cards in {len(outcome.moves)} moves")
    if outcome.refused is not None:
        print(f"the bot chose {outcome.refused!r}, which is not a legal move")
    for start in range(0, len(outcome.moves), 16):
        print("  " + " ".join(outcome.moves[start : start + 16]))
    return 0


async def _run(args: argparse.Namespace) -> int:
    from client_cli.bots import make_bot
    from client_cli.sdk import RaceError, play_bot

    bot = make_bot(args.strategy, args.seed)
    name = args.name or f"{args.strategy}-bot"
    remember = args.name is not None  # a default name may be shared by several bots
    try:
        client, resumed = await _seat(args.url, args.code, name, remember)
    except RaceError as exc:
        print(f"solrace bot: {exc.message} ({exc.code})", file=sys.stderr)
        return 1
    try:
        if not args.json:
            how = "took back seat" if resumed else "joined room"
            print(f"{how} {client.room.seat} of room {client.room.code} as {name} "
                  f"({args.strategy})", flush=True)
        if client.room.phase == "lobby":
            await client.ready()
        outcome = await play_bot(
            client, bot, max_moves=args.max_moves, think_s=args.think, results_timeout=None
        )
        await client.wait_for_verdict()  # printed and saved with the results
    except RaceError as exc:
        print(f"solrace bot: {exc.message} ({exc.code})", file=sys.stderr)
        return 1
    finally:
        await client.close()
    return _report(args, name, client.room, outcome)


async def _seat(url: str, code: str, name: str, remember: bool) -> tuple[Any, bool]:
    """A connected bot client in room ``code``: its own seat taken back when a token for
    (url, code, name) was kept, else a new seat. The token is kept for next time."""
    from client_cli.sdk import RaceClient, RaceError
    from client_cli.tokens import forget_token, load_token, save_token
    from protocol import Code

    token = load_token(url, code, name) if remember else None
    client = RaceClient(url, name, bot=True)
    resumed = False
    if token is not None:
        try:
            await client.resume(token)
            resumed = True
        except RaceError as exc:
            forget_token(url, code, name)
            if exc.code != Code.BAD_TOKEN:
                raise
            client = RaceClient(url, name, bot=True)
    # Names are unique in a room: a bot with the default name (several may share it)
    # takes the first of name, name-2, name-3, ... that is free.
    tries = [name] if remember else [name] + [f"{name}-{i}" for i in range(2, 10)]
    for attempt, candidate in enumerate(tries):
        if resumed:
            break
        client = client if attempt == 0 else RaceClient(url, candidate, bot=True)
        await client.connect()
        try:
            await client.join(code, "player")
            break
        except RaceError as exc:
            await client.close()
            if exc.code != Code.NAME_TAKEN or candidate == tries[-1]:
                raise
    if remember and client.room.token:
        save_token(url, client.room.code, name, client.room.token)
    return client, resumed


def _report(args: argparse.Namespace, name: str, room: Any, outcome: Any) -> int:
    from client_cli.results_file import save_results
    from client_cli.tokens import forget_token
    from client_cli.tui.plain import results_json, results_text

    if room.results is not None:
        forget_token(args.url, args.code, name)
        if args.save_results:
            save_results(room.results, args.save_results)
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
    if args.save_results and room.results is not None:
        print(f"results saved to {args.save_results}")
    return 0 if check is not None and check.ok else 1
