"""The results of a long race, built from ``Store.read_logs`` in slices, are the same
bytes as the results built the way the server built them before (every seat's log read
with ``read_log`` and checked with ``protocol.ranking.bot_like`` in one go), on every
backend; and the sliced pieces agree with the whole-log functions they stand for."""

from __future__ import annotations

import asyncio
import random
from types import SimpleNamespace
from typing import Any, cast

import msgspec
import pytest

from protocol import encode
from protocol.messages import Results, RoomSettings, SeatLog
from protocol.ranking import BOT_LIKE_MOVES, BOT_LIKE_SPAN_MS, bot_like, rank
from server import race
from server.config import ServerConfig
from server.core import machine as core
from server.room import Room
from server.store import LogEntry, RoomRecord, SeatRecord, Store

CODE = "RES001"
MOVES = 3_000  # per racing seat: many slices of the small slice below on every backend


def _record() -> RoomRecord:
    settings = msgspec.to_builtins(RoomSettings(variant="brisbane", max_players=4))
    return RoomRecord(code=CODE, settings=settings, seed=12345, salt="ab" * 8,
                      commitment="c0ffee", phase="finished", end_reason="time",
                      winnable=True, par=111, round=2)


def _log(rng: random.Random, n: int, fast_from: int | None) -> list[LogEntry]:
    """``n`` moves with human gaps (often over 64 ms: multi-byte deltas in the packed
    log), auto-moves (``>f``, not deliberate) among them, and from ``fast_from`` on a run
    of deliberate moves fast enough to be bot-like."""
    out: list[LogEntry] = []
    clock = 0
    for i in range(n):
        fast = fast_from is not None and fast_from <= i < fast_from + 2 * BOT_LIKE_MOVES
        clock += 1 if fast else rng.choice((40, 300, 900, 5_000, 70_000))
        move = "t3>f" if not fast and rng.random() < 0.2 else rng.choice(("t1h", "5f", "w>3"))
        out.append(LogEntry(move, clock))
    return out


async def _fill(store: Store, seat: int, entries: list[LogEntry]) -> None:
    for seq, entry in enumerate(entries, start=1):
        await store.append_move(CODE, seat, 1, seq, entry, progress=seq % 52, moves=seq)


async def _race(store: Store) -> None:
    """A finished room: seat 1 won, seats 2 and 3 still playing (one with a bot-like
    run), seat 4 never moved and is ready."""
    rng = random.Random(17)
    assert await store.create_room(msgspec.structs.replace(_record(), phase="lobby"))
    for name in ("ann", "bob", "cy", "dee"):
        assert await store.add_seat(CODE, SeatRecord(seat=0, name=name), 4) is not None
    await asyncio.gather(_fill(store, 1, _log(rng, MOVES, None)),
                         _fill(store, 2, _log(rng, MOVES, 1_700)),
                         _fill(store, 3, _log(rng, MOVES // 3, None)))
    await store.update_seat(CODE, 1, status="won", finish_ms=123_456, progress=52)
    await store.update_seat(CODE, 2, status="playing", progress=30, progress_ms=99_000)
    await store.update_seat(CODE, 3, status="playing", progress=30, progress_ms=98_000)
    await store.update_seat(CODE, 4, ready=True)


async def _old_build_results(store: Store, record: RoomRecord) -> Results:
    """``race._build_results`` as it was before ``Store.read_logs`` (commit dda8473),
    kept here as the reference."""
    settings = msgspec.convert(record.settings, RoomSettings)
    for seat in await store.get_seats(CODE):
        await store.take_seat(CODE, seat.seat)
    seats = await store.get_seats(CODE)
    reason = record.end_reason or "all_done"
    for seat in seats:
        if seat.status not in core.DONE:
            seat.status = "timeout" if reason == "time" else "resigned"
            await store.update_seat(CODE, seat.seat, status=seat.status)
        if seat.ready:
            await store.update_seat(CODE, seat.seat, ready=False)
    logs = []
    for s in seats:
        entries = await store.read_log(CODE, s.seat)
        logs.append(SeatLog(seat=s.seat, moves=[e.move for e in entries],
                            clocks=[e.clock_ms for e in entries]))
    flagged = {log.seat for log in logs if bot_like(log.moves, log.clocks)}
    return Results(
        code=CODE, variant=settings.variant, options=dict(settings.options),
        rank_by=settings.rank_by, seed=record.seed, salt=record.salt,
        commitment=record.commitment, ranking=rank(seats, settings.rank_by, flagged), logs=logs,
        reason=reason, winnable=record.winnable, par=record.par, round=record.round,
    )


def _room(store: Store, record: RoomRecord, results_slice: int) -> Room:
    """What ``_build_results`` reads of a room: its store, code, settings and config."""
    host: Any = SimpleNamespace(
        store=store, code=CODE, settings=msgspec.convert(record.settings, RoomSettings),
        config=ServerConfig(results_slice=results_slice))
    return cast(Room, host)


@pytest.mark.parametrize("results_slice", [500, ServerConfig().results_slice])
async def test_results_are_the_bytes_the_whole_log_read_gave(
    store: Store, results_slice: int
) -> None:
    await _race(store)
    record = _record()
    old = encode(await _old_build_results(store, record))
    new = encode(await race._build_results(_room(store, record, results_slice), record))
    assert new == old
    results = msgspec.msgpack.decode(new, type=Results)
    # The reference is not vacuous: long logs, a bot-like seat, both end statuses.
    assert [len(log.moves) for log in results.logs] == [MOVES, MOVES, MOVES // 3, 0]
    assert [(k.seat, k.status, k.bot_like) for k in sorted(results.ranking,
                                                           key=lambda k: k.seat)] == [
        (1, "won", False), (2, "timeout", True), (3, "timeout", False), (4, "timeout", False)]
    assert all(not s.ready for s in await store.get_seats(CODE))


async def test_read_logs_is_read_log_in_columns(store: Store) -> None:
    await _race(store)
    got = await store.read_logs(CODE, [3, 1, 9], 64)
    assert list(got) == [3, 1, 9]
    for seat in (1, 3):
        entries = await store.read_log(CODE, seat)
        assert got[seat].moves == [e.move for e in entries]
        assert got[seat].clocks == [e.clock_ms for e in entries]
    assert got[9] == ([], [])  # no such seat: empty columns
    assert await store.read_logs(CODE, [], 64) == {}
    assert await store.read_logs("NOROOM", [1], 64) == {1: ([], [])}


async def test_read_logs_lets_the_loop_run_between_slices(store: Store) -> None:
    """A coroutine scheduled beside the read runs before the read is over when the log
    spans several slices (each turn of the loop is between two slices)."""
    await _race(store)
    turns = 0
    started, done = asyncio.Event(), asyncio.Event()

    async def other() -> None:
        # The probe: one count per loop turn it gets. Yielding the loop (sleep(0)) is
        # what it measures, not a wait for anything.
        nonlocal turns
        started.set()
        while not done.is_set():
            turns += 1
            await asyncio.sleep(0)

    beside = asyncio.create_task(other())
    await started.wait()
    before = turns
    await store.read_logs(CODE, [1, 2, 3], 100)  # 3,000 + 3,000 + 1,000: 70 slices
    during = turns - before
    done.set()
    await beside
    assert during >= 60


@pytest.mark.parametrize("seed", range(40))
async def test_bot_like_sliced_is_bot_like(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randrange(0, 60)
    clocks, clock = [], 0
    for _ in range(n):
        clock += rng.choice((0, 50, 100, 200, BOT_LIKE_SPAN_MS))
        clocks.append(clock)
    moves = [rng.choice(("t1h", "3>f", "5f")) for _ in range(n)]
    for step in (1, 2, 3, 7, 1000):
        assert await race.bot_like_sliced(moves, clocks, step) == bot_like(moves, clocks)
