"""``Store.checkpoint_and_tail``: the checkpoint ``get_checkpoint`` gives for the same
bounds and the log entries ``read_log`` gives after it, in one call, on every backend
(a spectator's join reads each seat this way: one round trip where it took two)."""

from __future__ import annotations

import pytest

from server.store import LogEntry, Store

from .test_contract import _checkpoint, room_with_seats

MOVES = 1_200
CHECKPOINTS = [(256, 1_000), (512, 1_000), (768, 5_000), (1_024, 9_000)]
BOUNDS = [(None, None), (1_023, None), (768, None), (255, None), (None, 999),
          (None, 4_999), (600, 8_000), (2_000, 5_000), (0, None)]


@pytest.mark.parametrize(("max_seq", "max_clock_ms"), BOUNDS)
async def test_checkpoint_and_tail_is_both_reads_at_once(
        store: Store, max_seq: int | None, max_clock_ms: int | None) -> None:
    code = await room_with_seats(store, seats=2)
    for seq in range(1, MOVES + 1):
        await store.append_move(code, 1, 1, seq, LogEntry(f"m{seq}", seq * 10))
    for seq, clock in CHECKPOINTS:
        await store.put_checkpoint(code, 1, _checkpoint(seq, clock))
    for limit in (0, 1, 100, 256, 5_000):
        saved, tail = await store.checkpoint_and_tail(code, 1, limit, max_seq=max_seq,
                                                      max_clock_ms=max_clock_ms)
        expected = await store.get_checkpoint(code, 1, max_seq=max_seq,
                                              max_clock_ms=max_clock_ms)
        assert saved == expected
        after = expected.seq if expected is not None else 0
        assert tail == await store.read_log(code, 1, after=after, limit=limit)
        assert len(tail) == min(limit, MOVES - after)  # not vacuous: the log is there
    # a seat without checkpoints or moves, and one that does not exist
    assert await store.checkpoint_and_tail(code, 2, 10) == (None, [])
    assert await store.checkpoint_and_tail(code, 7, 10) == (None, [])
