"""A results file saved by each client verifies: ``--save-results`` of play, watch, bot
and demo (.json and .msgpack), and what ``--json`` prints, all read by ``solrace verify``
(and ``solrace replay``). Every race here is real: a server in this process, bots and
spectators over websockets."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import sys
from pathlib import Path

import msgspec
import pytest

from client_cli.bots import GreedyBot
from client_cli.commands.watch import watch_plain
from client_cli.main import main
from client_cli.results_file import read_results, save_results
from client_cli.sdk import RaceClient, play_bot, settings_from
from client_cli.tui.play import PlayApp
from protocol import messages as M

from .test_commands import run_cli

SIZE = (80, 24)


def assert_verify(*paths: Path) -> list[str]:
    """Each file passes ``solrace verify``; what it printed for each."""
    printed = []
    for path in paths:
        status, out = verify(path)
        assert status == 0, out
        printed.append(out)
    return printed


def verify(path: Path) -> tuple[int, str]:
    """``solrace verify PATH``: its status and what it printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        status = main(["verify", str(path)])
    return status, out.getvalue()


async def bot_race(server, players: int = 1, seats: int = 0) -> tuple[RaceClient, list[RaceClient]]:  # type: ignore[no-untyped-def]
    """A room (``seats`` seats, default ``players``) watched by its host, with ``players``
    bots seated (not ready yet)."""
    host = RaceClient(server.url, "host")
    await host.connect()
    await host.create_room(
        settings_from("brisbane", countdown_s=0, max_players=seats or players), as_player=False
    )
    bots = []
    for i in range(players):
        bot = RaceClient(server.url, f"greedy-{i}", bot=True)
        await bot.connect()
        await bot.join(host.room.code)
        bots.append(bot)
    return host, bots


async def run_bots(bots: list[RaceClient]) -> None:
    for b in bots:
        await b.ready()
    await asyncio.gather(*(play_bot(b, GreedyBot(i), max_moves=120) for i, b in enumerate(bots)))


@pytest.mark.parametrize("suffix", [".json", ".msgpack"])
async def test_play_saves_results_that_verify(start_server, tmp_path, suffix) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=1)
    path = tmp_path / f"race{suffix}"
    app = PlayApp(server.url, "tester", create=settings_from("brisbane", countdown_s=0),
                  save_results=str(path))
    async with app.run_test(size=SIZE) as pilot:
        await app.client.wait_for(lambda r: bool(r.code), 10)
        await pilot.press("y")
        await app.client.wait_for(lambda r: r.my_board is not None, 10)
        await app.client.move(app.client.room.my_board.legal_moves()[0])
        await pilot.press("x", "x")
        await app.client.wait_for(lambda r: r.results is not None, 10)
        await pilot.pause()
    status, out = verify(path)
    assert status == 0, out
    assert out.startswith(f"OK: race {app.client.room.code} (brisbane, seed 1)")
    assert "1 move(s) replayed" in out
    # The file holds the message as received: equal to the client's copy.
    assert read_results(path.read_bytes()) == app.client.room.results


async def test_watch_saves_results_and_its_json_verifies(start_server, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=1)
    host, bots = await bot_race(server, 2)
    saved = tmp_path / "watched.msgpack"
    joined = asyncio.Event()
    watcher = asyncio.create_task(
        watch_plain(server.url, host.room.code, as_json=True, save_to=str(saved), joined=joined)
    )
    await asyncio.wait_for(joined.wait(), 10)
    await run_bots(bots)
    assert await watcher == 0
    printed = tmp_path / "watch-output.json"
    printed.write_text(capsys.readouterr().out)
    assert all("2 seat(s)" in out for out in assert_verify(saved, printed))
    for c in [host, *bots]:
        await c.close()


async def test_bot_saves_results_and_its_json_verifies(start_server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=1)
    host, _ = await bot_race(server, 0, seats=1)
    saved = tmp_path / "bot.json"
    status, out, err = await run_cli(
        sys.executable, "-m", "client_cli.main", "bot", server.url, host.room.code,
        "--json", "--max-moves", "60", "--save-results", str(saved),
    )
    assert status == 0, err
    printed = tmp_path / "bot-output.json"
    printed.write_text(out)
    assert_verify(saved, printed)
    assert json.loads(out)["bot"]["moves"] <= 60
    await host.close()


def test_demo_saves_results_and_its_json_verifies(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    saved = tmp_path / "demo.json"
    status = main(["demo", "--json", "--seed", "3", "--bots", "2", "--speed", "50",
                   "--save-results", str(saved)])
    assert status == 0
    printed = tmp_path / "demo-output.json"
    printed.write_text(capsys.readouterr().out)
    assert all("(brisbane, seed 3)" in out for out in assert_verify(saved, printed))


def test_verify_refuses_a_tampered_file_and_a_wrong_shape(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The same reader that accepts the saved shapes refuses what is not a results
    message, and a changed log fails the check (a second source: the engine's replay)."""
    results = M.Results(
        code="ABCDEF", variant="brisbane", options={}, rank_by="time", seed=1, salt="00",
        commitment="00", ranking=[], logs=[], reason="all_done",
    )
    path = tmp_path / "bad.json"
    save_results(results, str(path))
    status, out = verify(path)
    assert status == 1 and "MISMATCH" in out  # salt and commitment do not match
    path.write_text(json.dumps({"results": None, "seed_check": {}}))
    status, out = verify(path)
    assert status == 1 and "had not finished" in out
    path.write_bytes(msgspec.msgpack.encode({"t": "pong", "ts": 1}))
    status, out = verify(path)
    assert status == 1 and "not a results message" in out


def test_save_results_refuses_other_suffixes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    status = main(["demo", "--save-results", str(tmp_path / "race.txt")])
    assert status == 2
