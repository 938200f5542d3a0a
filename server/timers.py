"""Named wall-clock timers and owned tasks, for objects (rooms) that must run
coroutines at given times and cancel them all when they close."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)


class Timed:
    """Mixin: ``arm(name, at_ms, factory)`` runs ``factory()`` as an owned task at wall
    time ``at_ms`` (never earlier); ``spawn`` runs a coroutine as an owned task. Owned
    tasks and timers are cancelled by ``cancel_all``; failures are logged."""

    closed: bool

    def __init__(self, clock: Callable[[], int], label: str) -> None:
        self._clock = clock
        self._label = label
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[Any]] = set()

    def now_ms(self) -> int:
        """The server's wall clock, Unix ms."""
        return self._clock()

    def cancel_all(self) -> None:
        """Cancel every timer and owned task."""
        for handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        for task in list(self._tasks):
            task.cancel()

    def spawn(self, coro: Any) -> None:
        """Run ``coro`` as a task owned by the room (cancelled when it closes)."""
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("%s: task failed", self._label, exc_info=task.exception())

    def arm(self, name: str, at_ms: int, coro_factory: Any) -> None:
        """Call ``coro_factory()`` (as a room task) at wall time ``at_ms``; re-arming a
        name replaces the previous timer. Fires late rather than early."""
        old = self._timers.pop(name, None)
        if old is not None:
            old.cancel()
        if self.closed:
            return
        loop = asyncio.get_running_loop()

        def fire() -> None:
            if self.now_ms() < at_ms:  # loop timers may fire a hair early: never run early
                self._timers[name] = loop.call_later((at_ms - self.now_ms()) / 1000, fire)
                return
            self._timers.pop(name, None)
            self.spawn(coro_factory())

        self._timers[name] = loop.call_later(max(0, at_ms - self.now_ms()) / 1000, fire)

    def disarm(self, name: str) -> None:
        """Cancel the timer ``name`` if armed."""
        handle = self._timers.pop(name, None)
        if handle is not None:
            handle.cancel()

