"""The race clock: a time limit ends the race; spectators are kept behind by the delay."""

from __future__ import annotations

import time

from protocol import messages as m
from protocol.verify import verify_results
from server.app import Server

from .client import Board, TestClient, play_moves


def _first(legal: list[str]) -> str:
    return legal[0]


async def test_time_limit_ends_the_race(server: Server) -> None:
    one = await TestClient.connect(server.url, "one")
    two = await TestClient.connect(server.url, "two")
    joined = await one.create(variant="portuguese", countdown_s=0, time_limit_s=1)
    await two.join(joined.code)
    await one.send(m.Ready())
    await two.send(m.Ready())
    started = await one.expect(m.Started)
    await two.expect(m.Started)
    await play_moves(one, Board(started.boards[0].view), 3, _first)
    results = await one.expect(m.Results, wait=5)
    assert results.reason == "time"
    assert {e.status for e in results.ranking} == {"timeout"}
    assert time.time() * 1000 >= started.start_ms + 1000
    assert results.ranking[0].seat == 1 or results.ranking[0].progress == 0
    assert verify_results(results).problems == []
    late = await one.move("1>f")
    assert isinstance(late, m.Rejected) and late.code == "finished"


async def test_spectators_never_see_a_move_before_its_delay(server: Server) -> None:
    one = await TestClient.connect(server.url, "one")
    early = await TestClient.connect(server.url, "early")
    joined = await one.create(variant="brisbane", countdown_s=0, spectator_delay_s=1)
    await early.join(joined.code, role="spectator")
    await one.send(m.Ready())
    started = await one.expect(m.Started)
    board = Board(started.boards[0].view)
    played = await play_moves(one, board, 6, _first)
    # A spectator arriving now sees the board as of one second ago: no moves yet.
    late = await TestClient.connect(server.url, "late")
    late_joined = await late.join(joined.code, role="spectator")
    assert [b.seq for b in late_joined.boards] == [0]
    for watcher in (early, late):
        seen = Board(started.boards[0].view)
        for seq in range(1, played + 1):
            diff = await watcher.expect(m.Diff, wait=5)
            assert diff.seq == seq
            arrived = watcher.history[-1][0] if watcher.history[-1][1] is diff else next(
                t for t, msg in watcher.history if msg is diff)
            assert arrived >= started.start_ms + diff.clock_ms + 1000, (arrived, diff)
            seen.apply(diff.move, diff.revealed, diff.hash)
        assert seen.view == board.view
    await one.send(m.Resign())
    await early.expect(m.Results)
