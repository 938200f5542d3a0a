"""Two nodes sharing one Redis act as one service: a race across nodes, a spectator on
the other node, a takeover from one node to the other, the finish decided once."""

from __future__ import annotations

import asyncio
import random

import pytest

from protocol import messages as m
from protocol.verify import verify_results

from .client import Board, TestClient, play_moves, start_and_resign
from .conftest import ServerFactory

pytestmark = pytest.mark.redis


async def test_a_race_across_two_nodes(server_factory: ServerFactory, redis_url: str) -> None:
    a = await server_factory(store_url=redis_url, node_id="a", rate_burst=1000)
    b = await server_factory(store_url=redis_url, node_id="b", rate_burst=1000)
    one = await TestClient.connect(a.url, "one")
    two = await TestClient.connect(b.url, "two")
    watcher = await TestClient.connect(b.url, "watcher")
    joined = await one.create(variant="brisbane", countdown_s=0)
    await two.join(joined.code)
    await watcher.join(joined.code, role="spectator")
    await one.send(m.Ready())
    await two.send(m.Ready())
    boards = [Board((await c.expect(m.Started)).boards[0].view) for c in (one, two)]
    rng = random.Random(5)
    await asyncio.gather(play_moves(one, boards[0], 8, rng.choice),
                         play_moves(two, boards[1], 8, rng.choice))
    progress = await two.expect(m.Progress)
    assert progress.seat == 1  # node a's move reached node b
    # Seat 1 moves from node a to node b; node a closes the old connection.
    moved = await TestClient.connect(b.url, "one-on-b", token=one.token, seen=one.seq)
    await moved.expect(m.Joined)
    assert (await one.expect(m.Closing)).code == "taken_over"
    moved.seq = one.seq
    await play_moves(moved, boards[0], 3, rng.choice)
    await moved.send(m.Resign())
    await two.send(m.Resign())
    results = await watcher.expect(m.Results)
    assert await moved.expect(m.Results) == results
    assert verify_results(results).problems == []
    assert [len(log.moves) for log in results.logs] == [moved.seq, two.seq]
    seen = {s: Board(b.view) for s, b in
            ((b.seat, b) for b in watcher.received(m.Started)[0].boards)}
    for diff in watcher.received(m.Diff):
        seen[diff.seat].apply(diff.move, diff.revealed, diff.hash)
    assert seen[1].view == boards[0].view and seen[2].view == boards[1].view


async def test_a_rematch_across_two_nodes(server_factory: ServerFactory, redis_url: str) -> None:
    nodes = [await server_factory(store_url=redis_url, node_id=n, rate_burst=1000)
             for n in "ab"]
    one, two, watcher = [await TestClient.connect(nodes[i].url, name)
                         for i, name in ((0, "one"), (1, "two"), (1, "watcher"))]
    joined = await one.create(variant="spanish", countdown_s=0)
    await two.join(joined.code)
    await watcher.join(joined.code, role="spectator")
    await start_and_resign([one, two])
    first = await watcher.expect(m.Results)
    await one.send(m.Ready())  # node a asks, then node b: the last one triggers the round
    await two.send(m.Ready())
    again = [await c.expect(m.Joined) for c in (one, two, watcher)]
    assert {(j.round, j.phase, j.commitment) for j in again} == {(2, "lobby", again[0].commitment)}
    assert again[0].commitment != first.commitment
    await start_and_resign([one, two])
    second = await watcher.expect(m.Results)
    assert second.round == 2 and verify_results(second, again[0].commitment).problems == []
    for client in (one, two, watcher):
        await client.close()
