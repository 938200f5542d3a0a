"""The node-wide keepalive (server/keepalive.py) that replaced websockets' task per
connection (fewer objects per idle connection, docs/BENCHMARKS.md): who gets pinged
when, that a peer answering pings stays, and that one that does not is cut with close
code 1011 "keepalive ping timeout" as websockets' own keepalive did."""

from __future__ import annotations

import asyncio
import struct
import weakref

import pytest

from server import keepalive
from server.guard import GuardedConnection
from server.keepalive import Keepalive

from .client import TestClient
from .conftest import ServerFactory


class Fake:
    """A connection as the keepalive sees it, recording what was done to it."""

    def __init__(self) -> None:
        self.ping_sent: float | None = None
        self.pings: list[float] = []
        self.timed_out = False

    def send_keepalive_ping(self, now: float) -> None:
        self.ping_sent = now
        self.pings.append(now)

    def ping_timed_out(self) -> None:
        self.timed_out = True


def test_visit_pings_waits_then_cuts() -> None:
    conn = Fake()
    ka = Keepalive(lambda: [conn], interval_s=20.0, timeout_s=20.0)
    ka.visit([conn], 100.0)
    assert conn.pings == [100.0]
    ka.visit([conn], 119.9)  # unanswered, not yet overdue: neither again nor cut
    assert conn.pings == [100.0] and not conn.timed_out
    ka.visit([conn], 120.0)
    assert conn.timed_out and conn.pings == [100.0]


def test_a_pong_makes_the_next_visit_ping_again() -> None:
    conn = Fake()
    ka = Keepalive(lambda: [conn], interval_s=20.0, timeout_s=20.0)
    ka.visit([conn], 0.0)
    conn.ping_sent = None  # what GuardedConnection does on a pong
    ka.visit([conn], 20.0)
    assert conn.pings == [0.0, 20.0] and not conn.timed_out


def test_without_a_timeout_it_pings_on_and_never_cuts() -> None:
    conn = Fake()
    ka = Keepalive(lambda: [conn], interval_s=20.0, timeout_s=None)
    for now in (0.0, 20.0, 40.0):
        ka.visit([conn], now)
    assert conn.pings == [0.0, 20.0, 40.0] and not conn.timed_out


def test_a_bad_interval_is_refused() -> None:
    with pytest.raises(ValueError, match="positive"):
        Keepalive(list, interval_s=0.0, timeout_s=None)


async def test_a_round_is_spread_over_the_slices() -> None:
    conns = [Fake() for _ in range(200)]
    ka = Keepalive(lambda: conns, interval_s=3600.0, timeout_s=None)  # the timer never fires
    try:
        for i in range(keepalive.SLICES):
            before = [len(c.pings) for c in conns]
            ka._tick()  # what the timer calls, SLICES times per interval
            pinged = {n for n, c in enumerate(conns) if len(c.pings) > before[n]}
            assert pinged == {n for n, c in enumerate(conns) if keepalive.slice_of(c) == i}
            assert len(pinged) < 30  # spread: ~200 / 20 a call
        assert all(len(c.pings) == 1 for c in conns)  # each once in the round
        gone = conns.pop(0)  # connections come and go: the others keep their slice
        conns.append(Fake())
        for c in conns[:-1]:
            c.ping_sent = None  # answered
        for _ in range(keepalive.SLICES):
            ka._tick()
        assert all(len(c.pings) == 2 for c in conns[:-1]) and len(conns[-1].pings) == 1
        assert len(gone.pings) == 1
    finally:
        ka.stop()


async def test_it_keeps_no_connection_alive() -> None:
    conns = [Fake() for _ in range(45)]
    gone = weakref.ref(conns[0])
    ka = Keepalive(lambda: conns, interval_s=3600.0, timeout_s=None)
    try:
        ka._tick()  # mid-round
        del conns[0]  # it closed: the node forgot it
        assert gone() is None  # freed at once, not at the end of the round
    finally:
        ka.stop()


async def test_a_client_that_answers_pings_stays(
    server_factory: ServerFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = await server_factory(ping_interval_s=0.02, ping_timeout_s=0.05)
    pinged = asyncio.Event()
    count = 0
    original = GuardedConnection.send_keepalive_ping

    def counting(conn: GuardedConnection, now: float) -> None:
        nonlocal count
        original(conn, now)
        count += 1
        if count >= 5:
            pinged.set()

    monkeypatch.setattr(GuardedConnection, "send_keepalive_ping", counting)
    client = await TestClient.connect(server.url)  # websockets answers pings itself
    async with asyncio.timeout(5):
        await pinged.wait()
    (conn,) = server.connections
    assert isinstance(conn.ws, GuardedConnection) and conn.ws.cut is None
    assert not conn.closing
    await client.close()


async def read_frame(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One unmasked server frame: (opcode, payload)."""
    first, second = await reader.readexactly(2)
    size = second & 0x7F
    if size == 126:
        (size,) = struct.unpack("!H", await reader.readexactly(2))
    elif size == 127:
        (size,) = struct.unpack("!Q", await reader.readexactly(8))
    return first & 0x0F, await reader.readexactly(size)


async def test_a_peer_that_never_answers_is_cut_with_1011(server_factory: ServerFactory) -> None:
    server = await server_factory(ping_interval_s=0.02, ping_timeout_s=0.05)
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                 b"Sec-WebSocket-Version: 13\r\n\r\n")
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 101")
    pings = 0
    async with asyncio.timeout(5):
        while True:
            opcode, payload = await read_frame(reader)  # read, but never send a pong
            if opcode == 0x9:
                pings += 1
            elif opcode == 0x8:
                break
    assert pings >= 1
    assert struct.unpack("!H", payload[:2])[0] == 1011
    assert payload[2:] == b"keepalive ping timeout"
    writer.close()
