"""A websocket client cheap enough to open thousands of times in one Python process: the
load generator's spectators and idle connections.

It speaks just enough RFC 6455 to be a real client (the upgrade handshake, masked client
frames, answering pings so the server keeps it) and, once it has joined, only counts the
frames and bytes it receives without decoding them: a thousand spectators of a busy room
receive hundreds of thousands of frames a second, and a full client (``websockets`` plus
MessagePack decoding) would make the load generator, not the server, the bottleneck.

Joining is detected without knowing the server: the client sends its setup frames and
then ``Ping{nonce}``; a server handles a connection's messages in order, so the ``Pong``
means everything before it was handled. Both solrace and the bare baselines answer it.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Callable, Sequence

from protocol import decode_server, encode
from protocol import messages as m

_ZERO_MASK = b"\x00\x00\x00\x00"  # masking with zeros leaves the payload as it is
OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x1, 0x2, 0x8, 0x9, 0xA
MAX_PENDING = 1 << 20  # bytes buffered before the client gives up on a malformed stream


def frame_head(opcode: int, n: int) -> bytes:
    """The header of one final, masked client frame of ``n`` payload bytes (RFC 6455
    §5.2), without the mask key."""
    if n < 126:
        return struct.pack("!BB", 0x80 | opcode, 0x80 | n)
    if n < 1 << 16:
        return struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
    return struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)


def client_frame(payload: bytes, opcode: int = OP_BINARY) -> bytes:
    """One final, masked client frame carrying ``payload``."""
    return frame_head(opcode, len(payload)) + _ZERO_MASK + payload


class RawClient(asyncio.Protocol):
    """One connection. ``await RawClient.open(...)``; then ``frames``/``bytes`` count what
    arrived after ``joined`` (the reply to the setup's closing ping)."""

    def __init__(self, nonce: int) -> None:
        self.nonce = nonce
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.upgraded = False
        self.joined = asyncio.get_running_loop().create_future()
        self.frames = 0
        self.bytes = 0
        self.arrived = asyncio.Event()  # set at each counted frame (tests wait on it)
        self.closed = False
        # Called with (buffer, start, end) for each counted frame's payload (a subclass
        # that looks at what it received: ``bench/movers.py``); None for spectators.
        self.on_frame: Callable[[bytearray, int, int], None] | None = None

    @classmethod
    async def open(cls, port: int, setup: Sequence[bytes], nonce: int,
                   source: str = "127.0.0.1") -> RawClient:
        """Connect from ``source`` (a 127.0.0.x address: each gives its own ephemeral
        ports), upgrade, send the ``setup`` frames (encoded client messages) then
        ``Ping{nonce}``; returns once the matching ``Pong`` came back."""
        loop = asyncio.get_running_loop()
        transport, client = await loop.create_connection(
            lambda: cls(nonce), "127.0.0.1", port, local_addr=(source, 0)
        )
        client.transport = transport  # (uvloop may call connection_made after we resume)
        key = "dGhlIHNhbXBsZSBub25jZQ=="  # RFC 6455 sample: any 16 bytes, base64
        handshake = (f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                     f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                     "Sec-WebSocket-Version: 13\r\n\r\n").encode()
        frames = [*setup, encode(m.Ping(nonce=nonce))]
        # The frames may follow the upgrade request at once: the server reads them after
        # its 101 response, in order.
        transport.write(handshake + b"".join(client_frame(f) for f in frames))
        await client.joined
        return client

    # -- asyncio.Protocol (the transport is kept by ``open``: uvloop's is not an
    # ``asyncio.Transport`` subclass, and may announce itself after ``open`` resumes)
    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if not self.joined.done():
            self.joined.set_exception(ConnectionError(f"closed before joining: {exc}"))

    def data_received(self, data: bytes) -> None:
        buf = self.buffer
        buf += data
        if not self.upgraded:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            status = bytes(buf[:end]).split(b"\r\n", 1)[0]
            if b" 101 " not in status:
                self._fail(f"upgrade refused: {status.decode(errors='replace')}")
                return
            del buf[: end + 4]
            self.upgraded = True
        self._frames()

    def _frames(self) -> None:
        buf = self.buffer
        pos, size = 0, len(buf)
        joined = self.joined.done()
        while size - pos >= 2:
            opcode, n = buf[pos] & 0x0F, buf[pos + 1] & 0x7F
            head = 2
            if n == 126:
                if size - pos < 4:
                    break
                n, head = (buf[pos + 2] << 8) | buf[pos + 3], 4
            elif n == 127:
                if size - pos < 10:
                    break
                n, head = struct.unpack_from("!Q", buf, pos + 2)[0], 10
            if size - pos < head + n:
                break
            start = pos + head
            pos = start + n
            if joined and opcode == OP_BINARY:
                self.frames += 1
                self.bytes += n
                self.arrived.set()
                if self.on_frame is not None:
                    self.on_frame(buf, start, pos)
            elif opcode == OP_PING:
                self._send(client_frame(bytes(buf[start:pos]), OP_PONG))
            elif opcode == OP_CLOSE:
                self._fail("closed by the server")
                return
            elif not joined and opcode == OP_BINARY:
                joined = self._setup_reply(bytes(buf[start:pos]))
        del buf[:pos]
        if len(buf) > MAX_PENDING:
            self._fail("frame larger than the client accepts")

    def _setup_reply(self, payload: bytes) -> bool:
        message = decode_server(payload)
        if isinstance(message, m.Error):
            self._fail(f"server error during setup: {message.code}: {message.message}")
        elif isinstance(message, m.Pong) and message.nonce == self.nonce:
            self.joined.set_result(None)
            return True
        return False

    def _send(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def _fail(self, why: str) -> None:
        if not self.joined.done():
            self.joined.set_exception(ConnectionError(why))
        self.close()

    def close(self) -> None:
        """Drop the connection (no closing handshake: the benchmark is over)."""
        if self.transport is not None:
            self.transport.abort()


def source_address(i: int, spread: int = 8) -> str:
    """The loopback source address of connection ``i``: 127.0.0.2 .. 127.0.0.(1+spread),
    round-robin, so 10,000 connections never exhaust one address's ephemeral ports."""
    return f"127.0.0.{2 + i % spread}"
