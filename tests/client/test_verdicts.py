"""The deal's verdict reaches every client: the server sends ``Verdict`` when the solver
decides after the results went out, and the SDK folds it into the room's results, so
the terminal screens, ``watch --plain`` and ``--save-results`` say whether the deal was
winnable. Fortress seed 12345 deals no legal move (checked below with the engine): the
race finishes the moment it starts, before the solver has a say."""

from __future__ import annotations

import asyncio
from multiprocessing import resource_tracker

import engine
from client_cli.commands.watch import watch_plain
from client_cli.results_file import read_results
from client_cli.sdk import RaceClient, RoomState, settings_from
from client_cli.sdk.verify import deal_verdict
from client_cli.tui.play import PlayApp
from protocol import messages as M
from protocol.verify import verify_results

from .test_tui_defects import rows
from .test_tui_play import SIZE

NO_MOVE_SEED = 12345
SLOW_SOLVER_S = 60  # a loaded machine may take long to spawn the solver's process


def _results(code: str, winnable: bool | None = None) -> M.Results:
    return M.Results(code=code, variant="fortress", options={}, rank_by="time", seed=1,
                     salt="00", commitment="aa", ranking=[], logs=[], reason="all_done",
                     winnable=winnable)


def _joined(code: str) -> M.Joined:
    return M.Joined(code=code, settings=settings_from("fortress"), phase="running", seat=1,
                    commitment="aa", seats=[M.SeatInfo(seat=1, name="ann")])


def test_a_verdict_after_the_results_is_folded_into_them() -> None:
    room = RoomState()
    room.update(_joined("R1"))
    room.update(_results("R1"))
    assert room.results is not None and room.results.winnable is None
    room.update(M.Verdict(code="R2", winnable=True, par=9))  # another room's: ignored
    assert room.results.winnable is None
    room.update(M.Verdict(code="R1", winnable=False))
    assert room.results.winnable is False and room.results.par is None
    assert deal_verdict(room.results).startswith("deal: not winnable")


def test_a_verdict_before_the_results_waits_for_them() -> None:
    room = RoomState()
    room.update(_joined("R1"))
    room.update(M.Verdict(code="R1", winnable=True, par=31))
    assert room.results is None
    room.update(_results("R1"))
    assert room.results is not None
    assert (room.results.winnable, room.results.par) == (True, 31)
    assert deal_verdict(room.results) == "deal: winnable, par 31 moves"


def test_the_seed_deals_no_move() -> None:
    game = engine.new_game("fortress", seed=NO_MOVE_SEED)
    assert game.stuck and not game.legal_moves()


async def test_watch_plain_prints_and_saves_the_verdict(start_server, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=NO_MOVE_SEED)
    host = RaceClient(server.url, "host")
    await host.connect()
    await host.create_room(settings_from("fortress", countdown_s=0))
    saved = tmp_path / "watched.json"
    joined = asyncio.Event()
    watcher = asyncio.create_task(watch_plain(
        server.url, host.room.code, save_to=str(saved), joined=joined,
        verdict_wait_s=SLOW_SOLVER_S))
    await asyncio.wait_for(joined.wait(), 10)
    await host.ready()
    assert await watcher == 0
    out = capsys.readouterr().out
    assert "deal: not winnable" in out
    results = read_results(saved.read_bytes())
    assert results.winnable is False and results.par is None
    assert verify_results(results).problems == []
    # the player's own SDK session folds the same verdict in
    await host.wait_for(lambda r: r.results is not None, 10)
    assert (await host.wait_for_verdict(SLOW_SOLVER_S)).winnable is False  # type: ignore[union-attr]
    await host.close()


async def test_the_play_screen_shows_and_saves_the_verdict(start_server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The server runs in this process, and Textual's test harness replaces stderr, which
    # multiprocessing's resource tracker hands to its process: start it before the app
    # (a real `solrace play` has no server inside it).
    resource_tracker.ensure_running()
    server = await start_server(seed=NO_MOVE_SEED)
    saved = tmp_path / "played.msgpack"
    app = PlayApp(server.url, "ann", create=settings_from("fortress", countdown_s=0),
                  save_results=str(saved))
    async with app.run_test(size=SIZE) as pilot:
        await app.client.wait_for(lambda r: bool(r.code), 10)
        await pilot.press("y")  # ready: the race starts and ends at once (no move)
        await app.client.wait_for(
            lambda r: r.results is not None and r.results.winnable is not None, SLOW_SOLVER_S)
        await pilot.pause()
        screen = "\n".join(rows(app))
        assert "deal: not winnable" in screen
    results = read_results(saved.read_bytes())
    assert results.winnable is False
    assert verify_results(results).problems == []
