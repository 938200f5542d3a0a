"""Capture the play and watch screens as text (80x24), headless, against a server started
in this process: the captures in docs/CLIENT.md come from here.

    python examples/capture_screens.py > /tmp/screens.txt
"""

from __future__ import annotations

import asyncio
import copy

from client_cli.bots import GreedyBot, RandomBot
from client_cli.sdk import RaceClient, play_bot, settings_from
from client_cli.tui.common import screen_text
from client_cli.tui.play import PlayApp
from client_cli.tui.watch import WatchApp
from server.app import Server
from server.config import ONE_HOST, ServerConfig

SEED = 1


def show(title: str, text: str) -> None:
    print(f"### {title}\n\n```text\n{text}\n```\n")


async def play_screens(server: Server, variant: str, moves: int) -> None:
    """The play screen for ``variant`` after ``moves`` greedy moves against one rival bot."""
    app = PlayApp(server.url, "alice", create=settings_from(variant, countdown_s=0, max_players=2))
    async with app.run_test(size=(80, 24)) as pilot:
        await app.client.wait_for(lambda r: bool(r.code), 10)
        rival = RaceClient(server.url, "greedy", bot=True)
        await rival.connect()
        await rival.join(app.client.room.code)
        await pilot.pause()
        if variant == "brisbane":
            show("play: the lobby", screen_text(app))
        await rival.ready()
        await pilot.press("y")
        await app.client.wait_for(lambda r: r.my_board is not None, 10)
        rival_task = asyncio.create_task(play_bot(rival, GreedyBot(7), think_s=0.02))
        bot = GreedyBot(1)
        bot.on_start(None)
        for _ in range(moves):
            board = app.client.room.my_board
            assert board is not None
            choice = bot.choose_move(copy.deepcopy(board.view), board.legal_moves())
            if choice is None:
                break
            await app.client.move(choice)
        src = next(i for i, p in enumerate(board.view["tableau"], 1) if p["up"])
        await pilot.press(str(src))  # a pile picked as the source
        await pilot.pause()
        show(f"play: {variant}, racing", screen_text(app))
        await pilot.press("escape", "x", "x")
        await app.client.wait_for(lambda r: r.results is not None, 30)
        await rival_task
        await pilot.pause()
        show(f"play: {variant}, results and seed check", screen_text(app))
        await rival.close()


async def watch_screen(server: Server) -> None:
    host = RaceClient(server.url, "host")
    await host.connect()
    await host.create_room(settings_from("brisbane", countdown_s=0, max_players=3),
                           as_player=False)
    bots = [RaceClient(server.url, name, bot=True) for name in ("greedy-1", "greedy-2", "random")]
    for b in bots:
        await b.connect()
        await b.join(host.room.code)
    app = WatchApp(server.url, host.room.code)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.client.wait_for(lambda r: r.code == host.room.code, 10)
        for b in bots:
            await b.ready()
        strategies = [GreedyBot(1), GreedyBot(2), RandomBot(3)]
        tasks = [asyncio.create_task(play_bot(b, s, think_s=0.01, max_moves=40))
                 for b, s in zip(bots, strategies, strict=True)]
        await app.client.wait_for(lambda r: sum(s.moves for s in r.seats.values()) >= 60, 30)
        await pilot.pause()
        show("watch: live", screen_text(app))
        await asyncio.gather(*tasks)
        await app.client.wait_for(lambda r: r.results is not None, 30)
        await pilot.pause()
        show("watch: results", screen_text(app))
    for c in [host, *bots]:
        await c.close()


async def main() -> None:
    server = Server(ServerConfig(host="127.0.0.1", port=0, rate_per_s=1000.0, rate_burst=1000,
                                 seed_source=lambda: SEED, **ONE_HOST))
    await server.start()
    try:
        await play_screens(server, "brisbane", 25)
        await play_screens(server, "portuguese", 20)
        await watch_screen(server)
    finally:
        await server.stop()


if __name__ == "__main__":
    asyncio.run(main())
