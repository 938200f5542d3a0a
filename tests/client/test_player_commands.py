"""The commands for players and bot authors: ``solrace rooms``, ``solrace replay``,
``solrace bot --offline`` and the example bot offline; the rules the package carries."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import engine
from client_cli.bots import GreedyBot
from client_cli.main import main
from client_cli.replay import Replay
from client_cli.rules import rules_markdown, variant_rules
from client_cli.sdk import RaceClient, play_offline, settings_from
from client_cli.tui.common import screen_text
from client_cli.tui.replay import ReplayApp

from .test_results_files import bot_race, run_bots

ROOT = Path(__file__).resolve().parents[2]


def run_main(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


async def finished_race(server, players: int = 2):  # type: ignore[no-untyped-def]
    """A Brisbane race of ``players`` greedy bots, run to its results (seen by a host)."""
    host, bots = await bot_race(server, players)
    await run_bots(bots)
    await host.wait_for(lambda r: r.results is not None, 10)
    for b in bots:
        await b.close()
    return host


async def test_rooms_lists_the_public_rooms(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server()
    host = RaceClient(server.url, "host")
    await host.connect()
    await host.create_room(settings_from("fortress", max_players=3,
                                         options={"foundation_takeback": True}))
    hidden = RaceClient(server.url, "quiet")
    await hidden.connect()
    await hidden.create_room(settings_from("spanish", public=False))
    status, out, err = await asyncio.to_thread(run_main, "rooms", server.url)
    assert status == 0, err
    rows = out.splitlines()
    assert rows[0].split()[:5] == ["code", "variant", "rank", "phase", "seats"]
    mine = next(r for r in rows if r.startswith(host.room.code))
    assert mine.split() == [host.room.code, "fortress", "time", "lobby", "1/3", "0", "yes",
                            "foundation_takeback=True"]
    assert hidden.room.code not in out
    status, out, _ = await asyncio.to_thread(run_main, "rooms", server.url, "--json")
    listed = {r["code"]: r for r in json.loads(out)}
    assert listed[host.room.code]["players"] == 1 and hidden.room.code not in listed
    await host.close()
    await hidden.close()


def test_rooms_on_a_dead_server_is_one_line() -> None:
    status, _, err = run_main("rooms", "ws://127.0.0.1:1")
    assert status == 1 and err.startswith("solrace rooms: ") and "Traceback" not in err


async def test_replay_rebuilds_every_board_from_the_results(start_server, tmp_path) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=4)
    host = await finished_race(server)
    results = host.room.results
    # The server's own final boards, as the spectator saw them: a second source.
    final = {seat: board.view for seat, board in host.room.boards.items()}
    replay = Replay(results)
    assert len(replay.timeline) == sum(len(log.moves) for log in results.logs)
    replay.seek_end()
    for seat, view in final.items():
        assert replay.games[seat].view() == view
    replay.reset()
    assert replay.advance_to(-1) == 0
    halfway = replay.end_ms // 2
    played = replay.advance_to(halfway)
    expected = sum(1 for log in results.logs for c in log.clocks if c <= halfway)
    assert played == expected

    # The screen, with a clock the test moves: nothing moves until time passes.
    now = [100.0]
    app = ReplayApp(results, speed=2.0, clock=lambda: now[0])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.replay.position == 0
        # At 2x, half the race takes a quarter of its time. Move clocks are whole ms, so
        # aim half a ms past the halfway mark: float rounding cannot cross a move's clock.
        now[0] += (halfway + 0.5) / 1000 / 2
        app._tick()
        assert app.replay.position == expected
        await pilot.press("e")
        await pilot.pause()
        text = screen_text(app)
        for entry in results.ranking:
            assert f"{entry.name}*  {entry.progress}/52 · {entry.moves} mv" in text
        assert "end of the race" in text
        await pilot.press("r", "space", "n")
        await pilot.pause()
        assert app.paused and app.replay.position == 1
        assert "at 00:" in screen_text(app)
    path = tmp_path / "race.json"
    from client_cli.results_file import save_results

    save_results(results, str(path))
    status, out, err = await asyncio.to_thread(run_main, "replay", str(path), "--plain")
    assert status == 0, err
    assert out.startswith(f"replay of room {results.code}: brisbane, seed 4")
    await host.close()


def test_replay_of_a_missing_file_is_one_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    status, _, err = run_main("replay", str(tmp_path / "nothing.json"))
    assert status == 1 and err.startswith("solrace replay: ")


def test_offline_bot_plays_the_servers_deal() -> None:
    outcome = play_offline(GreedyBot(1), "brisbane", 1)
    # Brisbane seed 1 is the deal the greedy strategy wins (the play tests race on it).
    assert outcome.status == "won" and outcome.progress == 52
    game = engine.new_game("brisbane", seed=1)  # a second source: replay with the engine
    for move in outcome.moves:
        game.play(move)
    assert game.won

    status, out, err = run_main("bot", "--offline", "--variant", "perseverance", "--seed", "9",
                                "--strategy", "random", "--json", "--option",
                                "redeal_when=any_time")
    assert status == 0, err
    data = json.loads(out)
    game = engine.new_game("perseverance", seed=9, redeal_when="any_time")
    for move in data["moves"]:
        game.play(move)
    assert data["progress"] == game.progress and data["options"] == {"redeal_when": "any_time"}
    assert data["status"] in {"won", "stuck", "resigned"}

    status, _, err = run_main("bot", "--offline", "--variant", "klondike")
    assert status == 2 and "klondike" in err


def test_the_example_runs_with_plain_python_offline(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``python examples/foundation_first.py`` from anywhere, with the Python the
    README's set-up installs solrace into and nothing else on the path."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "foundation_first.py"), "--offline",
         "spanish", "3"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    first, moves = proc.stdout.splitlines()[:2]
    game = engine.new_game("spanish", seed=3)
    for move in moves.split():
        game.play(move)
    assert first.endswith(f"{game.progress} cards in {len(moves.split())} moves")


def test_the_package_carries_the_rule_book() -> None:
    text = rules_markdown()
    assert text == (ROOT / "docs" / "RULES.md").read_text(encoding="utf-8")
    for variant in engine.VARIANTS:
        title, body = variant_rules(variant)
        assert title.endswith(variant) and "Move notation" in body
        assert "**" not in body and "`" not in body
    assert "build down by one rank in the same suit" in variant_rules("perseverance")[1]


@pytest.mark.parametrize(("flag", "value", "says"), [
    ("--handshake-burst", "0", "must be >= 1, not 0"),
    ("--handshakes-per-s", "0", "must be > 0, not 0"),
])
def test_serve_refuses_a_handshake_budget_that_admits_nobody(
    flag: str, value: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["serve", flag, value])
    assert exit_.value.code == 2  # argparse's usage error: nothing started
    assert says in capsys.readouterr().err
