"""A seat's standing before its first move: the deal's own foundation cards count as
progress, and a deal with no legal move leaves every seat stuck at once (issue #11)."""

from __future__ import annotations

from protocol import messages as m
from protocol.verify import verify_results

from .client import TestClient
from .conftest import ServerFactory

# Perseverance seed 1: the four Aces start on the foundations (RULES: progress 4) and
# "10>4" is a tableau move (no card goes home, so progress stays 4).
PERSEVERANCE_SEED = 1
# Fortress seed 6878202754727873932 deals no legal move at all (reported in issue #11).
FORTRESS_NO_MOVE_SEED = 6878202754727873932


async def _two_players(url: str, **settings: object) -> tuple[TestClient, TestClient]:
    host = await TestClient.connect(url, "host")
    joined = await host.create(countdown_s=0, max_players=2, **settings)
    guest = await TestClient.connect(url, "guest")
    await guest.join(joined.code)
    for client in (host, guest):
        await client.send(m.Ready())
    return host, guest


async def test_perseverance_seat_that_never_moved_has_the_aces(
    server_factory: ServerFactory,
) -> None:
    server = await server_factory(seed_source=lambda: PERSEVERANCE_SEED, rate_burst=1000)
    host, guest = await _two_players(server.url, variant="perseverance", rank_by="progress")
    await host.expect(m.Started)
    await guest.expect(m.Started)
    assert isinstance(await guest.move("10>4"), m.Accepted)
    await guest.send(m.Resign())
    await host.send(m.Resign())
    results = await host.expect(m.Results)
    by_seat = {e.seat: e for e in results.ranking}
    assert (by_seat[1].progress, by_seat[1].moves) == (4, 0)
    assert (by_seat[2].progress, by_seat[2].moves) == (4, 1)
    # equal progress, neither reached it by moving: fewer moves ranks first
    assert [(e.rank, e.seat) for e in results.ranking] == [(1, 1), (2, 2)]
    assert verify_results(results).problems == []


async def test_deal_without_a_legal_move_is_stuck_at_once(
    server_factory: ServerFactory,
) -> None:
    server = await server_factory(seed_source=lambda: FORTRESS_NO_MOVE_SEED)
    host, guest = await _two_players(server.url, variant="fortress")  # untimed
    results = await host.expect(m.Results)
    assert results.reason == "all_done"
    assert sorted((e.seat, e.status, e.moves) for e in results.ranking) == [
        (1, "stuck", 0), (2, "stuck", 0)]
    assert await guest.expect(m.Results) == results
    assert verify_results(results).problems == []
    refused = await host.move("1>2")
    assert isinstance(refused, m.Rejected) and refused.code == "finished"
