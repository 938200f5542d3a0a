"""The deadline sweeper: every node fires every room's due deadlines.

Deadlines (countdown end, time limit, abandon, results due, lobby expiry) are records in
the store, not tasks in one process. Each node claims due deadlines with a short lease
(``Store.claim_deadlines``), fires each (the core handles a deadline idempotently), then
marks it done. A node that dies mid-fire leaves the deadline to fall due again when the
lease ends, for whichever node is alive; a store outage only delays the sweep, which
fires everything due as soon as the store answers again.

Timing: a node that arms a deadline also asks its sweeper to wake then (``wake_at``), so
the arming node fires on time; every node also sweeps every ``interval_s`` to pick up
deadlines armed elsewhere (a dead node's).
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
from collections.abc import Awaitable, Callable

from .store import Deadline, Store, StoreUnavailable

log = logging.getLogger(__name__)

Fire = Callable[[Deadline], Awaitable[None]]


class Sweeper:
    """Claims and fires due deadlines until ``stop()`` (see the module docstring)."""

    def __init__(self, store: Store, clock: Callable[[], int], fire: Fire, *,
                 interval_s: float, lease_ms: int, batch: int, max_firing: int,
                 max_wakes: int) -> None:
        self._store = store
        self._clock = clock
        self._fire = fire
        self._interval_s = interval_s
        self._lease_ms = lease_ms
        self._batch = batch
        self._max_wakes = max_wakes
        self._slots = asyncio.Semaphore(max_firing)
        self._wake = asyncio.Event()
        self._wakes: list[int] = []  # wall ms at which to sweep (a bounded heap)
        self._timer: asyncio.TimerHandle | None = None
        self._firing: set[asyncio.Task[None]] = set()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start sweeping (on the running loop)."""
        self._task = asyncio.get_running_loop().create_task(self._run(), name="sweeper")

    async def stop(self) -> None:
        """Stop sweeping; firings under way are cancelled (their leases run out, so
        another node fires them)."""
        if self._timer is not None:
            self._timer.cancel()
        tasks = [t for t in (self._task, *self._firing) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def wake_at(self, at_ms: int) -> None:
        """Sweep at wall time ``at_ms`` (as well as every ``interval_s``)."""
        if len(self._wakes) >= self._max_wakes:
            return  # the periodic sweep still fires it, at most interval_s late
        heapq.heappush(self._wakes, at_ms)
        self._arm_timer()

    def _arm_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._wakes:
            return
        delay = max(0.0, (self._wakes[0] - self._clock()) / 1000)
        self._timer = asyncio.get_running_loop().call_later(delay, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        now = self._clock()
        while self._wakes and self._wakes[0] <= now:
            heapq.heappop(self._wakes)
        self._wake.set()
        self._arm_timer()

    async def _run(self) -> None:
        while True:
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for swallows a cancel
            # that arrives in the loop iteration the wake-up completes, and this loop
            # then ran on for ever (stop() awaiting it: a node, or a test's teardown,
            # that never stopped).
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._interval_s):
                    await self._wake.wait()
            self._wake.clear()
            try:
                await self.sweep_once()
            except StoreUnavailable as exc:
                log.debug("deadline sweep skipped: %s", exc)
            except Exception:
                log.exception("deadline sweep failed")

    async def sweep_once(self) -> list[Deadline]:
        """Claim the deadlines due now and start firing them; returns them."""
        claimed = await self._store.claim_deadlines(self._clock(), self._lease_ms, self._batch)
        for deadline in claimed:
            task = asyncio.get_running_loop().create_task(self._fire_one(deadline))
            self._firing.add(task)
            task.add_done_callback(self._firing.discard)
        if len(claimed) == self._batch:
            self._wake.set()  # more may be due: sweep again at once
        return claimed

    async def idle(self) -> None:
        """Wait until every firing started so far has ended (for tests)."""
        while self._firing:
            await asyncio.wait(list(self._firing))

    async def _fire_one(self, deadline: Deadline) -> None:
        async with self._slots:
            try:
                await self._fire(deadline)
                await self._store.done_deadline(deadline)
            except StoreUnavailable as exc:  # the lease runs out: fired again later
                log.info("deadline %s of room %s: store unavailable (%s); will retry",
                         deadline.kind, deadline.code, exc)
            except Exception:
                log.exception("deadline %s of room %s failed; will retry",
                              deadline.kind, deadline.code)
