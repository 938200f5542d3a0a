"""One websocket connection: decode, session (hello), rate limit, dispatch, and a bounded
outbound queue drained by a writer task.

Every frame a client sends gets exactly one outcome: handled, or an ``Error``/``Rejected``
with a documented code. No exception escapes to the client: an unexpected one is logged
and answered with ``internal``.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from protocol import (
    PROTOCOL_VERSION,
    Code,
    DecodeError,
    ProtocolError,
    decode_client,
    encode,
    error_reply,
)
from protocol import messages as m

from . import legal, lobby, race
from .credits import Credits
from .store import StoreUnavailable

if TYPE_CHECKING:
    from .room import Member, Room

log = logging.getLogger(__name__)
_ids = itertools.count(1)
SERVER_NAME = "solrace-server/0.1"

# Messages that cost ``rate_cost_heavy`` credits (many store keys, or a solver search).
_HEAVY = (m.CreateRoom, m.Join, m.ListRooms, m.HintRequest)

# websocket close codes for our Closing reasons
_WS_CLOSE = {
    Code.SHUTTING_DOWN: 1001,  # going away
    Code.SLOW_CONSUMER: 1008,  # policy violation
    Code.ADDRESS_LIMIT: 1008,
    Code.TAKEN_OVER: 1000,
    Code.IDLE_TIMEOUT: 1000,
    Code.VERSION_MISMATCH: 1002,
}


class Server(lobby.Server, Protocol):
    """The node as a connection sees it (``app.Server`` is one)."""

    node_id: str
    # Tests set this to see every frame sent to every connection (leak checks).
    frame_hook: Callable[[Any, bytes], None] | None


class Connection:
    """A client connection (see the module docstring)."""

    def __init__(self, server: Server, ws: ServerConnection) -> None:
        self.server = server
        self.config = server.config
        self.ws = ws
        self.id = next(_ids)
        self.hello_done = False
        self.name = ""
        self.address = ""  # the client's address (server/addresses.py), set by the server
        self.bot = False
        self.legal_moves = False  # hello.lm: attach the seat's legal moves (legal.py)
        self.room: Room | None = None
        self.member: Member | None = None
        self.rooms_used = 0
        self._queue: deque[bytes] = deque()
        self._queued_bytes = 0  # sum of len() over _queue
        self._wake = asyncio.Event()
        self._closing: tuple[Code, str] | None = None
        self._stopped = False
        self._credits = Credits(
            self.config.rate_burst, self.config.rate_per_s, self.config.monotonic
        )

    # ------------------------------------------------------------------ sending
    def send(self, message: Any) -> None:
        """Queue a server message."""
        if self.legal_moves:  # opt-in only: the default path pays this one test
            message = legal.annotate(self.member, message)
        self.send_frame(encode(message))

    def send_frame(self, frame: bytes) -> None:
        """Queue an encoded frame; a client whose queue is full is closed (slow_consumer)."""
        if self._closing is not None or self._stopped:
            return
        if (len(self._queue) >= self.config.outbound_queue
                or self.outbound_bytes() + len(frame) > self.config.max_outbound_bytes):
            self._queue.clear()  # it cannot keep up: drop the backlog, tell it why
            self._queued_bytes = 0
            self.close_with(Code.SLOW_CONSUMER, "the client did not read fast enough")
            cut_off = getattr(self.ws, "cut_off", None)  # server.guard: 1008, then abort
            if cut_off is not None:  # our writer may be blocked on a peer that never reads:
                # if Closing has not gone out by then, fail the websocket under it
                asyncio.get_running_loop().call_later(
                    self.config.shutdown_grace_s, cut_off, Code.SLOW_CONSUMER)
            return
        hook = self.server.frame_hook
        if hook is not None:  # tests: see every frame at the moment it is queued
            hook(self, frame)
        self._queue.append(frame)
        self._queued_bytes += len(frame)
        self._wake.set()

    def outbound_bytes(self) -> int:
        """Bytes queued for this client and not yet sent: our queue plus the transport's
        write buffer (``ServerConfig.max_outbound_bytes`` caps the sum)."""
        transport = getattr(self.ws, "transport", None)
        buffered = 0 if transport is None else int(transport.get_write_buffer_size())
        return self._queued_bytes + buffered

    def close_with(self, code: Code, message: str) -> None:
        """Send what is queued, then ``Closing`` with ``code``, then close the socket."""
        if self._closing is not None or self._stopped:
            return
        self._closing = (code, message)
        self._wake.set()

    @property
    def closing(self) -> bool:
        """True once the connection is being closed."""
        return self._closing is not None or self._stopped

    async def _writer(self) -> None:
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                while self._queue:
                    frame = self._queue.popleft()
                    self._queued_bytes -= len(frame)
                    await self.ws.send(frame)
                    self.server.metrics.frames_out.inc()
                if self._closing is not None:
                    code, message = self._closing
                    await self.ws.send(encode(m.Closing(code=code, message=message)))
                    await self.ws.close(_WS_CLOSE.get(code, 1000), code.value)
                    return
                if self._stopped:
                    return
        except ConnectionClosed:
            return

    # ------------------------------------------------------------------ receiving
    async def run(self) -> None:
        """Serve the connection until it closes; then leave its room."""
        self.server.metrics.connections.inc()
        writer = asyncio.create_task(self._writer())
        try:
            while self._closing is None:
                if not self.hello_done:
                    timeout: float | None = self.config.hello_timeout_s
                else:
                    timeout = self.config.idle_timeout_s if self.room is None else None
                try:
                    async with asyncio.timeout(timeout):
                        frame = await self.ws.recv()
                except TimeoutError:
                    self.close_with(Code.IDLE_TIMEOUT, f"nothing received for {timeout:g} s")
                    break
                except ConnectionClosed:
                    break
                await self._handle(frame)
        finally:
            try:
                await lobby.drop(self.server, self)
            except Exception:
                log.exception("connection %s: leaving its room failed", self.id)
            if self._closing is None:
                self._stopped = True
                self._wake.set()
            try:
                await asyncio.wait_for(writer, self.config.shutdown_grace_s)
            except (TimeoutError, asyncio.CancelledError):
                writer.cancel()
            self.server.metrics.connections.dec()

    async def _handle(self, frame: bytes | str) -> None:
        metrics = self.server.metrics
        metrics.frames_in.inc()
        started = time.perf_counter()
        if not self._credits.take():
            self._error(ProtocolError(Code.RATE_LIMITED, "too many messages; slow down"))
            return
        try:
            # A text frame is refused by the decoder (bad_frame): the protocol is binary.
            msg = decode_client(frame, self.config.max_frame)
        except DecodeError as exc:
            self._error(exc)
            return
        heavy = isinstance(msg, _HEAVY) or (isinstance(msg, m.Hello) and msg.token is not None)
        if heavy and not self._credits.take(self.config.rate_cost_heavy - 1):
            self._credits.credits += 1  # refund: the message is dropped, not half-charged
            self._error(ProtocolError(Code.RATE_LIMITED, "too many rooms requests; slow down"))
            return
        try:
            await self._dispatch(msg, started)
        except ProtocolError as exc:
            self._error(exc)
        except StoreUnavailable:
            self._error(ProtocolError(Code.STORE_UNAVAILABLE))
        except Exception:
            log.exception("connection %s: %s failed", self.id, type(msg).__name__)
            self._error(ProtocolError(Code.INTERNAL))

    def _error(self, exc: ProtocolError) -> None:
        self.server.metrics.errors.labels(exc.code.value).inc()
        self.send(error_reply(exc))
        if exc.fatal:
            self.close_with(exc.code, exc.message)

    def count_room(self) -> None:
        """Count a create/join/resume against the connection's allowance."""
        if self.rooms_used >= self.config.max_rooms_per_connection:
            raise ProtocolError(Code.TOO_MANY_ROOMS)
        self.rooms_used += 1

    # ------------------------------------------------------------------ dispatch
    async def _dispatch(self, msg: Any, started: float) -> None:
        server = self.server
        if isinstance(msg, m.Move):  # the hot path first
            room, member = self._in_room()
            reply = await race.play(room, member, msg)
            if isinstance(reply, m.Rejected):
                self.send(reply)
            else:
                server.metrics.move_latency.observe(time.perf_counter() - started)
            return
        if isinstance(msg, m.Ping):
            self.send(m.Pong(server_ms=self.config.clock(), nonce=msg.nonce))
            return
        if isinstance(msg, m.Hello):
            await self._hello(msg)
            return
        if not self.hello_done:
            raise ProtocolError(Code.HELLO_FIRST)
        if isinstance(msg, m.CreateRoom | m.Join):
            if self.room is not None and self.room.phase == "finished":
                await lobby.drop(server, self)  # the race is over: moving on needs no leave
            if self.room is not None:
                raise ProtocolError(Code.ALREADY_IN_ROOM, f"already in room {self.room.code}")
            if isinstance(msg, m.CreateRoom):
                await lobby.create(server, self, msg)
            else:
                await lobby.join(server, self, msg.code, msg.role)
        elif isinstance(msg, m.ListRooms):
            self.send(await lobby.list_rooms(server, msg.before))
        elif isinstance(msg, m.Ready):
            await race.set_ready(*self._in_room(), msg.ready)
        elif isinstance(msg, m.StartNow):
            await race.start_now(*self._in_room())
        elif isinstance(msg, m.Resign):
            await race.resign(*self._in_room())
        elif isinstance(msg, m.Leave):
            await lobby.leave(server, self)
        elif isinstance(msg, m.HintRequest):
            self.send(await race.hint(*self._in_room()))
        else:  # pragma: no cover - the decoder only yields the types above
            raise ProtocolError(Code.UNKNOWN_TYPE, type(msg).__name__)

    def _in_room(self) -> tuple[Room, Member]:
        if not self.hello_done:
            raise ProtocolError(Code.HELLO_FIRST)
        if self.room is None or self.member is None:
            raise ProtocolError(Code.NOT_IN_ROOM)
        return self.room, self.member

    async def _hello(self, msg: m.Hello) -> None:
        if self.hello_done:
            raise ProtocolError(Code.ALREADY_HELLO)
        if msg.version != PROTOCOL_VERSION:
            raise ProtocolError(
                Code.VERSION_MISMATCH,
                f"this server speaks protocol version {PROTOCOL_VERSION}, not {msg.version}",
            )
        self.name, self.bot, self.legal_moves = msg.name, msg.bot, msg.legal_moves
        if msg.token is not None:
            # A failed resume leaves the session unopened: the client may hello again.
            await lobby.resume(self.server, self, msg)
            self.hello_done = True
            return
        self.hello_done = True
        self.send(m.Welcome(
            version=PROTOCOL_VERSION, server=SERVER_NAME, node=self.server.node_id,
            server_ms=self.config.clock(), max_frame=self.config.max_frame,
            rate_per_s=self.config.rate_per_s,
        ))
