"""Redis going away mid-race, and a whole race on a 3-master Redis Cluster, with real
``solrace serve`` processes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from protocol import messages as m
from tests.conftest import RedisClusterProcesses, RedisProcess

from .conftest import NodeFactory
from .test_nodes import finish, start_race


async def test_redis_outage_rejects_retryably_and_loses_nothing(
    redis_server: Callable[..., RedisProcess], nodes: NodeFactory
) -> None:
    # AOF with fsync on every write: what an acknowledged move needs to survive a
    # Redis crash (deploy/README.md)
    redis = redis_server("--appendonly", "yes", "--appendfsync", "always")
    a, b = await nodes(redis.url, 2)
    p1, p2, spectator, watching = await start_race((a.url, b.url, b.url), seed=3)
    await asyncio.gather(p1.play(6), p2.play(6))
    assert [await asyncio.to_thread(n.healthz) for n in (a, b)] == [(200, "ok\n")] * 2

    redis.stop()  # SIGKILL: a crash, not a shutdown
    move = p1.next_move()
    await p1.send(m.Move(seq=p1.seq + 1, move=move))
    reply = await p1.expect(m.Rejected)
    assert (reply.code, reply.retryable, reply.expected) == ("store_unavailable", True, p1.seq + 1)
    for node in (a, b):
        status, body = await asyncio.to_thread(node.healthz)
        assert status == 503 and "unhealthy" in body, (node.name, status, body)

    redis.start()  # same port; the AOF brings every acknowledged move back
    # Each move is retried while the nodes still report store_unavailable; play() fails
    # the test if one stays rejected past its retry guard (a liveness bound, not a timing).
    await asyncio.gather(p1.play(6), p2.play(6))
    assert len(p1.acked) > 6 and len(p2.acked) > 6
    assert [await asyncio.to_thread(n.healthz) for n in (a, b)] == [(200, "ok\n")] * 2
    results = await finish(p1, p2, spectator, watching)
    assert spectator.moves == {log.seat: log.moves for log in results.logs}


async def test_a_race_on_redis_cluster(
    redis_cluster: RedisClusterProcesses, nodes: NodeFactory
) -> None:
    a, b = await nodes(redis_cluster.url, 2)
    races = [await start_race((a.url, b.url, a.url), seed=s) for s in (11, 12, 13)]
    await asyncio.gather(*(r.play(8) for p1, p2, _, _ in races for r in (p1, p2)))
    for p1, p2, spectator, watching in races:
        results = await finish(p1, p2, spectator, watching)
        assert spectator.moves == {log.seat: log.moves for log in results.logs}
    total = sum(len(r.acked) for p1, p2, _, _ in races for r in (p1, p2))
    assert total > 0
    for node in (a, b):
        assert "CROSSSLOT" not in node.log() and "Traceback" not in node.log()
