"""The node's GC tuning (server/gctune.py): what it installs, that it freezes the
survivors of generation-1 collections, that the fall-back full collection frees a cycle
of frozen objects (which nothing else frees), when the fall-back is due (the rule on
hand-made counts: a node's frozen heap against its live connections and rooms), and that
``undo`` puts CPython back."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator

import pytest

from server import gctune
from server.app import tune_gc

from .client import TestClient
from .conftest import ServerFactory


class Node:
    """A plain object that can sit in a reference cycle."""

    def __init__(self) -> None:
        self.other: object = None


def cycle() -> weakref.ref[Node]:
    """Two objects referring to each other, nothing else to them: cyclic garbage once
    this returns. A weak reference to one of them tells whether it was freed."""
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a)


@pytest.fixture
def restored() -> Iterator[None]:
    """Whatever a test does, the process's collector is as before afterwards."""
    threshold = gc.get_threshold()
    callbacks = list(gc.callbacks)
    try:
        yield
    finally:
        gc.callbacks[:] = callbacks
        gc.set_threshold(*threshold)
        gc.unfreeze()
        gc.collect()


async def test_installs_and_undoes(restored: None) -> None:
    before = gc.get_threshold()
    tuning = gctune.tune_after_start(every_s=None)
    assert gc.get_threshold() == (gctune.GEN0_THRESHOLD, gctune.GEN1_THRESHOLD,
                                  gctune.GEN2_THRESHOLD)
    assert gctune._freeze_survivors in gc.callbacks
    assert gc.get_freeze_count() > 0  # the start-up heap (here: the test process)
    tuning.undo()
    assert gc.get_threshold() == before
    assert gctune._freeze_survivors not in gc.callbacks
    assert gc.get_freeze_count() == 0


async def test_generation_1_survivors_are_frozen(restored: None) -> None:
    tuning = gctune.tune_after_start(every_s=None)
    try:
        kept = {id(node): node for node in (Node() for _ in range(1000))}  # alive throughout
        garbage = cycle()

        def walked() -> int:
            """How many of ``kept`` a collection still walks (not frozen)."""
            return sum(1 for o in gc.get_objects() if id(o) in kept)

        gc.collect(0)  # a young collection freezes nothing
        assert walked() == len(kept)
        gc.collect(1)
        assert garbage() is None  # what was garbage then was collected, not frozen
        assert walked() == 0  # the survivors were frozen
        assert gc.get_objects(1) == [] and gc.get_objects(2) == []
    finally:
        tuning.undo()


async def test_full_collection_frees_a_cycle_of_frozen_objects(restored: None) -> None:
    tuning = gctune.tune_after_start(every_s=None)
    try:
        a, b = Node(), Node()
        a.other, b.other = b, a
        gone = weakref.ref(a)
        gc.collect(1)  # both survive (referenced here) and are frozen
        del a, b  # now a cycle of frozen objects
        gc.collect()
        assert gone() is not None  # no collection walks frozen objects: it stays
        found, took = gctune.full_collection()
        assert gone() is None
        assert found >= 2 and took >= 0
        assert gc.get_freeze_count() > 0  # what is left is frozen again
    finally:
        tuning.undo()


def counting_full(monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """``full_collection`` made to set an event each time it runs."""
    ran = asyncio.Event()
    full = gctune.full_collection

    def counted() -> tuple[int, float]:
        ran.set()
        return full()

    monkeypatch.setattr(gctune, "full_collection", counted)
    return ran


async def test_the_fallback_runs_on_its_timer_once_the_frozen_heap_grew(
    restored: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran = counting_full(monkeypatch)
    tuning = gctune.tune_after_start(every_s=0.01)
    try:
        gone = cycle()
        kept = [Node() for _ in range(1000)]
        gc.freeze()  # the cycle is frozen: only the fall-back can free it
        tuning.own = gc.get_freeze_count() // 2  # as if it had doubled, nothing alive
        async with asyncio.timeout(5):
            await ran.wait()
        assert gone() is None
        assert tuning.own >= len(kept)  # the new base: what is frozen now
        assert tuning._timer is not None  # re-armed for the next one
    finally:
        tuning.undo()
    assert tuning._timer is None


async def test_the_fallback_waits_while_the_frozen_heap_does_not_grow(
    restored: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran = counting_full(monkeypatch)
    tuning = gctune.tune_after_start(every_s=None)  # checks run by hand below
    try:
        tuning._full()  # nothing grew since start-up
        share = 1 + gctune.FULL_COLLECTION_GROWTH
        tuning.own = int(gc.get_freeze_count() / share * 1.01)
        tuning._full()  # as if it had grown by a little less than the share
        assert not ran.is_set()
        tuning.own = int(gc.get_freeze_count() / share * 0.99)
        tuning._full()  # by a little more
        assert ran.is_set()
    finally:
        tuning.undo()


# The fall-back rule on counts. The figures are a node's as measured in docs/BENCHMARKS.md
# ("Idle connections"): 30,267 frozen objects at start-up, 577,895 with 9,999 idle
# connections open (~55 each), back to 30,489 once they closed.
START = gctune.Census(frozen=30_267, connections=0, rooms=0)


def test_a_steady_node_never_collects() -> None:
    own = gctune.own_heap(START, 0)
    assert own == 30_267
    # every hour for a day: connections and rooms come and go around 5,000 and 500, each
    # connection ~55 frozen objects and each room ~100 (docs: measured)
    for hour in range(24):
        connections = 5_000 + (hour % 5) * 100
        rooms = 500 + (hour % 3) * 20
        frozen = 30_267 + 55 * connections + 100 * rooms
        assert not gctune.full_collection_due(gctune.Census(frozen, connections, rooms), own)


def test_a_node_filling_up_does_not_collect() -> None:
    own = gctune.own_heap(START, 0)
    grown = gctune.Census(frozen=577_895, connections=9_999, rooms=0)
    # the old rule (frozen heap above 1.25 x 30,267 = 37,834) collected here, in vain
    assert grown.frozen > 37_834
    assert not gctune.full_collection_due(grown, own)
    # nor on the way: every thousand connections
    for connections in range(0, 10_000, 1_000):
        census = gctune.Census(30_267 + 55 * connections, connections, 0)
        assert not gctune.full_collection_due(census, own)
    # nor one of 16-seat racing rooms: measured 26,242 frozen objects above start-up for
    # 320 racing players in 20 rooms (gctune's comments), here 625 such rooms
    racing = gctune.Census(30_267 + 26_242 * 625 // 20, 10_000, 625)
    assert not gctune.full_collection_due(racing, own)


def test_growth_with_connections_flat_collects() -> None:
    own = gctune.own_heap(START, 0)
    # 5,000 connections throughout: what they and the node explain is 30,267 + 5,000 x 64
    # = 350,267 frozen objects, 437,833 with the 25% share; their real count 305,267
    steady = 30_267 + 55 * 5_000
    assert not gctune.full_collection_due(gctune.Census(steady + 100_000, 5_000, 0), own)
    assert gctune.full_collection_due(gctune.Census(steady + 140_000, 5_000, 0), own)


def test_connections_gone_whose_objects_stayed_collects() -> None:
    own = gctune.own_heap(START, 0)
    # 9,999 connections closed and the frozen heap did not shrink: cycles kept them
    assert gctune.full_collection_due(gctune.Census(577_895, 0, 0), own)
    # ...whereas freed by reference counting, it shrank back
    assert not gctune.full_collection_due(gctune.Census(30_489, 0, 0), own)


def test_the_own_heap_after_a_full_collection() -> None:
    # what 9,999 connections do not explain (9,999 x 64 = 639,936) is the node's own
    assert gctune.own_heap(gctune.Census(700_000, 9_999, 0), 30_267) == 60_064
    # never below start-up's, however much the constants over-estimate
    assert gctune.own_heap(gctune.Census(400_000, 9_999, 0), 30_267) == 30_267
    # a room counts too: 2 rooms x 128
    assert gctune.own_heap(gctune.Census(40_000, 0, 2), 30_267) == 39_744


async def test_the_check_weighs_the_frozen_heap_against_what_is_alive(
    restored: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran = counting_full(monkeypatch)
    live = gctune.Live(connections=0, rooms=0)
    tuning = gctune.tune_after_start(every_s=None, live=lambda: live)
    try:
        kept = [Node() for _ in range(2 * tuning.own_at_start)]  # the heap x3, about
        gc.freeze()
        # (other objects frozen at start-up may have been freed meanwhile: counted here)
        grown = gc.get_freeze_count() - tuning.own_at_start
        # as many connections as explain the growth: nothing to collect
        live = gctune.Live(connections=grown // gctune.OBJECTS_PER_CONNECTION + 1, rooms=0)
        tuning._full()
        assert not ran.is_set()
        # the same heap with the connections gone: objects nothing alive explains
        live = gctune.Live(connections=0, rooms=0)
        tuning._full()
        assert ran.is_set()
        assert tuning.own >= len(kept)  # still alive after the collection: the node's own
    finally:
        tuning.undo()


async def test_the_node_counts_its_connections_and_rooms_for_the_check(
    restored: None, server_factory: ServerFactory
) -> None:
    server = await server_factory()
    tuning = tune_gc(server)  # as ``solrace serve`` does once listening
    try:
        assert tuning.live() == gctune.Live(connections=0, rooms=0)
        clients = [await TestClient.connect(server.url, f"c{i}") for i in range(3)]
        await clients[0].create(variant="portuguese")
        assert tuning.live() == gctune.Live(connections=3, rooms=1)
        for client in clients:
            await client.close()
    finally:
        tuning.undo()
