"""The race clock: a time limit ends the race; spectators are kept behind by the delay."""

from __future__ import annotations

from protocol import messages as m
from protocol.verify import verify_results
from server.app import Server

from .client import Board, TestClient, play_moves


def _first(legal: list[str]) -> str:
    return legal[0]


def _foundation_first(legal: list[str]) -> str:
    return next((mv for mv in legal if mv.endswith(">f")), legal[0])


async def test_time_limit_ends_the_race(server: Server) -> None:
    one = await TestClient.connect(server.url, "one")
    two = await TestClient.connect(server.url, "two")
    joined = await one.create(variant="portuguese", countdown_s=0, time_limit_s=1,
                              rank_by="progress")
    await two.join(joined.code)
    await one.send(m.Ready())
    await two.send(m.Ready())
    started = await one.expect(m.Started)
    await two.expect(m.Started)
    played = await play_moves(one, Board(started.boards[0].view), 3, _foundation_first)
    results = await one.expect(m.Results, wait=5)
    assert results.reason == "time"
    assert {e.status for e in results.ranking} == {"timeout"}
    logs = {log.seat: log for log in results.logs}
    assert len(logs[1].moves) == played and logs[2].moves == []
    # The server's race clock: every move was accepted before the limit (1000 ms).
    assert all(0 <= clock < 1000 for clock in logs[1].clocks)
    # Progress by a second method: Portuguese foundations start empty and have no
    # takeback by default, so a seat's progress is its count of moves onto a foundation.
    by_hand = {seat: sum(mv.endswith(">f") for mv in log.moves) for seat, log in logs.items()}
    assert {e.seat: e.progress for e in results.ranking} == by_hand
    if by_hand[1] > by_hand[2]:
        assert [e.seat for e in results.ranking] == [1, 2]
    assert [e.rank for e in results.ranking] == sorted(e.rank for e in results.ranking)
    assert verify_results(results).problems == []
    late = await one.move("1>f")
    assert isinstance(late, m.Rejected) and late.code == "finished"


async def test_spectators_never_see_a_move_before_its_delay(server: Server) -> None:
    one = await TestClient.connect(server.url, "one")
    early = await TestClient.connect(server.url, "early")
    # Spanish deals no card face down: spectators get boards while the seat races (in
    # Brisbane they would get none: the room-wide hidden-information rule).
    joined = await one.create(variant="spanish", countdown_s=0, spectator_delay_s=1)
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
