"""Every failure out of a redis-py call is ``StoreUnavailable`` (the client then hears
``store_unavailable``, retryable), never an unexpected exception (``internal``). The
failures are the ones seen in the field: a Cluster failover closes a connection under a
command (``RuntimeError: handler is closed``), a master is down (``ClusterDownError``),
a socket resets, a command times out, a slot map being rebuilt has holes."""

from __future__ import annotations

import pytest
from redis.exceptions import ClusterDownError, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from server.store import StoreUnavailable
from server.store.redis import RedisStore

FAILURES = [
    RuntimeError("handler is closed"),
    ClusterDownError("CLUSTERDOWN The cluster is down"),
    TryAgainError("TRYAGAIN"),
    RedisConnectionError("Connection reset by peer"),
    RedisTimeoutError("Timeout reading from socket"),
    ConnectionResetError(104, "Connection reset by peer"),
    TimeoutError(),
    KeyError("slot 1234"),
    IndexError("list index out of range"),
]


@pytest.mark.parametrize("failure", FAILURES, ids=lambda e: type(e).__name__)
async def test_every_redis_failure_is_store_unavailable(failure: Exception) -> None:
    store = RedisStore.from_url("redis://127.0.0.1:1/0")  # never connected: calls fail

    async def fail() -> None:
        raise failure

    with pytest.raises(StoreUnavailable) as caught:
        await store._run("get room", fail)
    assert caught.value.__cause__ is failure
    await store.close()


async def test_a_store_that_cannot_be_reached_is_unavailable() -> None:
    store = RedisStore.from_url("redis://127.0.0.1:1/0")  # nothing listens on port 1
    with pytest.raises(StoreUnavailable):
        await store.get_room("ABCDEF")
    assert await store.healthy() is False
    await store.close()
