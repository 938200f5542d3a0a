"""The Redis store under a burst of concurrent operations: more at once than the
connection pool holds wait for a connection instead of failing (redis-py's default
pool refuses the 101st at once with "Too many connections", which a crowd of spectator
joins met: docs/SECURITY.md)."""

from __future__ import annotations

import asyncio

from server.store import RoomRecord
from server.store.redis import POOL_MAX, RedisStore


async def test_a_burst_beyond_the_pool_waits_instead_of_failing(redis_url: str) -> None:
    store = RedisStore.from_url(redis_url)
    try:
        assert await store.create_room(RoomRecord(code="POOL01", settings={}, seed=1,
                                                  salt="00", commitment="c"))
        burst = 3 * POOL_MAX  # each holds a connection while its reply is on the way
        found = await asyncio.gather(*(store.get_room("POOL01") for _ in range(burst)))
        assert [r.code if r else None for r in found] == ["POOL01"] * burst
    finally:
        await store.close()
