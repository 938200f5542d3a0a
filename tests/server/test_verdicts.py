"""The verdict pool's bounds: a flood of rooms from one client, or from many, queues at
most ``verdict_per_client`` / ``verdict_queue`` solver searches; the rest are skipped
(verdict unknown), and nothing waits for them."""

from __future__ import annotations

from server.config import ServerConfig
from server.metrics import Metrics
from server.store import RoomRecord
from server.store.memory import MemoryStore
from server.verdicts import VerdictPool, judge

from .client import TestClient
from .conftest import ServerFactory


def _record(n: int) -> RoomRecord:
    return RoomRecord(code=f"R{n:05d}", settings={}, seed=n, salt="00", commitment="c")


async def test_a_flood_is_bounded_per_client_and_in_total() -> None:
    config = ServerConfig(verdict_queue=5, verdict_per_client=2)
    metrics = Metrics()
    pool = VerdictPool(config, MemoryStore(), metrics)
    try:
        flood = [pool.request(_record(n), "fortress", {}, client="flooder") for n in range(10)]
        assert flood == [True, True] + [False] * 8
        others = [pool.request(_record(100 + n), "fortress", {}, client=f"c{n}")
                  for n in range(5)]
        assert others == [True, True, True, False, False]  # 2 + 3 = the queue of 5
        assert pool.pending == 5
        skipped = metrics.verdicts.labels("skipped")._value.get()
        assert skipped == 10
    finally:
        await pool.close()
    assert pool.pending == 0


def test_the_worker_function_gives_the_solvers_verdict() -> None:
    # Fortress seed 6878202754727873932 has no legal move: the solver proves it
    # unwinnable at once (nothing to search), so the verdict is (False, None).
    assert judge("fortress", 6878202754727873932, {}, 1_000, 5.0) == (False, None)


async def test_one_address_shares_its_searches_across_connections(
    server_factory: ServerFactory,
) -> None:
    # verdict_per_client=2: three connections from 127.0.0.2 create a room each; the
    # third room's search is skipped (one client, many connections, no more searches),
    # while a room from 127.0.0.3 still gets its search.
    server = await server_factory(verdict_per_client=2, verdict_queue=10,
                                  rate_burst=100_000, rate_per_s=100_000.0)
    skipped = server.metrics.verdicts.labels("skipped")
    clients = [await TestClient.connect(server.url, f"p{i}", source="127.0.0.2")
               for i in range(3)]
    other = await TestClient.connect(server.url, "q", source="127.0.0.3")
    try:
        for client in clients[:2]:
            await client.create(variant="fortress")
        assert skipped._value.get() == 0
        await clients[2].create(variant="fortress")
        assert skipped._value.get() == 1
        await other.create(variant="fortress")
        assert skipped._value.get() == 1
    finally:
        for client in (*clients, other):
            await client.close()


async def test_the_solver_runs_in_the_background() -> None:
    # A worker takes only CPU time the node's event loop leaves idle: Linux's idle
    # scheduling class, read back from the worker process itself (the kernel's answer,
    # not the pool's); its node's loop keeps the normal class.
    import os

    pool = VerdictPool(ServerConfig(verdict_workers=1), MemoryStore(), Metrics())
    try:
        policy = pool._pool().submit(os.sched_getscheduler, 0).result(timeout=60)
    finally:
        await pool.close()
    assert policy == os.SCHED_IDLE
    assert os.sched_getscheduler(0) == os.SCHED_OTHER
