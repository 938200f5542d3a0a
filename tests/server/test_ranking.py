"""The ranking (a pure function of seat records) and a real win, end to end."""

from __future__ import annotations

import pytest

import engine
from protocol import messages as m
from protocol.ranking import rank
from protocol.verify import verify_results
from server.store import SeatRecord

from .client import TestClient
from .conftest import ServerFactory

# A winning line for Portuguese seed 7 (found once with engine.solver; fixed here so the
# test does not depend on the solver's speed).
_WIN_TEXT = (
    "5>f 12>6 12>f 12>f 2>7 2>f 12>f 9>13 9>f 7>2 10>5 10>12 10>f 10>8 6>12 6>10 6>f 4>10 "
    "7>4 11>2 3>11 3>4 3>f 7>f 7>f 3>10 8>2 8>9 6>8 4>6 4>10 4>12 9>6 4>6 4>f 9>10 9>f 11>f "
    "5>11 5>6 5>f 5>f 1>f 1>f 6>f 2>f 8>f 2>f 8>f 10>f 8>f 1>f 1>f 11>f 8>f 2>f 2>12 2>f "
    "11>f 6>f 6>f 6>f 6>f 12>f 13>f 13>f 13>f 13>f 11>7 11>f 10>f 10>f 12>f 12>f 7>f 10>f "
    "10>f 12>f 13>f 7>f"
)
WIN_SEED_7 = _WIN_TEXT.split()


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
    seed = 7
    game = engine.new_game("portuguese", seed=seed)
    for move in WIN_SEED_7:  # check the line still wins under the engine's rules
        game.play(move)
    assert game.won
    server = await server_factory(seed_source=lambda: seed, rate_burst=10_000,
                                  rate_per_s=10_000.0)
    one = await TestClient.connect(server.url, "winner")
    two = await TestClient.connect(server.url, "loser", bot=True)
    joined = await one.create(variant="portuguese", countdown_s=0, rank_by=rank_by)
    await two.join(joined.code)
    await one.send(m.Ready())
    await two.send(m.Ready())
    await one.expect(m.Started)
    for move in WIN_SEED_7:
        reply = await one.move(move)
        assert isinstance(reply, m.Accepted), reply
    late = await one.move(WIN_SEED_7[0])
    assert isinstance(late, m.Rejected) and late.code == "finished"
    progress = await two.expect(m.Progress)
    while progress.status != "won":
        progress = await two.expect(m.Progress)
    assert progress.progress == 52
    await two.send(m.Resign())
    results = await one.expect(m.Results)
    first, second = results.ranking
    assert (first.seat, first.status, first.rank) == (1, "won", 1)
    assert first.finish_ms is not None and first.moves == len(WIN_SEED_7)
    assert (second.seat, second.status, second.rank) == (2, "resigned", 2)
    assert verify_results(results).problems == []
    rankings = one.received(m.Ranking)
    assert rankings and rankings[-1].ranking[0].seat == 1


async def test_progress_time_is_when_a_progress_was_first_reached(
    server_factory: ServerFactory,
) -> None:
    """Spanish with takeback, seed 1: 5>f (progress 1), fS>7 (0), 7>f (1 again). The
    seat's progress_ms stays the time of the first 5>f. The clock is the test's."""
    now = [1_000_000]
    server = await server_factory(seed_source=lambda: 1, clock=lambda: now[0])
    one = await TestClient.connect(server.url, "one")
    await one.create(variant="spanish", options={"foundation_takeback": True}, countdown_s=0)
    await one.send(m.Ready())
    await one.expect(m.Started)
    clocks = []
    for move in ("5>f", "fS>7", "7>f"):
        if move == "7>f":  # the node rebuilds the seat from its log: the times too
            await one.close()
            one = await TestClient.connect(server.url, "one", token=one.token, seen=2)
            await one.expect(m.Joined)
            one.seq = 2
        now[0] += 5_000
        reply = await one.move(move)
        assert isinstance(reply, m.Accepted), reply
        clocks.append(reply.clock_ms)
    assert clocks == [5_000, 10_000, 15_000]
    await one.send(m.Resign())
    results = await one.expect(m.Results)
    (entry,) = results.ranking
    assert (entry.progress, entry.progress_ms, entry.moves) == (1, 5_000, 3)
    assert verify_results(results).problems == []
