"""The spectator delay's buffer: diffs waiting for their time, bounded.

One per room on a node, shared by every spectator there (``Room`` arms one timer for
the earliest due time and delivers what ``pop_due`` returns). Pure bookkeeping: no
clock of its own (times are wall milliseconds the caller passes), no I/O.

At its bound a diff is not kept; the buffer notes, per seat, the last such (seq, due)
so that once it is due every spectator behind it fills the gap from the seat's log
(docs/SERVER.md, "Buffers").
"""

from __future__ import annotations

import heapq
import itertools

from protocol.messages import Diff


class DelayBuffer:
    """Diffs by due time (wall ms), at most ``bound`` of them (see the module)."""

    def __init__(self, bound: int) -> None:
        self._bound = bound
        # (due ms, seat, seq, n, diff): n breaks ties, so the same move buffered twice
        # never compares its diffs
        self._heap: list[tuple[int, int, int, int, Diff]] = []
        self._count = itertools.count()
        self._lost: dict[int, tuple[int, int]] = {}  # seat -> last (seq, due) not kept

    def __len__(self) -> int:
        """The diffs kept (the ones not kept at the bound are not counted)."""
        return len(self._heap)

    def add(self, diff: Diff, due_ms: int) -> None:
        """Keep ``diff`` until ``due_ms``; at the bound, note it as lost instead."""
        if len(self._heap) >= self._bound:
            lost = self._lost.get(diff.seat)
            if lost is None or diff.seq > lost[0]:
                self._lost[diff.seat] = (diff.seq, due_ms)
            return
        heapq.heappush(self._heap, (due_ms, diff.seat, diff.seq, next(self._count), diff))

    def pop_due(self, now_ms: int) -> tuple[list[Diff], list[tuple[int, int]]]:
        """Remove and return what is due at ``now_ms``: the kept diffs in due order, and
        the (seat, seq) up to which each seat's lost diffs are due (to fill from the log)."""
        due: list[Diff] = []
        heap = self._heap
        while heap and heap[0][0] <= now_ms:
            due.append(heapq.heappop(heap)[4])
        lost: list[tuple[int, int]] = []
        for seat, (seq, at_ms) in list(self._lost.items()):
            if at_ms <= now_ms:
                del self._lost[seat]
                lost.append((seat, seq))
        return due, lost

    def next_due(self) -> int | None:
        """The earliest due time still waiting (kept or lost), if any."""
        times = [at for _, at in self._lost.values()]
        if self._heap:
            times.append(self._heap[0][0])
        return min(times) if times else None

    def clear(self) -> None:
        """Forget everything (no spectator left, a new round, the room closing)."""
        self._heap, self._lost = [], {}
