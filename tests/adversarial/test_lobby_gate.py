"""A burst of lobby operations waits its turn (``ServerConfig.lobby_concurrency``), and a
racer's move does not wait with it: under the Redis room flood up to 50 creations in flight
filled every loop iteration with their store replies' continuations, and an honest move
(~16 loop iterations on Redis) waited 67-114 ms (docs/SECURITY.md, "Where the honest
player's time goes")."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bench.attack.harness import Client, racing_player
from protocol import messages as m
from server import lobby
from server.app import Server
from server.config import ONE_HOST, ServerConfig

LIMIT = 2  # lobby operations at once in this test's node
FLOOD = 6  # creations sent at once


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    """A real server in this process, two lobby operations at a time."""
    started = Server(ServerConfig(port=0, host="127.0.0.1", lobby_concurrency=LIMIT,
                                  allow_volatile_store=True, **ONE_HOST))
    await started.start()
    yield started
    await started.stop()


def _hold_creations(server: Server, monkeypatch: pytest.MonkeyPatch,
                    release: asyncio.Event) -> list[str]:
    """From now on the store's ``create_room`` waits for ``release``; the codes of the
    calls that reached it, in order."""
    reached: list[str] = []
    store: Any = server.store
    inner = store.wrapped  # under the metrics wrapper, which caches its wrappers
    store.__dict__.pop("create_room", None)
    store._timed.pop("create_room", None)
    original = inner.create_room

    async def holding(record: Any) -> bool:
        reached.append(record.code)
        await release.wait()
        result: bool = await original(record)
        return result

    monkeypatch.setattr(inner, "create_room", holding)
    return reached


async def _until(gate: lobby.LobbyGate, inside: int, waiting: int) -> None:
    """Wait (on the gate's event, bounded) until it holds ``inside`` and queues
    ``waiting`` operations."""
    while True:
        gate.changed.clear()
        if gate.inside == inside and gate.waiting == waiting:
            return
        await asyncio.wait_for(gate.changed.wait(), 10)


async def test_a_burst_of_creations_waits_its_turn_and_a_move_does_not(
        server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"ws://127.0.0.1:{server.port}"
    racer, cycle = await racing_player(url, name="racer")  # its room made before the hold
    release = asyncio.Event()
    reached = _hold_creations(server, monkeypatch, release)
    flooders = [await Client.open(url, f"flood{i}") for i in range(FLOOD)]
    for client in flooders:
        await client.send(m.CreateRoom(settings=m.RoomSettings(variant="brisbane",
                                                              countdown_s=0)))
    gate = server.lobby_gate
    await _until(gate, inside=LIMIT, waiting=FLOOD - LIMIT)
    assert len(reached) == LIMIT  # without the gate all six are in the store at once

    # The racer's move is judged, stored and acked while the lobby is full and queued.
    await racer.send(m.Move(seq=1, move=cycle[0]))
    ack = await racer.expect(m.Accepted | m.Rejected)
    assert isinstance(ack, m.Accepted) and ack.seq == 1
    assert len(reached) == LIMIT and gate.waiting == FLOOD - LIMIT

    release.set()
    joined = [await client.expect(m.Joined) for client in flooders]
    assert sorted(j.code for j in joined) == sorted(reached) and len(set(reached)) == FLOOD
    await _until(gate, inside=0, waiting=0)
    for client in [racer, *flooders]:
        await client.close()
