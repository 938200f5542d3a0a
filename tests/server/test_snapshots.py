"""Boards rebuilt from a checkpoint and the log's tail (server/snapshots.py) are exactly the
boards the engine reaches by playing the whole log: same view, same state hash, same
diffs, same progress times -- whatever checkpoints exist (none, some, one from an older
round), whatever the bounds (a sequence, a race clock for a delayed view) and the slice.

The expected values come from the engine alone, move by move (not from ``views.replay``)."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
from protocol.messages import RoomSettings
from server import snapshots, views
from server.store.memory import MemoryStore
from server.store.records import Checkpoint, LogEntry, RoomRecord, SeatRecord


@dataclass
class Played:
    """A seat's moves and, from the engine, the game after each prefix."""

    moves: list[str]
    clocks: list[int]
    games: list[engine.Game]  # games[k]: after k moves
    revealed: list[list[tuple[int, str]]]  # revealed[k - 1]: by move k


def play(variant: str, seed: int, count: int, rng: random.Random) -> Played:
    game = engine.new_game(variant, seed=seed)
    out = Played([], [], [game.copy()], [])
    clock = 0
    for _ in range(count):
        legal = game.legal_moves()
        if not legal:
            break
        diff = game.play(rng.choice(legal))
        clock += rng.choice([0, 0, 1, 7, 300])  # clocks never go back; several share one
        out.moves.append(diff.move)
        out.clocks.append(clock)
        out.revealed.append([(p, c) for p, c in diff.revealed])
        out.games.append(game.copy())
    return out


def first_reached(played: Played, upto: int) -> dict[int, int]:
    reached: dict[int, int] = {}
    for k in range(1, upto + 1):
        if played.games[k].progress != played.games[k - 1].progress:
            reached.setdefault(played.games[k].progress, played.clocks[k - 1])
    return reached


async def _setup(variant: str, seed: int, played: Played, every: list[int],
                 stale: int | None) -> tuple[MemoryStore, RoomRecord, RoomSettings]:
    store = MemoryStore()
    record = RoomRecord(code="SNAP", settings={"v": variant, "o": {}}, seed=seed, salt="00",
                        commitment="c", start_ms=0, round=2)
    await store.create_room(record)
    await store.add_seat("SNAP", SeatRecord(seat=0, name="p"), 1)
    await store.set_phase("SNAP", "lobby", "running")
    for k, (move, clock) in enumerate(zip(played.moves, played.clocks, strict=True), 1):
        await store.append_move("SNAP", 1, 1, k, LogEntry(move, clock))
        if k in every:  # what the seat's holder writes
            saved = views.checkpoint(record, k, clock, played.games[k],
                                     first_reached(played, k))
            await store.put_checkpoint("SNAP", 1, saved)
    if stale is not None and stale <= len(played.moves):
        # a late write from round 1, at a later seq than any good one: must be ignored
        old = msgspec.structs.replace(views.checkpoint(
            record, stale, played.clocks[stale - 1], played.games[0], {}), round=1)
        await store.put_checkpoint("SNAP", 1, old)
    return store, record, RoomSettings(variant=variant)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    variant=st.sampled_from(engine.VARIANTS),
    seed=st.integers(0, 2**64 - 1),
    count=st.integers(0, 260),
    every=st.sets(st.integers(1, 260), max_size=8),
    stale=st.none() | st.integers(1, 260),
    upto=st.none() | st.integers(0, 270),
    cutoff=st.none() | st.integers(0, 40_000),
    diffs_after=st.none() | st.integers(0, 270),
    slice_moves=st.integers(1, 100),
    rng_seed=st.integers(0, 1000),
)
def test_checkpoint_and_tail_equal_the_full_replay(
    variant: str, seed: int, count: int, every: set[int], stale: int | None,
    upto: int | None, cutoff: int | None, diffs_after: int | None, slice_moves: int,
    rng_seed: int,
) -> None:
    played = play(variant, seed, count, random.Random(rng_seed))
    n = len(played.moves)

    async def run() -> views.Replay:
        store, record, room_settings = await _setup(variant, seed, played, sorted(every), stale)
        return await snapshots.rebuild(store, record, room_settings, 1, slice_moves=slice_moves,
                                       upto=upto, until_clock_ms=cutoff,
                                       diffs_after=diffs_after)

    got = asyncio.run(run())
    expected_seq = n if upto is None else min(n, upto)
    if cutoff is not None:
        expected_seq = min(expected_seq, sum(1 for c in played.clocks if c <= cutoff))
    expected = played.games[expected_seq]
    assert got.seq == expected_seq
    assert got.game.view() == expected.view()
    assert got.game.to_layout() == expected.to_layout(), "face-down cards too"
    assert got.game.state_hash() == engine.view_hash(expected.view())
    assert got.reached == first_reached(played, expected_seq)
    if diffs_after is None:
        assert got.diffs == []
    else:
        assert [(d.seq, d.move, d.hash, d.clock_ms, [tuple(r) for r in d.revealed])
                for d in got.diffs] == [
            (k, played.moves[k - 1], engine.view_hash(played.games[k].view()),
             played.clocks[k - 1], played.revealed[k - 1])
            for k in range(diffs_after + 1, expected_seq + 1)
        ]


def test_a_rebuild_reads_the_tail_only() -> None:
    """With a checkpoint every 256 moves, a rebuild of the whole board reads at most the
    moves after the latest one (counted at the store)."""
    played = play("spanish", 11, 700, random.Random(3))
    n = len(played.moves)
    assert n > 600, "a deal that lasts"

    async def run() -> tuple[views.Replay, list[int]]:
        store, record, room_settings = await _setup(
            "spanish", 11, played, [k for k in range(1, n + 1) if k % 256 == 0], None)
        read: list[int] = []
        original = store.read_log

        async def counting(code: str, seat: int, after: int = 0,
                           limit: int | None = None) -> list[LogEntry]:
            entries = await original(code, seat, after, limit)
            read.append(len(entries))
            return entries

        store.read_log = counting  # type: ignore[method-assign]
        original_first = store.checkpoint_and_tail

        async def counting_first(code: str, seat: int, limit: int, **bounds: Any
                                 ) -> tuple[Checkpoint | None, list[LogEntry]]:
            saved, entries = await original_first(code, seat, limit, **bounds)
            read.append(len(entries))  # the first slice comes with the checkpoint
            return saved, entries

        store.checkpoint_and_tail = counting_first  # type: ignore[method-assign]
        got = await snapshots.rebuild(store, record, room_settings, 1, slice_moves=64)
        return got, read

    got, read = asyncio.run(run())
    assert got.seq == n and got.game.view() == played.games[n].view()
    assert sum(read) == n - (n // 256) * 256
