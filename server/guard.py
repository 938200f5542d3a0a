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

Messages are pushed to the connection (``attach``, a ``Sink``: server/connection.py),
not pulled with ``recv()``: a complete binary frame goes to ``Sink.take`` as it arrives —
read by the guard itself while websockets' parser sits between frames
(``_read_frames``), else from websockets' own parser (``process_event``) — and anything
the sink does not take then goes to websockets' assembler, counted for the sink, in
arrival order (its ``max_queue`` pauses reading). The frames the sink writes while a
``data_received`` runs are written at its end, in one write.

It also decides, before websockets sees a TCP connection, whether the connection may
go on (``Door``, the protocol the listening socket creates for every accepted
connection; the server's ``Gate`` decides from the peer's address the moment the
connection is accepted, ``connection_made``). An admitted connection is handed to a
``GuardedConnection`` built only then (``transport.set_protocol``; websockets' handshake
task starts from there). A refused one gets none of websockets' objects (no
``ServerConnection``, no ``ServerProtocol`` and its parser generator, no handler task):
the door waits for the end of the request's head (at most ``REFUSED_HEAD`` bytes,
``REFUSED_WAIT_S``), writes a canned HTTP 429 (its address is over its caps) or 503 (the
node is past its handshake budget or stopping) and closes. That is what a flood costs
the node: a connection that goes nowhere. (A refused handshake through websockets' own
path cost about 1 ms of the event loop, refusing in websockets' ``connection_made``
~220 µs, most of it building websockets' objects: docs/SECURITY.md.) Each admitted
connection is released exactly once, when its TCP connection ends.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol, cast

from websockets.asyncio.server import Server as WsServer
from websockets.asyncio.server import ServerConnection
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.server import ServerProtocol
from websockets.streams import StreamReader

try:  # websockets' C unmasking, as its own parser uses (the pure-Python one otherwise)
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover - a websockets build without its extension
    from websockets.utils import apply_mask

from protocol import Code

from .admission import Turns
from .config import ServerConfig
from .credits import Credits

log = logging.getLogger(__name__)

# Where websockets' parser waits between frames (``GuardedConnection._parser_at_boundary``).
_AT_EOF = StreamReader.at_eof.__code__
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


class Admitted(Protocol):
    """What the gate charges an admission to (a ``Door``, then its connection)."""

    charged: str | None


class Gate(Protocol):
    """Who may open a connection (``app.Server`` is one)."""

    def admit(self, conn: Admitted, peer: Any) -> int | None:
        """None to go on with the handshake (``release(conn)`` follows when the
        connection ends; ``conn.charged`` may be set), or the HTTP status to refuse it
        with (429 or 503)."""

    def release(self, conn: Admitted) -> None:
        """An admitted connection ended."""


class Sink(Protocol):
    """Who receives a connection's messages as they arrive (``Connection``)."""

    def take(self, frame: bytes) -> bool:
        """Handle a complete binary frame now (True), or False: it goes to websockets'
        assembler, and ``queued`` follows."""

    def queued(self) -> None:
        """A complete message went to websockets' assembler, to be received in turn."""

    def lost(self) -> None:
        """The TCP connection ended."""

    receiving: bool  # set while ``data_received`` runs: frames wait for its end
    busy: bool  # ``take`` would say False now: a frame goes to websockets' assembler

    def unflushed(self) -> int:
        """Frames framed and not written yet."""

    def flush(self) -> None:
        """Write them (one system call)."""


class GuardedConnection(ServerConnection):
    """A ``ServerConnection`` with a ping budget and a write-buffer cap (module docstring).

    ``config`` is set on the subclass ``guarded()`` makes."""

    config: ServerConfig
    gate: Gate | None = None
    charged: str | None = None  # the client address its admission was charged to
    # Loop time the node's keepalive ping was sent and no pong came since (None: none
    # outstanding). Pinged by server/keepalive.py, not by a websockets task per connection.
    ping_sent: float | None = None
    sink: Sink | None = None  # messages go there as they arrive (``attach``)
    at_boundary = False  # websockets' parser is between frames (``_parser_at_boundary``)
    fragmented = False  # a fragmented message is being received (its frames: assembler)

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

    # ------------------------------------------------------------------ frames in
    def attach(self, sink: Sink) -> int:
        """Send every complete message to ``sink`` from now on (``process_event``): a
        complete binary frame to ``sink.take`` first, anything else (or what it does not
        take) to websockets' assembler with ``sink.queued()`` per complete message.
        Returns the number of complete messages already in the assembler."""
        self.sink = sink
        held = list(self.recv_messages.frames.queue)
        self.fragmented = bool(held) and not held[-1].fin
        return sum(1 for frame in held if frame.fin)

    def detach(self) -> None:
        """Frames go to websockets' assembler only again (the sink is done)."""
        self.sink = None

    def process_event(self, event: Any) -> None:
        """A parsed frame (or the handshake request): a complete binary frame to the sink
        (``attach``) if it takes it; every other data frame to websockets' assembler,
        counted for the sink, in arrival order."""
        sink = self.sink
        if sink is None or type(event) is not Frame:
            super().process_event(event)
            return
        opcode = event.opcode
        if (opcode is Opcode.BINARY and event.fin and not self.fragmented
                and sink.take(event.data if type(event.data) is bytes else bytes(event.data))):
            return
        super().process_event(event)
        if opcode is Opcode.BINARY or opcode is Opcode.TEXT or opcode is Opcode.CONT:
            self.fragmented = not event.fin
            if event.fin:
                sink.queued()

    def _parser_at_boundary(self) -> bool:
        """Whether websockets' parser holds nothing of a frame: its reader's buffer is
        empty and the parser waits for the next frame's first byte (suspended in
        ``StreamReader.at_eof``, not inside ``Frame.parse``). Remembered in
        ``at_boundary`` (``_read_frames`` only ever gives it whole frames after that)."""
        protocol = self.protocol
        if protocol.reader.buffer or protocol.debug:
            return False
        parser: Any = protocol.parser  # a generator: its gi_yieldfrom chain, to the innermost
        while True:
            inner = parser.gi_yieldfrom
            if inner is None:
                break
            parser = inner
        self.at_boundary = parser.gi_code is _AT_EOF
        return self.at_boundary

    def _read_frames(self, sink: Sink, data: bytes) -> bool:
        """Read ``data`` ourselves, websockets' parser being at a frame boundary: each
        complete, masked, unfragmented binary frame (FIN set, no reserved bit, within
        the size limit) while the connection is open goes to ``sink.take`` unmasked —
        what websockets' parser would have made of it (``Frame.parse``, ``recv_frame``)
        without its generator, ``Frame`` and events. Everything else (control frames,
        text, fragments, a frame the sink does not take now, an incomplete last frame,
        anything after a close) goes to websockets as it is, in order: runs of whole
        frames, which leave its parser at a boundary, or the rest of ``data`` from an
        incomplete frame on, after which its parser is mid-frame until it is found at a
        boundary again (``_parser_at_boundary``). True if websockets was given some."""
        protocol = self.protocol
        limit = protocol.max_message_size
        if protocol.max_fragment_size is not None:
            limit = (protocol.max_fragment_size if limit is None
                     else min(limit, protocol.max_fragment_size))
        size = len(data)
        pos = 0
        run = -1  # the start of frames for websockets, not given to it yet
        fed = False
        while size - pos >= 2:
            first, second = data[pos], data[pos + 1]
            length = second & 0x7F
            head = pos + 2
            if length == 126:
                length = int.from_bytes(data[head:head + 2])
                head += 2
            elif length == 127:
                length = int.from_bytes(data[head:head + 8])
                head += 8
            if second & 0x80:
                head += 4
            end = head + length
            if end > size:
                break  # incomplete (or its header is): websockets reads it from here
            if (first == 0x82 and second & 0x80 and (limit is None or length <= limit)
                    and not sink.busy and protocol._state is State.OPEN  # (``state``'s
                    # own attribute: the property is a Python call per frame)
                    and protocol.current_size is None and not self.fragmented
                    and self.cut is None):
                if run >= 0:  # websockets first reads the frames before this one
                    super().data_received(data[run:pos])
                    run, fed = -1, True
                    continue  # (which may have closed the connection, or left it busy)
                if sink.take(apply_mask(data[head:end], data[head - 4:head])):
                    pos = end
                    continue
            if run < 0:
                run = pos
            pos = end
        if run < 0:
            run = pos
        if run < size:
            if pos < size:  # an incomplete frame: the parser stops inside it
                self.at_boundary = False
            super().data_received(data[run:] if run else data)
            fed = True
        return fed

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

    def connection_lost(self, exc: Exception | None) -> None:
        """The TCP connection ended: release its admission."""
        try:
            super().connection_lost(exc)
        finally:
            sink, self.sink = self.sink, None
            if sink is not None:
                sink.lost()
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

    def data_received(self, data: bytes) -> None:
        """Feed the protocol (which may write pongs; the sink handles the messages) — or
        read the sink's frames ourselves (``_read_frames``) —, write what the sink framed
        meanwhile, then check the write buffer."""
        sink = self.sink
        if sink is None:
            super().data_received(data)
        else:
            # The acks of the moves in ``data`` leave at the end of this callback, in one
            # write, instead of a flush callback per connection at the end of the tick.
            sink.receiving = True
            try:
                if self.at_boundary or self._parser_at_boundary():
                    if not self._read_frames(sink, data):
                        return  # websockets wrote nothing (no pong): the acks are bounded
                else:
                    super().data_received(data)
            finally:
                sink.receiving = False
                if sink.unflushed():
                    sink.flush()
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


class DoorTurns(NamedTuple):
    """The node's two queues of door work (server/admission.py): admitted connections
    opened (their handshakes), and refusals answered, each so many per loop iteration."""

    handshakes: Turns
    refusals: Turns


class Door(asyncio.Protocol):
    """The protocol of every accepted TCP connection until the gate has decided (module
    docstring). Admitted, it hands its transport to the connection ``build()`` makes
    (``charged`` passed on) and is forgotten; refused, it answers the request head with
    the canned response and closes, having built nothing of websockets'."""

    # One per accepted connection, refused ones included: slots, no __dict__ (a weak
    # reference slot: tests/server/test_gc_cycles.py watches doors being freed).
    __slots__ = ("__weakref__", "_build", "_gate", "_read", "_tail", "_timer", "_turns",
                 "charged", "refused", "transport", "waiting")

    def __init__(self, gate: Gate, build: Callable[[], GuardedConnection],
                 turns: DoorTurns | None = None) -> None:
        self._gate = gate
        self._build = build
        self._turns = turns  # None: open and answer at once (no bound per iteration)
        self.waiting = False  # admitted, its turn not come yet (its reading paused)
        self.charged: str | None = None  # set by the gate, passed on to the connection
        self.refused = 0  # the HTTP status this connection is refused with (0: not)
        self.transport: asyncio.Transport | None = None  # a refused connection's
        self._tail = b""  # the last bytes read of a refused connection's request head
        self._read = 0
        self._timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Ask the gate; an admitted connection goes on as a ``GuardedConnection`` when
        its turn comes (``turns``: its reading paused meanwhile), at once without."""
        # a TCP connection's (asyncio's, or uvloop's, which does not derive from Transport)
        tcp = cast(asyncio.Transport, transport)
        status = self._gate.admit(self, tcp.get_extra_info("peername"))
        if status is None:
            if self._turns is None:
                self._open(tcp)
                return
            # Its request head stays in the kernel until its handshake may start: a burst
            # of admissions runs a bounded number of handshakes per loop iteration.
            tcp.pause_reading()
            self.transport = tcp
            self.waiting = True
            self._turns.handshakes.add(self._open_waiting)
            return
        self.refused = status
        self.transport = tcp
        self._timer = asyncio.get_running_loop().call_later(REFUSED_WAIT_S, tcp.abort)

    def _open(self, tcp: asyncio.Transport) -> None:
        """Hand the connection to a ``GuardedConnection`` (websockets' handshake task
        starts)."""
        try:
            conn = self._build()
            conn.charged = self.charged
            tcp.set_protocol(conn)
            conn.connection_made(tcp)  # websockets' handshake task starts
        except BaseException:
            self._gate.release(self)  # not reached in practice: the slot is not lost
            tcp.abort()
            raise

    def _open_waiting(self) -> None:
        """An admitted connection's turn: open it and read its request head. One that
        ended while it waited is not opened (``connection_lost`` releases it)."""
        tcp, self.transport = self.transport, None
        if not self.waiting or tcp is None or tcp.is_closing():
            return
        self.waiting = False
        early, self._tail = self._tail, b""
        self._open(tcp)
        conn = tcp.get_protocol()
        if early and isinstance(conn, GuardedConnection):
            conn.data_received(early)  # what came before its turn, first
        if not tcp.is_closing():
            tcp.resume_reading()

    def data_received(self, data: bytes) -> None:
        """A refused connection's input: at the end of the request head, the answer. An
        admitted connection waiting its turn keeps what it read for its connection
        (one read: it pauses again; uvloop starts reading after ``connection_made``
        whatever it paused)."""
        if self.waiting:
            self._tail += data
            if self.transport is not None:
                self.transport.pause_reading()
            return
        if self._read >= REFUSED_HEAD:  # answered: what follows is ignored
            return
        head = self._tail + data
        self._read += len(data)
        if b"\r\n\r\n" not in head and self._read < REFUSED_HEAD:
            self._tail = head[-3:]
            return
        self._tail = b""
        self._read = REFUSED_HEAD
        if self._turns is None:
            self._answer()
        else:  # a burst of refusals is answered a bounded number per loop iteration
            self._turns.refusals.add(self._answer)

    def _answer(self) -> None:
        """Write the canned refusal and close (nothing if the connection ended)."""
        transport = self.transport
        if transport is not None and not transport.is_closing():
            transport.write(REFUSALS[self.refused])
            transport.close()

    def eof_received(self) -> None:
        """The peer half-closed: the transport closes (on None), unanswered."""

    def connection_lost(self, exc: Exception | None) -> None:
        """Drop the timer and the transport (no reference cycle outlives the
        connection: server/gctune.py freezes long-lived objects); an admitted
        connection that ended before its turn releases its admission."""
        if self.waiting:
            self.waiting = False
            self._gate.release(self)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.transport = None


def doors(gate: Gate, build: Callable[[], GuardedConnection],
          turns: DoorTurns | None = None) -> Callable[[], Door]:
    """The listening socket's protocol factory: a ``Door`` per accepted connection
    (admissions opened and refusals answered in ``turns``, if given)."""
    return functools.partial(Door, gate, build, turns)


def connection_builder(
    cls: type[GuardedConnection], server: WsServer, *, max_size: int | None,
    close_timeout: float,
) -> Callable[[], GuardedConnection]:
    """What websockets' ``serve()`` builds for each accepted socket (its protocol
    factory), for an admitted one only: the websockets protocol, then the connection,
    with the settings ``app.Server`` passes ``serve()`` (no compression, origins or
    subprotocols; the node's keepalive, not websockets' own)."""

    def build() -> GuardedConnection:
        protocol = ServerProtocol(max_size=max_size, logger=server.logger)
        return cls(protocol, server, ping_interval=None, ping_timeout=None,
                   close_timeout=close_timeout)

    return build
