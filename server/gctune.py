"""Garbage-collector settings for a serving node (installed once, after start-up).

A node's heap is mostly long-lived: the modules, the engine's tables and the code loaded
at start-up, then per connection the websockets and asyncio objects that live as long as
the client stays (about 56 tracked objects per idle connection). CPython's cyclic
collector walks every tracked object of the generations it collects, so a collection
that reaches the connections stops the event loop for hundreds of milliseconds at
10,000 of them (docs/BENCHMARKS.md, the ``conns`` row): a full collection walks them
all, and with raised thresholds a generation-1 collection still walked every connection
opened since the last one. Thresholds alone cannot fix both (smaller ones bring full
collections back), so long-lived objects are taken out of the walks:

- ``gc.freeze()`` after start-up moves every object alive then (imports, config, the
  listening server) to the permanent generation, which no collection walks.
- After every generation-1 (or older) collection the survivors are frozen too
  (``_freeze_survivors``, a ``gc.callbacks`` hook). An object that survived two
  collections is long-lived in practice (a connection, a room); freezing it is O(1)
  (list splices) and it is never walked again, so a generation-1 collection walks at
  most what ``GEN0_THRESHOLD * (GEN1_THRESHOLD + 1)`` allocations left alive, whatever
  the node holds, and the old generation stays empty (a full collection is as cheap).

What freezing costs: a frozen object is still freed by reference counting the moment its
last reference goes; only a reference *cycle* holding a frozen object is never found.
So the node must not make cycles out of long-lived objects: a closed connection leaves
none (``server/guard.py`` breaks the three that websockets and the guard left;
tests/server/test_gc_cycles.py checks, with automatic collection off, that every way a
connection ends frees its objects by reference counting alone). As a bounded
fall-back for cycles nobody found, every ``FULL_COLLECTION_EVERY_S`` the node unfreezes
everything, runs one full collection and freezes again (``full_collection``) -- the one
long pause this design keeps (docs/BENCHMARKS.md "Idle connections: fewer objects,
survivors frozen" for its measured length), logged with the frozen objects before and
after -- but only if the frozen heap holds more than what is alive explains
(``full_collection_due``, a pure function of a ``Census``):

- what is alive explains ``OBJECTS_PER_CONNECTION`` frozen objects per open connection
  and ``OBJECTS_PER_ROOM`` per room the node holds (measured, see the constants), on top
  of the node's own heap (``own_heap``: what no connection or room explains, as of the
  last full collection -- modules, caches, a memory store's records -- never below
  start-up's);
- the check collects when the frozen heap passes that by more than
  ``FULL_COLLECTION_GROWTH`` (CPython's own share for full collections).

A node whose connections come and go, or that grows from none to 10,000 connections,
holds what its connections explain and never pays the pause (the old rule, the frozen
heap grown by a quarter since the last full collection, paid it within the first ~150
connections: a full collection that found nothing); frozen objects growing while the
connections do not (leaked cycles, or connections gone whose objects stayed) trigger it.
A leak goes unfreed until it passes the share of what is alive plus what the constants
over-estimate, then once per ``FULL_COLLECTION_EVERY_S`` at most.

The pauses themselves are measured by ``solrace_gc_pause_seconds{generation}`` on
``/metrics`` (``server.metrics``, via ``gc.callbacks``).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Callable
from typing import Any, NamedTuple

log = logging.getLogger(__name__)

# Allocations (minus deallocations) of tracked objects between young collections. 700 is
# CPython's default; 3,000 makes young collections ~4x rarer, each walking at most 3,000
# objects (under 3 ms of CPU while 10,000 connections opened, docs/BENCHMARKS.md).
GEN0_THRESHOLD = 3_000
# Young collections per generation-1 collection. A generation-1 collection walks what the
# last GEN1_THRESHOLD young collections left alive, at most GEN0_THRESHOLD * (this + 1)
# objects (~160 fresh connections of ~56 objects), then its survivors are frozen: 5 ms of
# CPU at most while 10,000 connections opened, against 0.23-0.46 s with (20,000, 20) and
# no freezing; (5,000, 4) took 15-17 ms, (10,000, 4) 33 ms. The smaller the walks, the
# younger the objects frozen (and the more a cycle of them waits for the fall-back),
# hence not smaller still.
GEN1_THRESHOLD = 2
# Generation-1 collections per full one. The old generation is emptied by every freeze,
# so a full collection walks little more than a generation-1 one; CPython also waits for
# the old generation to grow by 25%. Left at its default.
GEN2_THRESHOLD = 10
# Seconds between the checks for a fall-back full collection (module docstring). One
# unfreezes and walks the whole heap: ~0.37 s of CPU at 10,000 idle connections (0.6-0.8
# s of wall time at load 6-8, docs/BENCHMARKS.md), ~13 ms with none (the start-up heap),
# so rarely. None: never.
FULL_COLLECTION_EVERY_S: float | None = 3600.0
# ... and only if the frozen heap holds more than this share above what is alive explains
# (``full_collection_due``): CPython's own share for full collections (the old
# generation grown by 25%), applied to what the live connections and rooms do not explain.
FULL_COLLECTION_GROWTH = 0.25
# Frozen objects one open connection explains. Measured (26 Nov 2026, ``solrace serve``
# with the memory store, clients in another process, ``gc.collect(1)`` and the frozen
# count read inside the node at each step; 200-400 connections per step): an idle
# hello'd connection 55, a spectator 60, a seated player 63 (~82 once racing: its board,
# counted with the room below). The seated player's, rounded up: an estimate too low
# would count the growth of a node filling up as a leak, one too high hides a leak.
OBJECTS_PER_CONNECTION = 64
# Frozen objects one room held on this node explains (same measurement, 50-100 rooms of
# two players and four spectators, Portuguese and Brisbane deals): 40-48 in the lobby,
# 81-106 once racing with 40 moves a seat (its seats' boards, the moves' state, its
# record kept by a memory store). The largest, rounded up, for the same reason. Rooms
# of 16 racing seats hold more than the two constants say (320 players in 20 rooms:
# 26,242 frozen objects against 23,040 explained, x1.14), within the share above.
OBJECTS_PER_ROOM = 128


class Live(NamedTuple):
    """What is alive on the node now: its open connections and the rooms it holds."""

    connections: int
    rooms: int


class Census(NamedTuple):
    """The frozen heap and what is alive when it was counted (``full_collection_due``)."""

    frozen: int
    connections: int
    rooms: int


def explained(census: Census) -> int:
    """The frozen objects the live connections and rooms of ``census`` account for."""
    return census.connections * OBJECTS_PER_CONNECTION + census.rooms * OBJECTS_PER_ROOM


def own_heap(census: Census, at_start: int) -> int:
    """The node's own frozen heap, from a ``census`` taken right after a full collection
    (nothing dead left in it): what its connections and rooms do not explain, and never
    less than ``at_start`` (the same at start-up), so a count the constants over-estimate
    does not lower it."""
    return max(at_start, census.frozen - explained(census))


def full_collection_due(census: Census, own: int) -> bool:
    """True when the frozen heap holds more than ``FULL_COLLECTION_GROWTH`` above what
    its live connections and rooms and the node's ``own`` heap (``own_heap``) explain:
    objects nothing alive accounts for, likely cycles to free (module docstring)."""
    return census.frozen > (own + explained(census)) * (1 + FULL_COLLECTION_GROWTH)


def _nothing_live() -> Live:
    return Live(0, 0)


def _freeze_survivors(phase: str, info: dict[str, Any]) -> None:
    """``gc.callbacks`` hook: after a generation-1 or full collection, freeze what it left
    (only live objects remain in the collected generations). A callback may run at any
    allocation; ``gc.freeze`` only splices the generations' lists, which is safe once a
    collection has finished (the "stop" phase)."""
    if phase == "stop" and info["generation"] >= 1:
        gc.freeze()


def full_collection() -> tuple[int, float]:
    """Unfreeze everything, collect every generation, freeze what is left: frees any
    cycle that frozen objects were part of. Returns (unreachable objects found, seconds
    it took); the count leaves out cycles the collector broke by finalizing a member
    (a suspended generator is closed, and the rest freed by reference counting), so
    compare ``gc.get_freeze_count()`` before and after to see what it freed. It stops
    the caller (the event loop) for as long as it walks the heap."""
    started = time.perf_counter()
    gc.unfreeze()
    found = gc.collect()
    gc.freeze()
    return found, time.perf_counter() - started


class Tuning:
    """The node's GC settings while installed (``tune_after_start``; ``undo``)."""

    def __init__(self, every_s: float | None, live: Callable[[], Live]) -> None:
        self.every_s = every_s
        self.live = live
        self._timer: asyncio.TimerHandle | None = None
        self._saved = gc.get_threshold()
        gc.collect()
        gc.freeze()
        at_start = self._census()
        self.own_at_start = own_heap(at_start, 0)
        self.own = self.own_at_start  # the node's own heap as of the last full collection
        gc.set_threshold(GEN0_THRESHOLD, GEN1_THRESHOLD, GEN2_THRESHOLD)
        if _freeze_survivors not in gc.callbacks:
            gc.callbacks.append(_freeze_survivors)
        self._arm()

    def _census(self) -> Census:
        return Census(gc.get_freeze_count(), *self.live())

    def _arm(self) -> None:
        if self.every_s is not None:
            self._timer = asyncio.get_running_loop().call_later(self.every_s, self._full)

    def _full(self) -> None:
        """The periodic check: a full collection if the frozen heap holds more than what
        is alive explains (``full_collection_due``)."""
        self._arm()
        before = self._census()
        if not full_collection_due(before, self.own):
            return
        found, took = full_collection()
        after = self._census()
        self.own = own_heap(after, self.own_at_start)
        log.info("fall-back full collection: %d unreachable objects, %.0f ms (frozen "
                 "objects: %d before, %d after; %d connections, %d rooms)", found,
                 took * 1e3, before.frozen, after.frozen, after.connections, after.rooms,
                 extra={"gc_unreachable": found, "gc_pause_ms": round(took * 1e3)})

    def undo(self) -> None:
        """Back to CPython's behaviour: no hook, no timer, the old thresholds, nothing
        frozen (tests, a node stopping in a process that goes on)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if _freeze_survivors in gc.callbacks:
            gc.callbacks.remove(_freeze_survivors)
        gc.set_threshold(*self._saved)
        gc.unfreeze()


def tune_after_start(every_s: float | None = FULL_COLLECTION_EVERY_S,
                     live: Callable[[], Live] = _nothing_live) -> Tuning:
    """Collect once, freeze what start-up left, raise the young thresholds, freeze the
    survivors of every generation-1 collection from now on, and check every ``every_s``
    seconds on the running loop whether a full collection is due, weighing the frozen
    heap against ``live()`` (the node's open connections and rooms; without it, nothing
    is alive beyond start-up's heap) (module docstring). Call it from the event loop,
    once the node listens; ``undo()`` on the result reverts it."""
    return Tuning(every_s, live)
