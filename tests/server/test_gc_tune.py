"""The node's GC tuning (server/gctune.py): what it installs, that it freezes the
survivors of generation-1 collections, that the fall-back full collection frees a cycle
of frozen objects (which nothing else frees), and that ``undo`` puts CPython back."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator

import pytest

from server import gctune


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
        tuning.frozen_after_full = gc.get_freeze_count() // 2  # as if it had doubled since
        async with asyncio.timeout(5):
            await ran.wait()
        assert gone() is None
        assert tuning.frozen_after_full >= len(kept)  # the new base: what is frozen now
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
        tuning.frozen_after_full = int(gc.get_freeze_count() / share * 1.01)
        tuning._full()  # as if it had grown by a little less than the share
        assert not ran.is_set()
        tuning.frozen_after_full = int(gc.get_freeze_count() / share * 0.99)
        tuning._full()  # by a little more
        assert ran.is_set()
    finally:
        tuning.undo()
