"""The commands users run: the example bot, ``solrace bot``, ``solrace demo --no-tui``,
``solrace watch`` (plain) and ``solrace bench`` — each against a real server."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path

import engine
from client_cli.sdk import RaceClient, settings_from
from client_cli.sdk.verify import check_results
from engine.solver import solve

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


async def run_cli(*args: str, within_s: float = 60) -> tuple[int, str, str]:
    """Run ``solrace ARGS`` (or a script) in a child process; (status, stdout, stderr)."""
    proc = await asyncio.create_subprocess_exec(
        *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=ENV, cwd=ROOT
    )
    out, err = await asyncio.wait_for(proc.communicate(), within_s)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def host_room(server, players: int) -> RaceClient:  # type: ignore[no-untyped-def]
    host = RaceClient(server.url, "host")
    await host.connect()
    await host.create_room(
        settings_from("brisbane", countdown_s=0, max_players=players), as_player=False
    )
    return host


async def test_the_example_bot_plays_a_race(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=1)
    host = await host_room(server, 1)
    status, out, err = await run_cli(
        sys.executable, "examples/foundation_first.py", server.url, host.room.code, "ff"
    )
    assert status == 0, err
    assert "cards in" in out
    await host.wait_for(lambda r: r.results is not None, 10)
    results = host.room.results
    assert results is not None and results.ranking[0].name == "ff" and results.ranking[0].bot
    assert check_results(results, host.room.commitment).ok
    await host.close()


async def test_solrace_bot_json(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=1)
    host = await host_room(server, 1)
    status, out, err = await run_cli(
        sys.executable,
        "-m",
        "client_cli.main",
        "bot",
        server.url,
        host.room.code,
        "--strategy",
        "greedy",
        "--json",
    )
    assert status == 0, err
    data = json.loads(out)
    assert data["bot"]["status"] == "won" and data["seed_check"]["ok"]
    await host.close()


async def test_solrace_bot_reports_a_bad_room(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server()
    status, _, err = await run_cli(
        sys.executable, "-m", "client_cli.main", "bot", server.url, "NOSUCH"
    )
    assert status == 1 and "no_such_room" in err and "Traceback" not in err


async def test_watch_plain_prints_progress_and_results(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=1)
    host = await host_room(server, 1)
    watcher = asyncio.create_task(
        run_cli(
            sys.executable, "-m", "client_cli.main", "watch", server.url, host.room.code, "--plain"
        )
    )
    # The watcher may join before, during or after the race: it prints the results anyway.
    status, _, err = await run_cli(
        sys.executable,
        "-m",
        "client_cli.main",
        "bot",
        server.url,
        host.room.code,
        "--think",
        "0.01",
    )
    assert status == 0, err
    w_status, w_out, w_err = await watcher
    assert w_status == 0, w_err
    assert "greedy-bot" in w_out and "seed check: PASSED" in w_out
    await host.close()


def test_demo_no_tui_prints_results_and_a_passing_seed_check() -> None:
    import subprocess

    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "client_cli.main",
            "demo",
            "--no-tui",
            "--bots",
            "3",
            "--speed",
            "20",
            "--seed",
            "1",
        ],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=ROOT,
        timeout=90,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Results of room" in out and "seed check: PASSED" in out
    assert "greedy-1*" in out and "random-2*" in out
    # Brisbane seed 1 is winnable: checked here by replaying a solution in the engine.
    solution = solve(engine.new_game("brisbane", 1)).moves
    replay = engine.new_game("brisbane", 1)
    for move in solution:
        replay.play(move)
    assert replay.won
    # Brisbane's foundations start empty, so any solution moves each of the 52 cards home
    # at least once: par is at least 52 (the demo's own solver run decides the figure).
    verdict = re.search(r"deal: winnable, par (\d+) moves", out)
    assert verdict is not None, out
    assert int(verdict.group(1)) >= 52
    assert "[00:" in out  # progress lines while it ran


def test_bench_embedded_reports_json() -> None:
    import subprocess

    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "client_cli.main",
            "bench",
            "--embedded",
            "--rooms",
            "2",
            "--bots-per-room",
            "2",
            "--duration",
            "2",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=ROOT,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["moves"] > 0 and report["moves_per_s"] > 0
    assert 0 < report["latency_ms"]["p50"] <= report["latency_ms"]["p99"]
    assert report["bytes_per_ack"] and report["bytes_per_diff"]
    assert report["errors"] == {}
    assert isinstance(report["server"], dict) and report["server"]["rss_mb"] > 0


def test_play_options_are_parsed_by_the_variant() -> None:
    import pytest

    import engine
    from client_cli.commands.play import parse_options

    assert parse_options("spanish", ["kings_to_bottom=off", "foundation_takeback=on"]) == {
        "kings_to_bottom": False,
        "foundation_takeback": True,
    }
    assert parse_options("perseverance", ["redeals=1", "redeal_when=any_time"]) == {
        "redeals": 1,
        "redeal_when": "any_time",
    }
    with pytest.raises(ValueError, match="has no option 'redeals'"):
        parse_options("brisbane", ["redeals=1"])
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_options("brisbane", ["empty_pile"])
    with pytest.raises(engine.EngineError):
        parse_options("brisbane", ["empty_pile=queen"])


def test_play_refuses_bad_settings_before_connecting() -> None:
    import subprocess

    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "client_cli.main",
            "play",
            "ws://127.0.0.1:9",
            "--create",
            "klondike",
        ],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=ROOT,
        timeout=30,
    )
    assert proc.returncode == 2 and "unknown variant" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bench_splits_rooms_over_generator_processes() -> None:
    import subprocess

    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "client_cli.main",
            "bench",
            "--embedded",
            "--rooms",
            "2",
            "--bots-per-room",
            "1",
            "--duration",
            "1.5",
            "--procs",
            "2",
            "--json",
            "--no-spectators",
        ],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=ROOT,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["procs"] == 2 and report["moves"] > 0 and report["races"] >= 2
    assert report["bytes_per_diff"] is None  # no spectators, no diffs
    assert "raw" not in report
