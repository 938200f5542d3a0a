"""The watch screen at 80x24 against a real server, with two bots racing."""

from __future__ import annotations

import asyncio

import engine
from client_cli.bots import GreedyBot
from client_cli.sdk import RaceClient, play_bot, settings_from
from client_cli.tui.common import screen_text
from client_cli.tui.render import card_label
from client_cli.tui.watch import HIDDEN_NOTE, WatchApp

SEED = 1


async def test_watch_shows_every_board_live_then_results(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=SEED)
    creator = RaceClient(server.url, "host")
    await creator.connect()
    await creator.create_room(
        settings_from("brisbane", countdown_s=0, max_players=2), as_player=False
    )
    code = creator.room.code
    bots = [RaceClient(server.url, f"bot{i}", bot=True) for i in (1, 2)]
    for bot in bots:
        await bot.connect()
        await bot.join(code)

    app = WatchApp(server.url, code)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.client.wait_for(lambda r: r.code == code, 10)
        for bot in bots:
            await bot.ready()
        # Brisbane deals cards face down: while any racing seat has one, no board at all
        await app.client.wait_for(lambda r: r.phase == "running" and r.boards_hidden, 10)
        await pilot.pause()
        text = screen_text(app)
        lines = text.split("\n")
        assert len(lines) == 24 and all(len(line) <= 80 for line in lines)
        assert "bot1*" in text and "bot2*" in text and "spectating" in text
        assert HIDDEN_NOTE in text and "##" not in text and not app.client.room.boards
        layout = engine.new_game("brisbane", seed=SEED).to_layout()
        for pile in layout["tableau"]:
            for code_down in pile["down"]:
                assert card_label(code_down) not in text

        # the bots race; the boards arrive (Snapshots) once no racing seat hides a card,
        # at the latest with the results, and match every move (hash-checked)
        outcomes = await asyncio.gather(
            play_bot(bots[0], GreedyBot(1)), play_bot(bots[1], GreedyBot(2))
        )
        await app.client.wait_for(lambda r: r.results is not None and len(r.boards) == 2, 20)
        await pilot.pause()
        room = app.client.room
        for outcome in outcomes:
            board = room.boards[outcome.seat]
            assert not board.desynced and board.seq == outcome.moves
        text = screen_text(app)
        assert "Results" in text and "✓ seed check passed" in text
        await pilot.press("q")
    assert app.return_value == 0
    for client in [creator, *bots]:
        await client.close()


async def test_the_demo_screen_runs_a_race_to_the_results() -> None:
    from client_cli.commands.demo import demo_app, start_race, stop_race

    race = await start_race("perseverance", 3, seed=2, time_limit=30, countdown=0)
    try:
        app = demo_app(race, think_s=0.0, close_after_s=0.5)
        exited = asyncio.Event()
        real_exit = app.exit

        def exit_and_tell(*args, **kwargs):  # type: ignore[no-untyped-def]
            exited.set()
            real_exit(*args, **kwargs)

        app.exit = exit_and_tell  # type: ignore[method-assign]
        async with app.run_test(size=(80, 24)) as pilot:
            await race.spectator.wait_for(lambda r: r.results is not None, 30)
            await pilot.pause()
            text = screen_text(app)
            assert "Results" in text and "✓ seed check passed" in text
            assert "greedy-1*" in text and "random-2*" in text
            await asyncio.wait_for(exited.wait(), 10)  # it closes by itself after the results
        assert app.return_value == 0
        assert len(race.outcomes) == 3
    finally:
        await stop_race(race)
