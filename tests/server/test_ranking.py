"""The ranking (a pure function of seat records) and a real win, end to end."""

from __future__ import annotations

import pytest

import engine
from engine.solver.api import solve
from protocol import messages as m
from server.ranking import rank
from server.store import SeatRecord
from server.verify import verify_results

from .client import TestClient
from .conftest import ServerFactory


def _seat(n: int, status: str = "resigned", progress: int = 0, moves: int = 0,
          finish_ms: int | None = None, progress_ms: int | None = None) -> SeatRecord:
    return SeatRecord(seat=n, name=f"s{n}", status=status, progress=progress, moves=moves,
                      finish_ms=finish_ms, progress_ms=progress_ms)


def _order(entries: list[m.RankEntry]) -> list[tuple[int, int]]:
    return [(e.rank, e.seat) for e in entries]


def test_time_ranks_winners_by_finish_then_the_rest_by_progress() -> None:
    seats = [
        _seat(1, "resigned", 30, 80, progress_ms=9_000),
        _seat(2, "won", 52, 120, finish_ms=60_000, progress_ms=60_000),
        _seat(3, "won", 52, 100, finish_ms=50_000, progress_ms=50_000),
        _seat(4, "timeout", 30, 70, progress_ms=8_000),
        _seat(5, "stuck", 40, 90, progress_ms=20_000),
    ]
    assert _order(rank(seats, "time")) == [(1, 3), (2, 2), (3, 5), (4, 4), (5, 1)]


def test_progress_ranks_by_progress_then_time_then_moves() -> None:
    seats = [
        _seat(1, "won", 52, 120, finish_ms=60_000, progress_ms=60_000),
        _seat(2, "resigned", 52, 100, progress_ms=50_000),  # impossible but ranks by data
        _seat(3, "timeout", 20, 50, progress_ms=5_000),
        _seat(4, "timeout", 20, 40, progress_ms=5_000),
    ]
    assert _order(rank(seats, "progress")) == [(1, 2), (2, 1), (3, 4), (4, 3)]


def test_exact_ties_share_a_rank() -> None:
    seats = [_seat(1, progress=10, moves=5, progress_ms=100),
             _seat(2, progress=10, moves=5, progress_ms=100),
             _seat(3, progress=3, moves=5, progress_ms=100)]
    for by in ("time", "progress"):
        assert _order(rank(seats, by)) == [(1, 1), (1, 2), (3, 3)]


def test_no_progress_time_sorts_last() -> None:
    seats = [_seat(1, progress=0, moves=3), _seat(2, progress=0, moves=3, progress_ms=10)]
    assert _order(rank(seats, "progress")) == [(1, 2), (2, 1)]


@pytest.mark.parametrize("rank_by", ["time", "progress"])
async def test_a_won_race_ranks_the_winner_first(server_factory: ServerFactory,
                                                 rank_by: str) -> None:
    seed = 1  # a Portuguese deal the solver wins in well under a second
    solution = solve(engine.new_game("portuguese", seed=seed), max_nodes=200_000,
                     max_seconds=10)
    assert solution.verdict == "won"
    server = await server_factory(seed_source=lambda: seed, rate_burst=10_000,
                                  rate_per_s=10_000.0)
    one = await TestClient.connect(server.url, "winner")
    two = await TestClient.connect(server.url, "loser", bot=True)
    joined = await one.create(variant="portuguese", countdown_s=0, rank_by=rank_by)
    await two.join(joined.code)
    await one.send(m.Ready())
    await two.send(m.Ready())
    await one.expect(m.Started)
    for move in solution.moves:
        reply = await one.move(move)
        assert isinstance(reply, m.Accepted), reply
    late = await one.move(solution.moves[0])
    assert isinstance(late, m.Rejected) and late.code == "finished"
    progress = await two.expect(m.Progress)
    while progress.status != "won":
        progress = await two.expect(m.Progress)
    assert progress.progress == 52
    await two.send(m.Resign())
    results = await one.expect(m.Results)
    first, second = results.ranking
    assert (first.seat, first.status, first.rank) == (1, "won", 1)
    assert first.finish_ms is not None and first.moves == len(solution.moves)
    assert (second.seat, second.status, second.rank) == (2, "resigned", 2)
    assert verify_results(results) == []
    rankings = one.received(m.Ranking)
    assert rankings and rankings[-1].ranking[0].seat == 1
