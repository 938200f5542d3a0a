"""A connection's outbound side: every frame the server sends to one client, written
straight to the transport while it is not backed up, else queued within the
connection's bounds and drained by a writer task; and the websocket framing the direct
writes use (``binary_frame``, ``wire_frame``).

``Outbound`` is the base of ``server.connection.Connection`` (which adds receiving,
the session and dispatch): its state is the backlog, the frames framed and not yet
written and the close to send. It never reads.
"""

from __future__ import annotations

import asyncio
import logging
import struct
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode
from websockets.protocol import State

from protocol import Code, encode
from protocol import messages as m

from .config import ServerConfig
from .metrics import Metrics

log = logging.getLogger("server.connection")  # the same logger as the connection's

# websocket close codes for our Closing reasons
_WS_CLOSE = {
    Code.SHUTTING_DOWN: 1001,  # going away
    Code.SLOW_CONSUMER: 1008,  # policy violation
    Code.ADDRESS_LIMIT: 1008,
    Code.TAKEN_OVER: 1000,
    Code.IDLE_TIMEOUT: 1000,
    Code.VERSION_MISMATCH: 1002,
}


_OPEN = State.OPEN  # read per spectator per tick: a module global, not an enum lookup
_last_wire: tuple[bytes, bytes] | None = None  # (payload, its frame): ``wire_frame``

# A server's unmasked FIN binary frame header (RFC 6455 5.2) by payload length: one byte
# of opcode, then the length in 7 bits, or 126 + 16 bits, or 127 + 64 bits.
_SHORT_HEADS = [bytes((0x82, n)) for n in range(126)]
_HEAD_16 = struct.Struct("!BBH")
_HEAD_64 = struct.Struct("!BBQ")


def binary_frame(payload: bytes) -> bytes:
    """``payload`` as one complete websocket binary frame from a server (FIN set,
    unmasked, no extension): the bytes websockets' ``Frame.serialize`` makes for it
    (tests/server/test_ack_framing.py compares them), without its Frame object, check
    and buffer (about 1 µs per frame: every ack goes this way)."""
    n = len(payload)
    if n < 126:
        return _SHORT_HEADS[n] + payload
    if n < 65536:
        return _HEAD_16.pack(0x82, 126, n) + payload
    return _HEAD_64.pack(0x82, 127, n) + payload


def wire_frame(payload: bytes) -> bytes:
    """``payload`` as one complete websocket binary frame as a server sends it (FIN set,
    unmasked, no extension), framed by websockets itself: the same bytes for every
    connection that negotiated no extension. The last payload's frame is kept (by
    identity), so a payload going to many connections in a row is framed once."""
    global _last_wire
    last = _last_wire
    if last is not None and last[0] is payload:
        return last[1]
    wire = Frame(Opcode.BINARY, payload).serialize(mask=False)
    _last_wire = (payload, wire)
    return wire


class Node(Protocol):
    """The node as a connection's outbound side sees it."""

    config: ServerConfig
    metrics: Metrics
    # Tests set this to see every frame sent to every connection (leak checks).
    frame_hook: Callable[[Any, bytes], None] | None


class Outbound:
    """One client's outbound frames (the module docstring).

    Frames go straight to the transport while it is not backed up (the common case:
    no task switch, no queue; the frames of one loop tick in one write); once the
    transport holds ``DIRECT_WRITE_LIMIT`` bytes, frames wait in a bounded queue drained
    by a writer task that exists only while there is a backlog (or a close to send).

    A frame going to many connections (the spectators' tick) is framed once for all of
    them (``wire_frame``) and written by the caller to the transports
    ``shared_transport`` hands out: those with nothing ahead of the frame on them.
    """

    __slots__ = (
        "_closing", "_loop", "_protocol", "_queue", "_queued_bytes", "_stopped",
        "_transport", "_unflushed", "_unflushed_frames", "_writer_task", "config", "id",
        "receiving", "server", "ws",
    )

    # Bytes in the transport's buffer below which a frame is written at once (asyncio's
    # default high-water mark: below it the transport does not ask anyone to wait).
    DIRECT_WRITE_LIMIT = 64 * 1024

    def __init__(self, server: Node, ws: ServerConnection, conn_id: int) -> None:
        self.server = server
        self.config = server.config
        self.ws = ws
        self.id = conn_id
        # websockets' protocol and the transport, read per spectator per tick
        # (``shared_transport``): held here, one object fewer to reach on that path. A
        # stand-in without a transport has no shared path (None).
        transport = getattr(ws, "transport", None)
        self._transport: Any = transport
        self._protocol: Any = ws.protocol if transport is not None else None
        # The backlog, created at the first frame that has to wait: an empty deque is
        # ~0.7 KiB, on every idle connection (docs/BENCHMARKS.md, the conns row).
        self._queue: deque[bytes] | None = None
        self._queued_bytes = 0  # sum of len() over _queue
        self._unflushed = 0  # bytes framed this tick, written at its end (``_flush``)
        self._unflushed_frames = 0
        self._writer_task: asyncio.Task[None] | None = None
        self._closing: tuple[Code, str] | None = None
        self._stopped = False
        # The loop the connection is served on, found at its first frame sent (each
        # get_running_loop() costs a getpid() on Python 3.11: this is once per ack).
        self._loop: asyncio.AbstractEventLoop | None = None
        self.receiving = False  # set by the protocol while it hands frames over (``flush``)

    def send_frame(self, frame: bytes) -> None:
        """Send an encoded frame: written to the transport at once unless it is backed
        up, else queued; a client whose backlog passes ``outbound_queue`` frames or
        ``max_outbound_bytes`` is closed (slow_consumer)."""
        if self._closing is not None or self._stopped:
            return
        # ``_admit``'s test in place (a call less per frame); ``_admit`` refuses
        transport = getattr(self.ws, "transport", None)
        buffered = 0 if transport is None else int(transport.get_write_buffer_size())
        queue, config = self._queue, self.config
        if not ((queue is None or len(queue) < config.outbound_queue)
                and self._queued_bytes + self._unflushed + buffered + len(frame)
                <= config.max_outbound_bytes):
            buffered = self._admit(len(frame))
            if buffered < 0:
                return
        hook = self.server.frame_hook
        if hook is not None:  # tests: see every frame at the moment it is sent or queued
            hook(self, frame)
        self._emit(frame, buffered)

    def _admit(self, size: int) -> int:
        """The bytes in the transport's buffer (for ``_emit``: read once per frame), or -1
        (and the client closed as a slow consumer) if ``size`` more bytes would pass the
        connection's bounds (``outbound_queue``, ``max_outbound_bytes``)."""
        ws = self.ws
        transport = getattr(ws, "transport", None)
        buffered = 0 if transport is None else int(transport.get_write_buffer_size())
        queue = self._queue
        if ((queue is None or len(queue) < self.config.outbound_queue)
                and self._queued_bytes + self._unflushed + buffered + size
                <= self.config.max_outbound_bytes):
            return buffered
        if queue is not None:
            queue.clear()  # it cannot keep up: drop the backlog, tell it why
        self._queued_bytes = 0
        self.close_with(Code.SLOW_CONSUMER, "the client did not read fast enough")
        cut_off = getattr(ws, "cut_off", None)  # server.guard: 1008, then abort
        if cut_off is not None:  # our writer may be blocked on a peer that never reads:
            # if Closing has not gone out by then, fail the websocket under it
            asyncio.get_running_loop().call_later(
                self.config.shutdown_grace_s, cut_off, Code.SLOW_CONSUMER)
        return -1

    def _emit(self, frame: bytes, buffered: int) -> None:
        """Frame and write ``frame`` (admitted; ``buffered``: the transport's buffer, as
        ``_admit`` read it) now, or queue it behind the backlog."""
        ws = self.ws
        if ws.protocol.state is not State.OPEN:
            return  # closing or closed: nothing more reaches this client
        if not self._queue and buffered < self.DIRECT_WRITE_LIMIT and ws.send_in_progress is None:
            # What websockets.broadcast does for one connection — frame it, write it —
            # except that the write waits for the end of this loop tick, so the frames
            # a tick makes for one client (a pipelining player's acks, a rival's
            # Progress and Ranking) leave in one system call.
            protocol = ws.protocol
            if protocol.extensions or protocol.debug or protocol.expect_continuation_frame:
                try:
                    protocol.send_binary(frame)
                except Exception:  # the connection is closing under us: the reader sees it
                    log.debug("connection %s: direct write failed", self.id, exc_info=True)
                    return
            else:
                # What send_binary does on this path (the state is OPEN, tested above):
                # the framed bytes join websockets' own outgoing data, so they keep
                # their place among its frames (a pong, a close) and go with the
                # next data_to_send(), ours at the end of the tick or websockets'.
                n = len(frame)  # (``binary_frame``'s short case in place: an ack)
                protocol.writes.append(_SHORT_HEADS[n] + frame if n < 126
                                       else binary_frame(frame))
            self._unflushed += len(frame)
            self._unflushed_frames += 1
            if self._unflushed_frames == 1 and not self.receiving:
                # (while receiving, the protocol callback flushes at its end: ``flush``)
                loop = self._loop
                if loop is None:
                    loop = self._loop = asyncio.get_running_loop()
                loop.call_soon(self._flush)
            return
        if self._queue is None:
            self._queue = deque()
        self._queue.append(frame)
        self._queued_bytes += len(frame)
        self._start_writer()

    def shared_transport(self, frame: bytes, size: int, more: Sequence[bytes] = ()) -> Any:
        """The transport to write ``frame``, a payload going to many connections (a
        spectators' tick), straight to as ``size`` bytes framed once for all
        (``wire_frame``); or None. The transport when nothing is ahead of it on this
        connection (no held or queued frame, nothing framed this loop tick, no writer
        task, no close asked), no extension (compression) was negotiated, the
        connection is open and its transport holds less than ``DIRECT_WRITE_LIMIT``, and
        less than ``max_outbound_bytes`` with these bytes. None: the caller sends the
        payload the usual way (``send_frame``: framed here or queued behind the backlog,
        the bounds checked, a slow consumer cut); ``more``: the payloads of further
        frames in the same bytes (a tick of several frames). The caller writes the shared bytes to
        the transports it got in one loop (one burst of system calls per slice) and
        counts them in ``frames_out``. Reads attributes of the connection, its protocol
        and its transport only: it runs once per spectator per tick."""
        if (self._queue or self._unflushed_frames or self._writer_task is not None
                or self._closing is not None or self._stopped):
            return None
        protocol = self._protocol
        if protocol is None or protocol.state is not _OPEN or protocol.extensions:
            return None
        transport = self._transport
        buffered = transport.get_write_buffer_size()
        if (buffered >= self.DIRECT_WRITE_LIMIT
                or buffered + size > self.config.max_outbound_bytes):
            return None
        hook = self.server.frame_hook
        if hook is not None:  # tests: see every frame at the moment it is sent or queued
            hook(self, frame)
            for payload in more:
                hook(self, payload)
        return transport

    def unflushed(self) -> int:
        """Frames framed and not written yet (``flush`` writes them)."""
        return self._unflushed_frames

    def flush(self) -> None:
        """Write the frames framed so far: at the end of the tick (``_flush``), or of the
        protocol callback that handed frames over (``receiving``). One ``writelines``:
        one system call."""
        frames, self._unflushed_frames, self._unflushed = self._unflushed_frames, 0, 0
        ws = self.ws
        try:
            data = ws.protocol.data_to_send()  # empty if websockets wrote them meanwhile
            if data and all(data):
                ws.transport.writelines(data)
            elif data:  # an end-of-stream marker among them: websockets' own path
                for chunk in data:
                    if chunk:
                        ws.transport.write(chunk)
                    elif ws.transport.can_write_eof():
                        ws.transport.write_eof()
        except Exception:  # the transport is closing under us: the reader sees it
            log.debug("connection %s: write failed", self.id, exc_info=True)
            return
        self.server.metrics.frames_out.inc(frames)

    _flush = flush

    def outbound_bytes(self) -> int:
        """Bytes queued for this client and not yet sent: our queue, the frames framed
        this loop tick and the transport's write buffer (``max_outbound_bytes`` caps the
        sum)."""
        transport = getattr(self.ws, "transport", None)
        buffered = 0 if transport is None else int(transport.get_write_buffer_size())
        return self._queued_bytes + self._unflushed + buffered

    def close_with(self, code: Code, message: str) -> None:
        """Send what is queued, then ``Closing`` with ``code``, then close the socket."""
        if self._closing is not None or self._stopped:
            return
        self._closing = (code, message)
        self._start_writer()

    @property
    def closing(self) -> bool:
        """True once the connection is being closed."""
        return self._closing is not None or self._stopped

    def _start_writer(self) -> None:
        if self._writer_task is None:
            self._writer_task = asyncio.get_running_loop().create_task(self._writer())

    async def _writer(self) -> None:
        """Drain the backlog (waiting for the transport), then send the close if one was
        asked; exit once there is nothing left to do (frames go direct again)."""
        try:
            while self._queue:
                frame = self._queue.popleft()
                self._queued_bytes -= len(frame)
                await self.ws.send(frame)
                self.server.metrics.frames_out.inc()
            if self._closing is not None:
                code, message = self._closing
                await self.ws.send(encode(m.Closing(code=code, message=message)))
                await self.ws.close(_WS_CLOSE.get(code, 1000), code.value)
        except ConnectionClosed:
            return
        finally:
            self._writer_task = None
