"""``solrace demo``: a whole race on this machine in one command.

It starts a server in this process (127.0.0.1, a free port, the in-memory store), opens a
room as a spectator, lets several bots with different strategies race on the same deal
while the spectator view shows it (full screen on a terminal; progress lines otherwise
or with ``--no-tui``), then prints the ranking and the seed check and exits 0 when the
check passed. The race is bounded by a time limit, so the demo always ends.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import dataclass, field
from typing import Any

from client_cli import results_file

DEFAULT_STRATEGIES = ["greedy", "random", "greedy", "solver"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``demo`` subcommand."""
    p = subparsers.add_parser(
        "demo",
        help="watch bots race (embedded server, no setup)",
        description="Start an embedded server, let bots with different strategies race on "
        "one deal while you watch, then print the results and the seed check.",
    )
    p.add_argument(
        "--variant",
        default="brisbane",
        help="portuguese, spanish, brisbane, fortress or perseverance (default %(default)s)",
    )
    p.add_argument("--bots", type=int, default=3, metavar="N", help="bots (default 3, max 8)")
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="fix the deal (and the bots' choices): the same seed replays the same race "
        "(default: a secret random deal)",
    )
    p.add_argument("--no-tui", action="store_true", help="progress lines instead of the view")
    p.add_argument(
        "--speed",
        type=float,
        default=1.0,
        metavar="X",
        help="play X times faster (default 1: about ten moves a second a bot)",
    )
    p.add_argument(
        "--time-limit",
        type=int,
        default=45,
        metavar="S",
        help="the race's time limit (default %(default)s s)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the results as JSON, no view (solrace verify reads it)",
    )
    results_file.add_argument(p)
    p.set_defaults(func=run)


@dataclass
class DemoRace:
    """A race being set up or run: the embedded server, the spectator and the bots."""

    server: Any
    spectator: Any
    players: list[tuple[Any, Any, str]] = field(default_factory=list)  # (client, bot, strategy)
    outcomes: list[Any] = field(default_factory=list)


def strategies_for(count: int) -> list[str]:
    """``count`` strategy names, cycling through the registered ones in demo order."""
    from client_cli.bots import STRATEGIES

    names = [s for s in DEFAULT_STRATEGIES if s in STRATEGIES]
    return [names[i % len(names)] for i in range(count)]


async def start_race(
    variant: str, bots: int, seed: int | None, time_limit: int, countdown: int
) -> DemoRace:
    """Start the embedded server (dealing ``seed`` if given), create the room (watching),
    seat the bots (not ready yet: readying one by one could start the race before
    everyone is in)."""
    from client_cli.bots import make_bot
    from client_cli.sdk import RaceClient, settings_from
    from server.app import Server
    from server.config import ONE_HOST, ServerConfig

    # The server is ours: a generous rate so a fast demo is limited by --speed only.
    # A fixed seed is fine here: this server is private to the demo (a public server must
    # keep seeds unguessable).
    fixed = None if seed is None else (lambda: seed)
    server = Server(ServerConfig(host="127.0.0.1", port=0, rate_per_s=500.0, rate_burst=500,
                                 seed_source=fixed, **ONE_HOST))
    await server.start()
    settings = settings_from(
        variant, max_players=bots, time_limit_s=time_limit, countdown_s=countdown
    )
    spectator = RaceClient(server.url, "demo")
    race = DemoRace(server, spectator)
    try:
        await spectator.connect()
        await spectator.create_room(settings, as_player=False)
        for i, strategy in enumerate(strategies_for(bots)):
            client = RaceClient(server.url, f"{strategy}-{i + 1}", bot=True)
            await client.connect()
            await client.join(spectator.room.code, "player")
            bot_seed = None if seed is None else seed * 100 + i
            race.players.append((client, make_bot(strategy, bot_seed), strategy))
    except BaseException:
        await stop_race(race)
        raise
    return race


async def play_race(race: DemoRace, think_s: float) -> list[Any]:
    """Every bot says ready, then all play at once until the race is over."""
    from client_cli.sdk import play_bot

    for client, _, _ in race.players:
        await client.ready()
    # A random bot wanders: cap its moves so the race ends well before the time limit.
    caps = {"random": 200}
    race.outcomes = list(
        await asyncio.gather(
            *(
                play_bot(client, bot, think_s=think_s, max_moves=caps.get(strategy, 1500))
                for client, bot, strategy in race.players
            )
        )
    )
    return race.outcomes


async def stop_race(race: DemoRace) -> None:
    """Close every client, then the server."""
    for client, _, _ in race.players:
        await client.close()
    await race.spectator.close()
    await race.server.stop()


def run(args: argparse.Namespace) -> int:
    """Run the demo; 0 when the race finished and the seed check passed."""
    import engine

    if args.variant not in engine.VARIANTS:
        print(
            f"solrace demo: unknown variant {args.variant!r}; choose one of "
            f"{', '.join(engine.VARIANTS)}",
            file=sys.stderr,
        )
        return 2
    if not 1 <= args.bots <= 8:
        print("solrace demo: --bots takes 1 to 8", file=sys.stderr)
        return 2
    if args.speed <= 0:
        print("solrace demo: --speed must be positive", file=sys.stderr)
        return 2
    if results_file.path_refused("demo", args.save_results):
        return 2
    tui = not (args.no_tui or args.json) and sys.stdout.isatty()
    return asyncio.run(_tui(args) if tui else _plain(args))


def _think(args: argparse.Namespace) -> float:
    return 0.1 / float(args.speed)


async def _plain(args: argparse.Namespace) -> int:
    from client_cli.tui.plain import progress_line, results_json, results_text

    def say(line: str) -> None:
        if not args.json:
            print(line, flush=True)

    say(f"solrace demo: {args.bots} bots race on {args.variant} (embedded server)")
    race = await start_race(args.variant, args.bots, args.seed, args.time_limit, countdown=0)
    try:
        room = race.spectator.room
        say(f"server {race.server.url} · room {room.code} · commitment {room.commitment[:16]}…")
        bots = asyncio.create_task(play_race(race, _think(args)))
        while not bots.done() or room.results is None:
            if room.phase == "running":
                say(progress_line(room))
            try:
                await race.spectator.wait_for(lambda r: r.results is not None, 1.0)
            except TimeoutError:
                continue
            await bots
        await race.spectator.wait_for_verdict()  # printed and saved with the results
        _save(args, room)
        if args.json:
            print(json.dumps(results_json(room, room.commitment), indent=2))
            return 0
        say(progress_line(room))
        if args.save_results:
            print(f"results saved to {args.save_results}")
        text, check = results_text(room, room.commitment)
        print(text)
        return 0 if check is not None and check.ok else 1
    finally:
        await stop_race(race)


def _save(args: argparse.Namespace, room: Any) -> None:
    """``--save-results``: the results as the spectator received them."""
    from client_cli.results_file import save_results

    if args.save_results and room.results is not None:
        save_results(room.results, args.save_results)
        if not args.json:
            print(f"results saved to {args.save_results}")


def demo_app(
    race: DemoRace, think_s: float, close_after_s: float = 5.0, save_results: str | None = None
) -> Any:
    """The spectator screen for the demo: the bots race in the app's background."""
    from client_cli.tui.watch import WatchApp

    return WatchApp(
        race.server.url,
        race.spectator.room.code,
        client=race.spectator,
        background=lambda: play_race(race, think_s),
        exit_after_results_s=close_after_s,
        save_results=save_results,
    )


async def _tui(args: argparse.Namespace) -> int:
    from client_cli.tui.plain import results_text

    race = await start_race(args.variant, args.bots, args.seed, args.time_limit, countdown=2)
    try:
        room = race.spectator.room
        await demo_app(race, _think(args), save_results=args.save_results).run_async()
        if room.results is None:
            print("demo stopped before the end of the race")
            return 1
        text, check = results_text(room, room.commitment)
        print(text)
        return 0 if check is not None and check.ok else 1
    finally:
        await stop_race(race)
