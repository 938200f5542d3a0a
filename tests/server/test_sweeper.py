"""The deadline sweeper on a fake clock: it fires what is due, once per lease; a firing
that fails (the store went away, the node died) falls due again when the lease ends."""

from __future__ import annotations

import asyncio

from server.store import Deadline, StoreUnavailable
from server.store.memory import MemoryStore
from server.sweeper import Sweeper


async def test_due_deadlines_fire_and_failed_ones_come_back_after_the_lease() -> None:
    store = MemoryStore()
    now = [10_000]
    fired: list[tuple[str, str]] = []
    failing = {"B"}

    async def fire(deadline: Deadline) -> None:
        fired.append((deadline.code, deadline.kind))
        if deadline.code in failing:
            raise StoreUnavailable("down")

    sweeper = Sweeper(store, lambda: now[0], fire, interval_s=3600, lease_ms=2_000,
                      batch=10, max_firing=4, max_wakes=10)
    await store.set_deadline("A", "start", 9_000)
    await store.set_deadline("B", "end", 10_000)
    await store.set_deadline("C", "end", 10_001)
    assert [(d.code, d.kind) for d in await sweeper.sweep_once()] == [("A", "start"),
                                                                       ("B", "end")]
    await sweeper.idle()
    assert fired == [("A", "start"), ("B", "end")]
    now[0] = 11_999  # B's lease (until 12 000) still holds; C is due
    assert [d.code for d in await sweeper.sweep_once()] == ["C"]
    await sweeper.idle()
    failing.clear()
    now[0] = 12_000  # B's lease ran out: it fires again, and this time it is done
    assert [d.code for d in await sweeper.sweep_once()] == ["B"]
    await sweeper.idle()
    now[0] = 100_000
    assert await sweeper.sweep_once() == []  # A, B and C are done
    assert fired == [("A", "start"), ("B", "end"), ("C", "end"), ("B", "end")]


async def test_stop_ends_the_loop_even_when_a_wake_up_lands_with_the_cancel() -> None:
    # The sweeper's loop waits for a wake-up or its interval. A wake-up set in the same
    # loop iteration as stop()'s cancel used to be taken as the wait's result (Python
    # 3.11's wait_for swallows the cancel then), and the loop went on for ever.
    store = MemoryStore()
    sweeps = asyncio.Event()

    async def fire(deadline: Deadline) -> None:
        raise AssertionError("nothing is due")

    sweeper = Sweeper(store, lambda: 0, fire, interval_s=3600, lease_ms=2_000,
                      batch=10, max_firing=4, max_wakes=10)
    real_sweep = sweeper.sweep_once

    async def counted_sweep() -> list[Deadline]:
        result = await real_sweep()
        sweeps.set()
        return result

    sweeper.sweep_once = counted_sweep  # type: ignore[method-assign]
    sweeper.start()
    sweeper._wake.set()
    await sweeps.wait()  # the loop swept once and is back waiting for a wake-up
    sweeper._wake.set()  # a wake-up, and in the same iteration the stop's cancel
    task = sweeper._task
    assert task is not None
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=5)
    assert done == {task} and task.cancelled()
