"""The deal's verdict (winnable? par?) off the event loop and off the results path.

A random deal's verdict is asked of the solver in a bounded pool of worker *processes*
when the room is created, so it is usually known by the finish and goes out with the
results. The results never wait for it: when it is decided later, it is stored in the
room record and, if the room has finished by then, every node sends ``Verdict`` to its
members. Bounds (``ServerConfig``): ``verdict_workers`` processes, at most
``verdict_queue`` searches waiting or running on this node, and at most
``verdict_per_client`` of them for one client; a search refused by a bound leaves the
verdict unknown (the ``solrace_verdicts{outcome="skipped"}`` metric counts them).
A node that dies with searches queued loses them: those verdicts stay unknown.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import threading
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import engine
from protocol import encode
from protocol.messages import RoomPhase, Verdict

from . import events as ev
from .config import ServerConfig
from .metrics import Metrics
from .store import RoomRecord, Store, StoreUnavailable

log = logging.getLogger(__name__)
# Joining the worker pool at close waits at most this long (its workers were stopped
# first): a stuck pool manager thread must not turn a stop into a hang.
JOIN_S = 5.0
_PHASES: tuple[RoomPhase, ...] = ("lobby", "countdown", "running", "finished")


def judge(variant: str, seed: int, options: dict[str, Any], max_nodes: int,
          max_seconds: float) -> tuple[bool | None, int | None]:
    """In a worker process: (winnable, par) of the fresh deal; (None, None) when the
    solver could not decide within the budget."""
    from engine.solver import solve

    result = solve(engine.new_game(variant, seed=seed, **options), max_nodes=max_nodes,
                   max_seconds=max_seconds)
    if result.winnable:
        return True, len(result.moves)
    return result.winnable, None


def _in_the_background() -> None:
    """In a worker process: take only the CPU time the node's event loop leaves idle.

    A node gets one core (deploy/: the k8s limit and compose's ``cpus`` are 1), so a
    search shares it with the event loop. At the same priority the scheduler gives the
    two turns: a room-creation flood kept the solver busy for seconds after each burst
    of creations, and every time the loop woke it could wait a time slice behind the
    search (honest acks 5-30 ms, the loop's run-queue wait x3; docs/SECURITY.md, "A
    remote attacker modelled"). Linux's idle class (``SCHED_IDLE``) runs the search only
    when nothing else wants the core, and a waking loop takes the core back at once (at
    the lowest nice value, 19, one trial still had 18-33 ms acks while a search ran).
    Elsewhere: the lowest nice value.
    The results never wait for a verdict, so a search that starves is a verdict known
    later (or not at all), as when the queue is full."""
    if hasattr(os, "sched_setscheduler") and hasattr(os, "SCHED_IDLE"):
        try:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
            return
        except OSError:  # not allowed here: fall back to the nice value
            pass
    with contextlib.suppress(OSError):
        os.nice(19)


def _worker_start(node_pid: int) -> None:
    """A worker process's initializer: in the background (``_in_the_background``), and
    tied to the node's life (``_die_with``). The priority first: the watcher thread
    inherits it."""
    _in_the_background()
    _die_with(node_pid)


def _die_with(node_pid: int) -> None:
    """In a worker process: exit as soon as the node that started it is gone (a node
    killed with SIGKILL cannot stop its workers; they must not outlive it, holding its
    stdout open and a CPU core)."""

    def watch() -> None:
        while os.getppid() == node_pid:
            time.sleep(0.5)  # polling the parent: no other signal of its death exists
        os._exit(0)

    threading.Thread(target=watch, name="die-with-node", daemon=True).start()


class VerdictPool:
    """This node's solver processes and their bounds (see the module docstring)."""

    def __init__(self, config: ServerConfig, store: Store, metrics: Metrics) -> None:
        self._config = config
        self._store = store
        self._metrics = metrics
        self._executor: ProcessPoolExecutor | None = None
        self._by_client: Counter[str] = Counter()
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def pending(self) -> int:
        """Searches waiting or running on this node."""
        return len(self._tasks)

    def request(self, record: RoomRecord, variant: str, options: dict[str, Any],
                client: str) -> bool:
        """Ask for ``record``'s verdict on behalf of ``client``; False when a bound
        refused it (the verdict stays unknown)."""
        config = self._config
        if (len(self._tasks) >= config.verdict_queue
                or self._by_client[client] >= config.verdict_per_client):
            self._metrics.verdicts.labels("skipped").inc()
            return False
        self._by_client[client] += 1
        task = asyncio.get_running_loop().create_task(
            self._judge(record.code, record.seed, variant, options))
        self._tasks.add(task)
        task.add_done_callback(lambda t: self._done(t, client))
        return True

    def _done(self, task: asyncio.Task[None], client: str) -> None:
        self._tasks.discard(task)
        self._by_client[client] -= 1
        if self._by_client[client] <= 0:
            del self._by_client[client]

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            # spawn: fresh interpreters that inherit no event loop, sockets or threads;
            # each one runs in the background and exits when this node does (even on
            # SIGKILL): see _worker_start
            context = multiprocessing.get_context("spawn")
            self._executor = ProcessPoolExecutor(
                self._config.verdict_workers, mp_context=context,
                initializer=_worker_start, initargs=(os.getpid(),))
        return self._executor

    async def _judge(self, code: str, seed: int, variant: str,
                     options: dict[str, Any]) -> None:
        config = self._config
        loop = asyncio.get_running_loop()
        try:
            winnable, par = await loop.run_in_executor(
                self._pool(), judge, variant, seed, options, config.verdict_max_nodes,
                config.results_solver_s)
        except Exception:
            log.exception("room %s: the solver failed", code)
            return
        self._metrics.verdicts.labels("decided" if winnable is not None else "undecided").inc()
        if winnable is None:
            return
        try:
            await self._record(code, seed, winnable, par)
        except StoreUnavailable as exc:
            log.warning("room %s: verdict not stored (%s)", code, exc)

    async def _record(self, code: str, seed: int, winnable: bool, par: int | None) -> None:
        """Store the verdict in the room record (whatever its phase: a compare-and-set
        to the same phase); if the room has finished, tell every node's members. A
        verdict on a deal the room no longer has (a rematch dealt a new one) is dropped."""
        now = await self._store.get_room(code)
        if now is None or now.seed != seed:
            return
        for phase in _PHASES:
            if await self._store.set_phase(code, phase, phase, winnable=winnable, par=par):
                break
        else:
            return  # the room is gone
        if phase == "finished":
            frame = encode(Verdict(code=code, winnable=winnable, par=par))
            await self._store.publish(code, ev.encode_event(ev.Broadcast(frame)))

    async def close(self) -> None:
        """Cancel the searches and stop the worker processes."""
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        self._by_client.clear()
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
            # A search still running is not worth waiting for: stop its worker, then join
            # the pool's manager thread here. Left to the interpreter's exit hook, a pool
            # shut down without waiting can raise there ("Exception ignored in: <module
            # 'threading'>" on stderr, which breaks one-JSON-object-per-line logs).
            workers = getattr(executor, "_processes", None) or {}  # CPython: pid -> Process
            for process in list(workers.values()):
                with contextlib.suppress(OSError, ValueError):
                    process.terminate()
            try:  # bounded: a pool whose manager thread is stuck must not hang the stop
                await asyncio.wait_for(asyncio.to_thread(executor.shutdown, True), JOIN_S)
            except TimeoutError:
                log.warning("verdict pool not joined within %s s; its workers were stopped",
                            JOIN_S)
