"""Boards rebuilt from a checkpoint and the log's tail, never the whole log on the loop.

A seat's board is (variant, options, seed) + its move log. Replaying a 160,000-move log
took over a second of the event loop, on every spectator join. So the seat's holder
stores a ``Checkpoint`` (its board) every ``checkpoint_every`` moves, and a rebuild
starts from the latest checkpoint the caller may use (at or before a sequence, or a race
clock for a delayed view) and replays only the log after it, in slices of
``rebuild_slice`` moves with the event loop free between slices. docs/SERVER.md,
"Snapshots".

The checkpoint is written off the ack path (after the ``Accepted`` is queued) and not
atomically with the move: a missing one (the holder crashed, the store refused) only
makes a rebuild start from an earlier one; a rebuild is correct from any of them (tests
check it against a full replay).
"""

from __future__ import annotations

import asyncio

from protocol.messages import RoomSettings

from . import views
from .store.base import Store
from .store.records import LogEntry, RoomRecord


async def rebuild(
    store: Store,
    record: RoomRecord,
    settings: RoomSettings,
    seat: int,
    *,
    slice_moves: int,
    upto: int | None = None,
    until_clock_ms: int | None = None,
    diffs_after: int | None = None,
    start: views.Replay | None = None,
) -> views.Replay:
    """Seat ``seat``'s board after its first ``upto`` moves (None: all), stopping before
    the first move later than ``until_clock_ms``; with ``diffs_after``, the Diff messages
    of the moves after that sequence. The same result as ``views.replay`` over the whole
    log, from the latest usable checkpoint (or from ``start``, a replay to continue,
    whose game is advanced in place). Yields to the event loop after each slice of
    ``slice_moves`` moves. Raises ``StoreUnavailable`` as the store does."""
    code = record.code
    slice_moves = max(1, slice_moves)
    # The checkpoint and the first slice after it come in one store round trip.
    first: list[LogEntry] | None = None
    if start is None:
        bound = upto
        if diffs_after is not None:
            bound = diffs_after if bound is None else min(bound, diffs_after)
        saved, tail = await store.checkpoint_and_tail(code, seat, slice_moves, max_seq=bound,
                                                      max_clock_ms=until_clock_ms)
        start = views.resume_from(record, settings, saved)
        if start.seq == (saved.seq if saved is not None else 0):
            first = tail  # else the checkpoint was an older round's: read from 0
    done = views.Replay(start.game, start.seq, [], start.reached)
    diffs = done.diffs
    while upto is None or done.seq < upto:
        want = slice_moves if upto is None else min(slice_moves, upto - done.seq)
        if first is not None:
            entries, first = first[:want], None
        else:
            entries = await store.read_log(code, seat, after=done.seq, limit=want)
        part = views.replay(record, settings, seat, entries, diffs_after=diffs_after,
                            until_clock_ms=until_clock_ms, start=done)
        diffs += part.diffs
        done = views.Replay(part.game, part.seq, diffs, part.reached, part.stopped)
        if entries:
            # A slice done: let the loop serve everyone else (the last one too: callers
            # chain rebuilds, and a store read that does not wait would not yield).
            await asyncio.sleep(0)
        if part.stopped or len(entries) < want:
            break
    return done
