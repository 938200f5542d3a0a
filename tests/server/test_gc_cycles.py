"""A connection that ends leaves no reference cycle on the server side.

The node freezes long-lived objects out of the garbage collector's walks
(server/gctune.py): a frozen object is still freed by reference counting, but a cycle
holding one is never found. So every way a connection ends must leave the server's
objects of that connection to reference counting alone. Checked that way: with automatic
collection off, each accepted connection's ``Door`` (server/guard.py), and an admitted
one's ``GuardedConnection`` and websockets protocol, must be freed (a
``weakref.finalize`` tells) once the connection ended. A cycle keeps them for ever, and
the wait fails naming them. (``gc.DEBUG_SAVEALL`` is not enough: a cycle through a
suspended generator, websockets' parser, is broken by closing the generator during the
collection, so it never shows in ``gc.garbage``.) The test clients live in the same
process; their objects are not tracked.

Then end to end with the tuning installed (``tune_after_start``): connections frozen
while open are freed once closed, without any full collection.
"""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import pytest
from websockets.exceptions import InvalidStatus

from server import gctune
from server.app import Server
from server.guard import Door, GuardedConnection

from .client import TestClient
from .conftest import ServerFactory


class Deaths:
    """Tracks every accepted connection's ``Door`` from the moment it is accepted, and an
    admitted one's ``GuardedConnection`` and websockets protocol, until each is freed."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.alive: dict[int, str] = {}  # id → type name, of what is not freed yet
        self.tracked = 0
        self.changed = asyncio.Event()
        original = GuardedConnection.connection_made
        door_made = Door.connection_made

        def connection_made(conn: GuardedConnection, transport: asyncio.BaseTransport) -> None:
            self._track(conn)
            self._track(conn.protocol)
            original(conn, transport)

        def door_connection_made(door: Door, transport: asyncio.BaseTransport) -> None:
            self._track(door)
            door_made(door, transport)

        monkeypatch.setattr(GuardedConnection, "connection_made", connection_made)
        monkeypatch.setattr(Door, "connection_made", door_connection_made)

    def _track(self, obj: object) -> None:
        self.alive[id(obj)] = type(obj).__qualname__
        self.tracked += 1
        weakref.finalize(obj, self._freed, id(obj))

    def _freed(self, key: int) -> None:
        del self.alive[key]
        self.changed.set()

    async def all_freed(self) -> None:
        """Wait (5 s at most) until every tracked object was freed; fail naming the
        ones that were not."""
        try:
            async with asyncio.timeout(5):
                while self.alive:
                    self.changed.clear()
                    await self.changed.wait()
        except TimeoutError:
            pytest.fail(f"not freed by reference counting: {sorted(self.alive.values())}")


@pytest.fixture
def collector() -> Iterator[None]:
    """Automatic collection off for the test: only reference counting frees."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


# A scenario returns the server, its admitted connections and its refused ones.
Scenario = Callable[[ServerFactory], Awaitable[tuple[Server, int, int]]]


async def client_closes(server_factory: ServerFactory) -> tuple[Server, int, int]:
    server = await server_factory()
    clients = [await TestClient.connect(server.url, f"c{i}") for i in range(5)]
    for client in clients:
        await client.close()
    return server, 5, 0


async def client_vanishes(server_factory: ServerFactory) -> tuple[Server, int, int]:
    server = await server_factory()
    clients = [await TestClient.connect(server.url, f"c{i}") for i in range(5)]
    for client in clients:
        client.ws.transport.abort()  # no closing handshake: the TCP connection just ends
    return server, 5, 0


async def idle_timeout(server_factory: ServerFactory) -> tuple[Server, int, int]:
    server = await server_factory(hello_timeout_s=0.05)
    clients = [await TestClient.connect(server.url, f"c{i}", hello=False) for i in range(3)]
    for client in clients:
        assert await client.closed()  # the server closed it: no hello in time
    return server, 3, 0


async def in_a_room(server_factory: ServerFactory) -> tuple[Server, int, int]:
    server = await server_factory()
    host = await TestClient.connect(server.url, "host")
    joined = await host.create(variant="spanish")
    guest = await TestClient.connect(server.url, "guest")
    await guest.join(joined.code)
    watcher = await TestClient.connect(server.url, "watcher")
    await watcher.join(joined.code, role="spectator")
    for client in (watcher, guest, host):
        await client.close()
    return server, 3, 0


async def refused(server_factory: ServerFactory) -> tuple[Server, int, int]:
    server = await server_factory(max_connections_per_address=1)
    kept = await TestClient.connect(server.url, "kept")
    for _ in range(3):
        with pytest.raises(InvalidStatus):  # 429 at admission (server/guard.py)
            await TestClient.connect(server.url, "refused")
    await kept.close()
    return server, 1, 3


async def server_stops(server_factory: ServerFactory) -> tuple[Server, int, int]:
    server = await server_factory()
    clients = [await TestClient.connect(server.url, f"c{i}") for i in range(3)]
    await server.stop()
    for client in clients:
        assert await client.closed()
    return server, 3, 0


@pytest.mark.parametrize("scenario", [client_closes, client_vanishes, idle_timeout,
                                      in_a_room, refused, server_stops],
                         ids=lambda s: s.__name__)
async def test_an_ended_connection_is_freed_by_reference_counting(
    server_factory: ServerFactory, monkeypatch: pytest.MonkeyPatch, collector: None,
    scenario: Scenario,
) -> None:
    deaths = Deaths(monkeypatch)
    _, admitted, refused_ = await scenario(server_factory)
    # a door each; a GuardedConnection and its protocol each admitted one, no more
    assert deaths.tracked == 3 * admitted + refused_
    await deaths.all_freed()


@pytest.fixture
async def tuned() -> AsyncIterator[gctune.Tuning]:
    """The node's GC tuning, installed for the test (no fall-back timer) and undone."""
    tuning = gctune.tune_after_start(every_s=None)
    try:
        yield tuning
    finally:
        tuning.undo()
        gc.collect()


async def test_connections_frozen_while_open_are_freed_when_closed(
    server_factory: ServerFactory, monkeypatch: pytest.MonkeyPatch, tuned: gctune.Tuning,
) -> None:
    server = await server_factory()
    deaths = Deaths(monkeypatch)
    clients = [await TestClient.connect(server.url, f"c{i}") for i in range(20)]
    frozen = gc.get_freeze_count()
    gc.collect(1)  # a generation-1 collection: the tuning freezes its survivors
    assert gc.get_freeze_count() > frozen  # the open connections among them
    assert len(deaths.alive) == 40
    for client in clients:
        await client.close()
    await deaths.all_freed()  # no collection walks frozen objects: reference counting did
