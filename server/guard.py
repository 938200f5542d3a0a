"""The websocket connection's own bounds, below our message loop: control frames and the
transport's write buffer.

websockets answers every ping with a pong itself, writing it to the transport as the ping
is parsed, whether or not the client reads. A client that sends pings and never reads
therefore grows the transport's write buffer without limit (the ping flood: +1.4 GB in
60 s on one connection, docs/SECURITY.md). ``guarded(config)`` gives a ``ServerConnection``
class that

- counts pings in a token bucket (``ping_burst``, ``ping_per_s``): beyond it the
  connection is failed with close code 1008, reason ``control_flood``;
- after every read, checks the transport's write buffer against ``max_outbound_bytes``:
  beyond it the connection is failed with close code 1008, reason ``slow_consumer``.

Failing stops the parser (websockets discards what follows, so no further pong is made),
queues the close frame, and aborts the TCP connection ``close_timeout`` later if the peer
did not finish the closing handshake (a peer that does not read never does).

It also asks the server's ``Gate`` to admit each TCP connection the moment it is
accepted (``connection_made``), before websockets starts its handshake task, parses the
request or builds a response: a refused connection waits for the end of the request's
head (at most ``REFUSED_HEAD`` bytes, ``REFUSED_WAIT_S``), gets a canned HTTP 429 (its
address is over its caps) or 503 (the node is past its handshake budget or stopping)
and is closed. That is what a flood from one address costs the node: a connection that
goes nowhere. (A refused handshake through websockets' own path cost about 1 ms of the
event loop, and a reconnect loop sends hundreds a second: docs/SECURITY.md.) Each
admitted connection is released exactly once, when its TCP connection ends.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Protocol

from websockets.asyncio.server import ServerConnection
from websockets.frames import Frame, Opcode
from websockets.protocol import State

from protocol import Code

from .config import ServerConfig
from .credits import Credits

log = logging.getLogger(__name__)

POLICY_VIOLATION = 1008  # the websocket close code of both cuts (RFC 6455, 7.4.1)
INTERNAL_ERROR = 1011  # a keepalive ping unanswered (what websockets' keepalive sends)
# A refused connection: the request head is read (closing a socket with unread input
# resets it, and the client may lose the answer) up to this many bytes or seconds.
REFUSED_HEAD = 8 * 1024
REFUSED_WAIT_S = 2.0
_REASONS = {
    429: ("Too Many Requests", "too many connections from your address; retry later\n"),
    503: ("Service Unavailable", "server busy or shutting down; retry\n"),
}


def _canned(status: int) -> bytes:
    phrase, body = _REASONS[status]
    return (f"HTTP/1.1 {status} {phrase}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n{body}").encode()


REFUSALS = {status: _canned(status) for status in _REASONS}  # built once


class Gate(Protocol):
    """Who may open a connection (``app.Server`` is one)."""

    def admit(self, conn: GuardedConnection, peer: Any) -> int | None:
        """None to go on with the handshake (``release(conn)`` follows when the
        connection ends), or the HTTP status to refuse it with (429 or 503)."""

    def release(self, conn: GuardedConnection) -> None:
        """An admitted connection ended."""


class GuardedConnection(ServerConnection):
    """A ``ServerConnection`` with a ping budget and a write-buffer cap (module docstring).

    ``config`` is set on the subclass ``guarded()`` makes."""

    config: ServerConfig
    gate: Gate | None = None
    refused: int = 0  # the HTTP status this connection was refused with (0: admitted)
    charged: str | None = None  # the client address its admission was charged to
    _head_tail = b""  # the last bytes read of a refused connection's request head
    _head_read = 0
    _refused_timer: asyncio.TimerHandle | None = None
    # Loop time the node's keepalive ping was sent and no pong came since (None: none
    # outstanding). Pinged by server/keepalive.py, not by a websockets task per connection.
    ping_sent: float | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        config = self.config
        self.pings = Credits(config.ping_burst, config.ping_per_s, config.monotonic)
        self.cut: Code | None = None  # why this connection was failed, once it was
        # websockets' writers waiting for the transport to drain: a deque, ~0.7 KiB even
        # empty, on every idle connection. websockets only appends to it, removes from it
        # and iterates over it (asyncio/connection.py): a list does that from 56 bytes.
        self.drain_waiters = []  # type: ignore[assignment]
        self._protocol_recv_frame = self.protocol.recv_frame
        setattr(self.protocol, "recv_frame", self._recv_frame)  # noqa: B010 - an instance hook

    def outbound_bytes(self) -> int:
        """Bytes written to the transport and not yet sent to the peer."""
        transport = getattr(self, "transport", None)
        return 0 if transport is None else int(transport.get_write_buffer_size())

    def _recv_frame(self, frame: Frame) -> None:
        """The protocol's ``recv_frame`` (which writes a pong for a ping), behind the ping
        budget: a ping beyond it fails the connection and gets no pong. It wraps the
        protocol's method because the pongs of one read are written before any event
        reaches ``process_event``."""
        opcode = frame.opcode
        if opcode is Opcode.PING and self.cut is None and not self.pings.take():
            self.cut_off(Code.CONTROL_FLOOD)  # the parser discards the rest of the read
            return
        if opcode is Opcode.PONG:  # the peer is alive (any pong: RFC 6455 allows unasked)
            self.ping_sent = None
        self._protocol_recv_frame(frame)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Admit the connection (the gate) before websockets sees it; a refused one only
        waits for its request head (module docstring)."""
        status = None if self.gate is None else self.gate.admit(
            self, transport.get_extra_info("peername"))
        if status is None:
            super().connection_made(transport)
            return
        self.refused = status
        self.transport = transport  # type: ignore[assignment]  # a TCP transport
        self._refused_timer = self.loop.call_later(REFUSED_WAIT_S, transport.abort)  # type: ignore[attr-defined]

    def connection_lost(self, exc: Exception | None) -> None:
        """The TCP connection ended: release its admission."""
        if self.refused:
            if self._refused_timer is not None:
                self._refused_timer.cancel()
            self._break_cycles()
            return
        try:
            super().connection_lost(exc)
        finally:
            self._break_cycles()
            if self.gate is not None:
                self.gate.release(self)

    def _break_cycles(self) -> None:
        """Leave no reference cycle behind once the TCP connection ended, so reference
        counting alone frees the connection's objects: the node freezes long-lived
        objects out of the collector's walks (server/gctune.py), and cyclic garbage
        among frozen objects would never be freed. Three cycles were left
        (tests/server/test_gc_cycles.py): this class's ``recv_frame`` hook (protocol →
        bound method → self → protocol); websockets' parser generator, which stays
        suspended for ever once the stream ended (protocol → generator → its frame →
        protocol); and ``parser_exc``, the exception that stopped the parser (usually
        the peer's EOFError: its traceback → the parser's frame → protocol). No frame is
        parsed after ``connection_lost`` (websockets' reader refuses data after EOF,
        before stepping the parser), so the generator is closed; the exception is kept
        (a later ``ConnectionClosed`` still chains to it), only its traceback goes."""
        protocol = self.protocol
        protocol.__dict__.pop("recv_frame", None)
        protocol.parser.close()
        parser_exc = protocol.parser_exc
        if parser_exc is not None:
            parser_exc.__traceback__ = None

    def eof_received(self) -> None:
        """The peer half-closed: a refused connection just closes (the transport does,
        on None)."""
        if not self.refused:
            super().eof_received()

    def _refuse(self, data: bytes) -> None:
        """A refused connection's input: at the end of the request head, the answer."""
        head = self._head_tail + data
        self._head_read += len(data)
        if b"\r\n\r\n" not in head and self._head_read < REFUSED_HEAD:
            self._head_tail = head[-3:]
            return
        self._head_tail = b""
        self._head_read = REFUSED_HEAD  # answered once: what follows is ignored
        if not self.transport.is_closing():
            self.transport.write(REFUSALS[self.refused])
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        """Feed the protocol (which may write pongs), then check the write buffer."""
        if self.refused:
            self._refuse(data)
            return
        super().data_received(data)
        if self.cut is None and self.outbound_bytes() > self.config.max_outbound_bytes:
            self.cut_off(Code.SLOW_CONSUMER)

    def send_keepalive_ping(self, now: float) -> None:
        """Send a keepalive ping (empty payload) and remember when (``ping_sent``, cleared
        by the next pong). Nothing if the connection is not open."""
        if self.protocol.state is not State.OPEN:
            return
        self.ping_sent = now
        try:
            self.protocol.send_ping(b"")
            self.send_data()  # with any frame framed before it, in order
        except Exception:  # the transport is closing under us: connection_lost follows
            log.debug("keepalive ping failed", exc_info=True)

    def ping_timed_out(self) -> None:
        """No pong came in time: fail the connection as websockets' keepalive does (close
        code 1011, "keepalive ping timeout"), then drop it after the close timeout.
        Nothing once the connection is closing."""
        if self.cut is not None or self.protocol.state is not State.OPEN:
            return
        log.info("connection cut: keepalive ping timeout", extra={"error": "ping_timeout"})
        self._fail(INTERNAL_ERROR, "keepalive ping timeout")

    def cut_off(self, code: Code) -> None:
        """Fail the connection with close code 1008 and reason ``code`` (idempotent)."""
        if self.cut is not None or self.protocol.state is State.CLOSED:
            return
        self.cut = code
        log.info("connection cut: %s", code.value, extra={"error": code.value})
        self._fail(POLICY_VIOLATION, code.value)

    def _fail(self, close_code: int, reason: str) -> None:
        try:
            self.protocol.fail(close_code, reason)  # later input is discarded
            self.send_data()
        except Exception:  # the transport may already be failing: abort is enough
            log.debug("failing the connection raised", exc_info=True)
        # A peer that does not read never completes the closing handshake: drop the TCP
        # connection (and everything buffered for it) after the usual close timeout.
        self.loop.call_later(self.close_timeout or 1.0, self.transport.abort)


def guarded(config: ServerConfig, gate: Gate | None = None) -> type[GuardedConnection]:
    """A ``GuardedConnection`` class bound to ``config`` and ``gate`` (for
    ``serve(create_connection=)``); without a gate every connection is admitted."""
    return type("Guarded", (GuardedConnection,), {"config": config, "gate": gate})
