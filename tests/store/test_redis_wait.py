"""``--redis-wait-replicas N``: a move is stored (acknowledged) only once N replicas have
it. Real processes: a master without AOF and one replica."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from server.store import LogEntry, SeatRecord, StoreUnavailable
from server.store.records import RoomRecord
from server.store.redis import RedisStore
from tests.conftest import RedisProcess

pytestmark = pytest.mark.redis


async def _seated_room(store: RedisStore) -> str:
    room = RoomRecord(code="WAIT01", settings={}, seed=1, salt="00", commitment="c")
    assert await store.create_room(room)
    assert await store.add_seat("WAIT01", SeatRecord(seat=0, name="p"), 2) == 1
    return "WAIT01"


async def test_moves_wait_for_the_replica(redis_server: Callable[..., RedisProcess]) -> None:
    master = redis_server("--appendonly", "no")
    replica = redis_server("--appendonly", "no", "--replicaof", "127.0.0.1", str(master.port))
    deadline = time.monotonic() + 15
    while b"master_link_status:up" not in replica.command("INFO", "replication"):
        assert time.monotonic() < deadline, "the replica did not sync"
        await asyncio.sleep(0.05)  # bounded polling of the replica's state
    store = RedisStore.from_url(master.url, wait_replicas=1)
    try:
        found = await store.durability()
        assert found.durable is True and "1 replica(s)" in found.detail
        code = await _seated_room(store)
        await store.append_move(code, 1, 1, 1, LogEntry("1>f", 10), moves=1)
        assert [e.move for e in await store.read_log(code, 1)] == ["1>f"]
        replica.stop()
        with pytest.raises(StoreUnavailable, match="replica"):
            await store.append_move(code, 1, 1, 2, LogEntry("2>f", 20), moves=2)
        # on the master, not acknowledged; the same move sent again is recognised
        assert len(await store.read_log(code, 1)) == 2
    finally:
        await store.close()
    volatile = RedisStore.from_url(master.url)  # without WAIT, no AOF: volatile
    try:
        assert (await volatile.durability()).durable is False
    finally:
        await volatile.close()


def test_wait_needs_a_standalone_redis() -> None:
    with pytest.raises(ValueError, match="standalone"):
        RedisStore.from_url("redis://127.0.0.1:1/0?cluster=1", wait_replicas=1)
