"""``solrace serve`` reads Redis's persistence at the start: a Redis without AOF is
refused (the message names the fix and the flag); with ``--allow-volatile-store`` the
node serves and /healthz says degraded; with AOF it says ok."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import RedisProcess

from .harness import Node, NodeRefused

pytestmark = pytest.mark.redis


async def test_a_volatile_redis_is_refused_unless_accepted(
    redis_server: Callable[..., RedisProcess], tmp_path: Path
) -> None:
    redis = redis_server("--appendonly", "no")
    refused = Node(redis.url, tmp_path, "strict")
    with pytest.raises(NodeRefused) as caught:
        await refused.start()
    assert caught.value.status == 2
    message = caught.value.log
    assert "refusing to start" in message
    assert "appendonly yes" in message and "--allow-volatile-store" in message

    accepted = await Node(redis.url, tmp_path, "lenient", "--allow-volatile-store").start()
    try:
        status, body = await asyncio.to_thread(accepted.healthz)
        assert status == 200 and body.startswith("degraded:"), body
        assert "appendonly no" in body
    finally:
        assert await accepted.stop() == 0


async def test_an_aof_redis_is_healthy(
    redis_server: Callable[..., RedisProcess], tmp_path: Path
) -> None:
    redis = redis_server("--appendonly", "yes")
    node = await Node(redis.url, tmp_path, "durable").start()
    try:
        assert await asyncio.to_thread(node.healthz) == (200, "ok\n")
    finally:
        assert await node.stop() == 0
