"""A bare WebSocket client on a raw TCP stream: the handshake and masked frames by hand,
so an attack can send without ever reading (a library client would answer pings and drain
its socket), and open thousands of cheap connections."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import socket
import struct
import time

from bench.rawws import OP_BINARY, OP_CLOSE, OP_PING, OP_PONG, OP_TEXT, frame_head
from client_cli.sdk.session import (
    BUSY_PATIENCE_S,
    BUSY_STATUSES,
    MAX_BACKOFF_S,
    backoff_delay,
)
from protocol import PROTOCOL_VERSION, encode
from protocol import messages as m

__all__ = ["BUSY_PATIENCE_S", "BUSY_STATUSES", "OP_BINARY", "OP_CLOSE", "OP_PING", "OP_PONG",
           "OP_TEXT", "RawWs", "busy_backoff", "frame", "hello_frame"]

# A set-up connection refused "later" (HTTP 503: the node's admission budget; 429: the
# address's caps) is tried again with the SDK's backoff (``backoff_delay``: 0.1 s doubling
# to 5 s, jittered) for ``BUSY_PATIENCE_S``, as ``Session._open`` does. Only set-ups
# retry: a flood counts its refusals.
BUSY_MAX_BACKOFF_S = MAX_BACKOFF_S


def busy_backoff(attempt: int) -> float:
    """Seconds to wait after the ``attempt``-th (1-based) busy refusal in a row: the SDK's
    ``backoff_delay`` with its defaults (a name of its own so tests can move time)."""
    return backoff_delay(attempt)


def frame(opcode: int, payload: bytes) -> bytes:
    """One final client frame with a random mask (RFC 6455 §5.2): a hostile client that
    looks like any other."""
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return frame_head(opcode, len(payload)) + mask + masked


def hello_frame(name: str = "raw", batched: bool = False) -> bytes:
    """A binary frame holding a protocol ``hello`` (``batched``: it sets ``ds``, so as a
    spectator it takes one ``Diffs`` frame per tick)."""
    return frame(OP_BINARY, encode(m.Hello(version=PROTOCOL_VERSION, name=name,
                                           batched=batched)))


class RawWs:
    """One raw connection: ``status`` is the handshake's HTTP status (101 = open)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 status: int) -> None:
        self.reader, self.writer, self.status = reader, writer, status
        self.retries = 0  # busy refusals before this connection (``open_patiently``)

    @classmethod
    async def open(cls, host: str, port: int, *, source: str = "", rcvbuf: int = 0,
                   wait: float = 10.0) -> RawWs:
        """TCP connect (from ``source``; with a small receive buffer when ``rcvbuf``) and
        the opening handshake. Raises ``OSError``/``TimeoutError`` on failure."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            if rcvbuf:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            if source:
                sock.bind((source, 0))
            sock.setblocking(False)
            await asyncio.wait_for(asyncio.get_running_loop().sock_connect(sock, (host, port)),
                                   wait)
            reader, writer = await asyncio.open_connection(sock=sock, limit=1 << 20)
        except BaseException:
            sock.close()
            raise
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            f"Sec-WebSocket-Version: 13\r\n\r\n".encode())
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), wait)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
            head = b"HTTP/1.1 000 closed\r\n"
        except BaseException:
            writer.close()
            raise
        status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/") else 0
        return cls(reader, writer, status)

    @classmethod
    async def open_patiently(cls, host: str, port: int, *, source: str = "",
                             patience_s: float = BUSY_PATIENCE_S, wait: float = 10.0) -> RawWs:
        """``open``, tried again with ``busy_backoff`` while the handshake is refused 503
        or 429 and ``patience_s`` has not passed (a set-up's connection: the node admits
        many at its rate). Returns the last connection, whatever its ``status``."""
        give_up = time.monotonic() + patience_s
        attempt = 0
        while True:
            ws = await cls.open(host, port, source=source, wait=wait)
            if ws.status not in BUSY_STATUSES or time.monotonic() >= give_up:
                ws.retries = attempt
                return ws
            ws.close()
            attempt += 1
            await asyncio.sleep(busy_backoff(attempt))

    def send(self, data: bytes) -> None:
        """Queue bytes (already framed) on the transport."""
        self.writer.write(data)

    async def read_frame(self, wait: float = 10.0) -> tuple[int, bytes]:
        """The next server frame (opcode, payload); server frames are never masked."""
        async def read() -> tuple[int, bytes]:
            b0, b1 = await self.reader.readexactly(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", await self.reader.readexactly(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", await self.reader.readexactly(8))[0]
            return b0 & 0x0F, await self.reader.readexactly(n)
        return await asyncio.wait_for(read(), wait)

    def close(self) -> None:
        """Drop the TCP connection without a closing handshake."""
        with contextlib.suppress(Exception):
            self.writer.close()
