"""``verify_results`` and ``solrace verify``: real results pass, every kind of tampering
is caught."""

from __future__ import annotations

import random
from pathlib import Path

import msgspec
import pytest

from client_cli.main import main
from protocol import encode
from protocol import messages as m
from protocol.verify import verify_results
from server.app import Server

from .client import Board, TestClient, play_moves


@pytest.fixture
async def results(server: Server) -> m.Results:
    one = await TestClient.connect(server.url, "one")
    two = await TestClient.connect(server.url, "two")
    joined = await one.create(variant="brisbane", countdown_s=0)
    await two.join(joined.code)
    await one.send(m.Ready())
    await two.send(m.Ready())
    boards = [Board((await c.expect(m.Started)).boards[0].view) for c in (one, two)]
    await play_moves(one, boards[0], 20, random.Random(3).choice)
    await play_moves(two, boards[1], 5, random.Random(4).choice)
    await one.send(m.Resign())
    await two.send(m.Resign())
    return await one.expect(m.Results)


def test_real_results_verify(results: m.Results) -> None:
    assert verify_results(results).problems == []
    for log in results.logs:  # the clocks that let anyone recompute the times
        assert len(log.clocks) == len(log.moves) and log.clocks == sorted(log.clocks)


def test_a_commitment_other_than_the_one_shown_before_the_race_fails(
        results: m.Results) -> None:
    check = verify_results(results, committed="0" * 64)
    assert not check.ok and not check.commitment_ok


def _tampered(results: m.Results, **changes: object) -> m.Results:
    return msgspec.structs.replace(results, **changes)


def test_tampering_is_caught(results: m.Results) -> None:
    cases = {
        "commitment": _tampered(results, seed=results.seed ^ 1),
        "salt": _tampered(results, salt="00" * 16),
        "illegal": _tampered(results, logs=[
            m.SeatLog(seat=results.logs[0].seat, moves=[*results.logs[0].moves, "1>1"],
                      clocks=[*results.logs[0].clocks, results.logs[0].clocks[-1]]),
            *results.logs[1:]]),
        "clock count": _tampered(results, logs=[
            msgspec.structs.replace(results.logs[0], clocks=results.logs[0].clocks[:-1]),
            *results.logs[1:]]),
        "clocks backwards": _tampered(results, logs=[
            msgspec.structs.replace(results.logs[0], clocks=results.logs[0].clocks[::-1]),
            *results.logs[1:]]),
        "progress time": _tampered(results, ranking=[
            msgspec.structs.replace(e, progress_ms=(e.progress_ms or 0) + 1)
            for e in results.ranking]),
        "moves reported": _tampered(results, ranking=[
            msgspec.structs.replace(results.ranking[0], moves=results.ranking[0].moves + 1),
            *results.ranking[1:]]),
        "won": _tampered(results, ranking=[
            msgspec.structs.replace(results.ranking[0], status="won"), *results.ranking[1:]]),
        "order": _tampered(results, ranking=[
            msgspec.structs.replace(e, rank=len(results.ranking) - i)
            for i, e in enumerate(results.ranking)]),
    }
    for name, bad in cases.items():
        assert verify_results(bad).problems, name


def test_the_cli_reads_json_and_msgpack(results: m.Results, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    as_json = tmp_path / "results.json"
    as_json.write_bytes(msgspec.json.encode(results))
    as_msgpack = tmp_path / "results.msgpack"
    as_msgpack.write_bytes(encode(results))
    for path in (as_json, as_msgpack):
        assert main(["verify", str(path)]) == 0
        assert "OK" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_bytes(msgspec.json.encode(_tampered(results, seed=results.seed ^ 1)))
    assert main(["verify", str(bad)]) == 1
    assert "MISMATCH" in capsys.readouterr().out
    junk = tmp_path / "junk"
    junk.write_bytes(b"\x00\x01")
    assert main(["verify", str(junk)]) == 1
    assert "not a results message" in capsys.readouterr().err
    assert main(["verify", str(tmp_path / "missing")]) == 1
