"""A connection that ends leaves no reference cycle on the server side.

The node freezes long-lived objects out of the garbage collector's walks
(server/gctune.py): a frozen object is still freed by reference counting, but a cycle
holding one is never found. So every way a connection ends must leave the server's
objects of that connection free of cycles. Checked with the collector itself: with
automatic collection off and ``gc.DEBUG_SAVEALL`` on, ``gc.collect()`` keeps every
unreachable object it finds in ``gc.garbage``; none may belong to the server side (our
modules, websockets' server classes, or a frame of their code). The test clients live
in the same process and make cycles of their own (websockets' client side); those are
not the node's and are left out.

Then end to end with the tuning installed (``tune_after_start``): connections frozen
while open are freed once closed, without any full collection.
"""

from __future__ import annotations

import asyncio
import gc
import types
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import InvalidStatus
from websockets.server import ServerProtocol

from server import gctune
from server.app import Server
from server.connection import Connection
from server.guard import GuardedConnection

from .client import TestClient
from .conftest import ServerFactory

SERVER_DIR = str(Path(__import__("server").__file__).parent)
WEBSOCKETS_SERVER_FILES = ("websockets/server.py", "websockets/asyncio/server.py")


def server_side(obj: object) -> bool:
    """True for the node's objects: its classes, websockets' server classes, frames of
    their code."""
    kind = type(obj)  # not isinstance: a dead weakref.proxy raises on it
    if issubclass(kind, GuardedConnection | ServerProtocol | Connection):
        return True
    if kind.__module__.split(".")[0] == "server":
        return True
    if kind is types.FrameType:
        name = obj.f_code.co_filename  # type: ignore[attr-defined]
        return name.startswith(SERVER_DIR) or name.endswith(WEBSOCKETS_SERVER_FILES)
    return False


class Ends:
    """Counts ``connection_lost`` calls on the server side (an event to wait on, not a
    sleep): a connection has ended for the node once its TCP connection is lost."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        self.changed = asyncio.Event()
        original = GuardedConnection.connection_lost

        def connection_lost(conn: GuardedConnection, exc: Exception | None) -> None:
            original(conn, exc)
            self.count += 1
            self.changed.set()

        monkeypatch.setattr(GuardedConnection, "connection_lost", connection_lost)

    async def reach(self, count: int) -> None:
        """Wait until ``count`` connections have ended (5 s at most)."""
        async with asyncio.timeout(5):
            while self.count < count:
                self.changed.clear()
                await self.changed.wait()


async def settle(server: Server) -> None:
    """Wait until the node's handler tasks (ours and websockets') have finished."""
    assert server._ws is not None
    tasks = set(server._handlers) | set(server._ws.handler_tasks)
    if tasks:
        await asyncio.wait(tasks, timeout=5)


@pytest.fixture
def collector() -> Iterator[None]:
    """Automatic collection off for the test (so nothing is collected before the check),
    everything back afterwards."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def server_garbage() -> list[str]:
    """Collect, keeping what is unreachable; the server side's share, by type."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        return sorted(type(o).__qualname__ for o in gc.garbage if server_side(o))
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


Scenario = Callable[[ServerFactory], Awaitable[tuple[Server, int]]]


async def client_closes(server_factory: ServerFactory) -> tuple[Server, int]:
    server = await server_factory()
    clients = [await TestClient.connect(server.url, f"c{i}") for i in range(5)]
    for client in clients:
        await client.close()
    return server, 5


async def client_vanishes(server_factory: ServerFactory) -> tuple[Server, int]:
    server = await server_factory()
    clients = [await TestClient.connect(server.url, f"c{i}") for i in range(5)]
    for client in clients:
        client.ws.transport.abort()  # no closing handshake: the TCP connection just ends
    return server, 5


async def idle_timeout(server_factory: ServerFactory) -> tuple[Server, int]:
    server = await server_factory(hello_timeout_s=0.05)
    clients = [await TestClient.connect(server.url, f"c{i}", hello=False) for i in range(3)]
    for client in clients:
        assert await client.closed()  # the server closed it: no hello in time
    return server, 3


async def in_a_room(server_factory: ServerFactory) -> tuple[Server, int]:
    server = await server_factory()
    host = await TestClient.connect(server.url, "host")
    joined = await host.create(variant="spanish")
    guest = await TestClient.connect(server.url, "guest")
    await guest.join(joined.code)
    watcher = await TestClient.connect(server.url, "watcher")
    await watcher.join(joined.code, role="spectator")
    for client in (watcher, guest, host):
        await client.close()
    return server, 3


async def refused(server_factory: ServerFactory) -> tuple[Server, int]:
    server = await server_factory(max_connections_per_address=1)
    kept = await TestClient.connect(server.url, "kept")
    for _ in range(3):
        with pytest.raises(InvalidStatus):  # 429 at admission (server/guard.py)
            await TestClient.connect(server.url, "refused")
    await kept.close()
    return server, 4


async def server_stops(server_factory: ServerFactory) -> tuple[Server, int]:
    server = await server_factory()
    clients = [await TestClient.connect(server.url, f"c{i}") for i in range(3)]
    await server.stop()
    for client in clients:
        assert await client.closed()
    return server, 3


@pytest.mark.parametrize("scenario", [client_closes, client_vanishes, idle_timeout,
                                      in_a_room, refused, server_stops],
                         ids=lambda s: s.__name__)
async def test_an_ended_connection_leaves_no_cycle(
    server_factory: ServerFactory, monkeypatch: pytest.MonkeyPatch, collector: None,
    scenario: Scenario,
) -> None:
    ends = Ends(monkeypatch)
    server, count = await scenario(server_factory)
    await ends.reach(count)
    await settle(server)
    assert server_garbage() == []


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
    ends = Ends(monkeypatch)
    clients = [await TestClient.connect(server.url, f"c{i}") for i in range(20)]
    alive: list[weakref.ref[Any]] = [weakref.ref(c.ws) for c in server.connections]
    assert len(alive) == 20
    frozen = gc.get_freeze_count()
    gc.collect(1)  # a generation-1 collection: the tuning freezes its survivors
    assert gc.get_freeze_count() > frozen  # the open connections among them
    assert all(ref() is not None for ref in alive)
    for client in clients:
        await client.close()
    await ends.reach(20)
    await settle(server)
    gc.collect()  # walks no frozen object: only reference counting can free them
    assert [ref() for ref in alive] == [None] * 20
