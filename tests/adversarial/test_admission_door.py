"""A refused connection costs the node a ``Door`` and a canned answer, nothing of
websockets' (server/guard.py): no ``ServerProtocol`` (and its parser generator), no
``ServerConnection``, no handler task. Its answer is byte for byte the one the node sent
before the door existed: the literals below were read off the wire from main at
``647184e``, where the refusal was made inside websockets' connection object.

Counts are exact: the node's handshake budget runs on the test's clock, which never
moves (a burst of 4 is 3 shared + 1 reserved for light addresses)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Coroutine
from typing import Any

import pytest
from websockets.server import ServerProtocol

from server.app import Server
from server.config import ServerConfig
from server.guard import GuardedConnection

from ..clocks import HandClock

# Off the wire from main at 647184e (before the door), for the same requests.
BEFORE_429 = (b"HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain; charset=utf-8\r\n"
              b"Content-Length: 52\r\nConnection: close\r\n\r\n"
              b"too many connections from your address; retry later\n")
BEFORE_503 = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
              b"Content-Length: 36\r\nConnection: close\r\n\r\n"
              b"server busy or shutting down; retry\n")
HANDSHAKE = (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")


@pytest.fixture
async def counted(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[Server, Counter[str]]]:
    """A node (in this process, on the test's clock) with one connection per address and
    a burst of 4, and a count of what websockets builds for the connections it accepts."""
    built: Counter[str] = Counter()
    protocol_init = ServerProtocol.__init__
    connection_init = GuardedConnection.__init__

    def count_protocol(self: ServerProtocol, *args: Any, **kwargs: Any) -> None:
        built["protocol"] += 1
        protocol_init(self, *args, **kwargs)

    def count_connection(self: GuardedConnection, *args: Any, **kwargs: Any) -> None:
        built["connection"] += 1
        connection_init(self, *args, **kwargs)

    monkeypatch.setattr(ServerProtocol, "__init__", count_protocol)
    monkeypatch.setattr(GuardedConnection, "__init__", count_connection)
    server = Server(ServerConfig(
        host="127.0.0.1", port=0, allow_volatile_store=True, max_connections_per_address=1,
        connects_per_minute=1000, handshake_burst=4, handshakes_per_s=4.0,
        monotonic=HandClock()))
    await server.start()
    assert server._ws is not None
    handler = server._ws.handler

    def count_handler(conn: Any) -> Coroutine[Any, Any, None]:
        built["handler"] += 1  # websockets' connection_made starts a task with this
        return handler(conn)

    server._ws.handler = count_handler
    yield server, built
    await server.stop()


async def _knock(port: int, source: str) -> tuple[bytes, asyncio.StreamWriter]:
    """A websocket handshake from ``source``: the 101's head (the connection is kept),
    or the whole answer up to the server's close."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    writer.write(HANDSHAKE)
    head = await reader.readuntil(b"\r\n\r\n")
    if head.startswith(b"HTTP/1.1 101 "):
        return head, writer
    return head + await reader.read(), writer


async def test_a_refusal_builds_nothing_of_websockets_and_answers_as_before(
        counted: tuple[Server, Counter[str]]) -> None:
    server, built = counted
    kept: list[asyncio.StreamWriter] = []
    first, writer = await _knock(server.port, "127.0.0.90")
    kept.append(writer)
    assert first.startswith(b"HTTP/1.1 101 ")
    # The counters count: the admitted connection got websockets' three objects.
    assert built == {"protocol": 1, "connection": 1, "handler": 1}
    for _ in range(5):  # the address's one connection is open: 429, and nothing built
        answer, writer = await _knock(server.port, "127.0.0.90")
        writer.close()
        assert answer == BEFORE_429
    assert built == {"protocol": 1, "connection": 1, "handler": 1}
    # New addresses: the budget's 2 shared left, then the reserve's 1, then 503.
    for source in ("127.0.0.91", "127.0.0.92", "127.0.0.93"):
        head, writer = await _knock(server.port, source)
        kept.append(writer)
        assert head.startswith(b"HTTP/1.1 101 ")
    answers = []
    for source in ("127.0.0.94", "127.0.0.95"):
        answer, writer = await _knock(server.port, source)
        writer.close()
        answers.append(answer)
    assert answers == [BEFORE_503, BEFORE_503]
    assert built == {"protocol": 4, "connection": 4, "handler": 4}
    assert server.admitted == 4  # the refusals hold no slot
    for writer in kept:
        writer.close()
