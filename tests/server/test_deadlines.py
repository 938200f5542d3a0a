"""Races whose every player left still end (issue #11): the time limit and the abandon
grace are store deadlines, fired by the sweeper of whichever node is alive, not timers
owned by a player's connection."""

from __future__ import annotations

from protocol import messages as m
from protocol.verify import verify_results

from .client import TestClient
from .conftest import ServerFactory


async def _everyone_leaves(url: str, **settings: object) -> TestClient:
    one = await TestClient.connect(url, "one")
    two = await TestClient.connect(url, "two")
    watcher = await TestClient.connect(url, "watcher")
    joined = await one.create(variant="fortress", countdown_s=0, **settings)
    await two.join(joined.code)
    await watcher.join(joined.code, role="spectator")
    for client in (one, two):
        await client.send(m.Ready())
    for client in (one, two):
        await client.expect(m.Started)
        await client.close()  # right after the start, nobody plays
    return watcher


async def test_a_timed_race_everyone_left_ends_at_its_limit(
    server_factory: ServerFactory,
) -> None:
    server = await server_factory(seed_source=lambda: 5)
    watcher = await _everyone_leaves(server.url, time_limit_s=1)
    results = await watcher.expect(m.Results, wait=15)
    assert results.reason == "time"
    assert [e.status for e in results.ranking] == ["timeout", "timeout"]
    assert verify_results(results).problems == []


async def test_an_untimed_race_everyone_left_ends_after_the_grace(
    server_factory: ServerFactory,
) -> None:
    server = await server_factory(seed_source=lambda: 5, abandon_after_s=0.3)
    watcher = await _everyone_leaves(server.url)
    results = await watcher.expect(m.Results, wait=15)
    assert results.reason == "all_done"
    assert [e.status for e in results.ranking] == ["resigned", "resigned"]
    assert verify_results(results).problems == []
