"""One websocket connection: frames pushed to it as they arrive, decode, session
(hello), rate limit, dispatch; what it sends goes through its base, ``Outbound``
(server/outbound.py: written at once, or a bounded queue drained by a writer task).

Every frame a client sends gets exactly one outcome: handled, or an ``Error``/``Rejected``
with a documented code. No exception escapes to the client: an unexpected one is logged
and answered with ``internal``.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import logging
import time
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Coroutine, Generator
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
from .outbound import Outbound
from .store import StoreUnavailable

if TYPE_CHECKING:
    from .room import Member, Room

log = logging.getLogger(__name__)
_ids = itertools.count(1)
SERVER_NAME = "solrace-server/0.1"

# Messages that cost ``rate_cost_heavy`` credits (many store keys, or a solver search).
_HEAVY = (m.CreateRoom, m.Join, m.ListRooms, m.HintRequest)

class _Resume:
    """Await a coroutine that was started outside any task and suspended: ``yielded`` is
    what its ``send`` returned (the future it waits on, or None for a bare yield). The
    awaiting task takes it from there exactly as if it had run the coroutine from the
    start (what ``yield from`` does: every value, exception and cancel passes through)."""

    __slots__ = ("_coro", "_yielded")

    def __init__(self, coro: Coroutine[Any, Any, None], yielded: Any) -> None:
        self._coro = coro
        self._yielded = yielded

    def __await__(self) -> Generator[Any, Any, None]:
        coro, yielded = self._coro, self._yielded
        del self._coro, self._yielded  # the task's frame holds them now
        while True:
            try:
                sent = yield yielded
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # a cancel (or a failed future): the coroutine's
                try:
                    yielded = coro.throw(exc)
                except StopIteration:
                    return
            else:
                try:
                    yielded = coro.send(sent)
                except StopIteration:
                    return


def _append_now(server: Any) -> Callable[..., None] | None:
    """The server's store's ``append_move_now`` when it may stand for ``append_move``
    (``MemoryStore.appends_now``: the memory store's own), else None. Not timed into
    ``solrace_store_op_seconds`` as ``append_move`` is (``metrics.InstrumentedStore``):
    an in-process call of about a microsecond, where the timer cost half as much again;
    the move's own latency is ``solrace_move_ack_seconds``."""
    store = server.store
    appends_now = getattr(store, "appends_now", None)
    if appends_now is None or appends_now() is not True:
        return None
    append: Callable[..., None] = store.append_move_now
    return append


def _append_later(store: Any) -> Callable[..., None] | None:
    """The store's ``append_move_later`` when it may stand for ``append_move``
    (``RedisStore.appends_later``: a standalone Redis, its group commit), else None.
    Its calls are timed into ``solrace_store_op_seconds{op="append_move"}`` by the
    connection (``_answered``), as ``InstrumentedStore`` times ``append_move``: a round
    trip to Redis, which the store's alerts watch."""
    appends_later = getattr(store, "appends_later", None)
    if appends_later is None or appends_later() is not True:
        return None
    append: Callable[..., None] = store.append_move_later
    return append


class Server(lobby.Server, Protocol):
    """The node as a connection sees it (``app.Server`` is one)."""

    node_id: str
    # Tests set this to see every frame sent to every connection (leak checks).
    frame_hook: Callable[[Any, bytes], None] | None


class Connection(Outbound):
    """A client connection (see the module docstring); what it sends, and how, is
    ``Outbound``'s. The idle and hello deadlines are one timer per connection, re-armed
    only when it fires (not one ``asyncio.timeout`` per frame)."""

    __slots__ = (
        "_append", "_blocked", "_credits", "_ctx", "_held", "_idle_timer", "_inline",
        "_last_in", "_later", "_lost", "_pending", "_waiting", "_wake", "_work", "address",
        "batched", "bot", "busy", "hello_done", "legal_moves", "member", "name", "room",
        "rooms_used",
    )

    server: Server  # (the node as a whole: Outbound only needs part of it)

    def __init__(self, server: Server, ws: ServerConnection) -> None:
        super().__init__(server, ws, next(_ids))
        self.hello_done = False
        self.name = ""
        self.address = ""  # the client's address (server/addresses.py), set by the server
        self.bot = False
        self.legal_moves = False  # hello.lm: attach the seat's legal moves (legal.py)
        self.batched = False  # hello.ds: as a spectator, moves come as Diffs (room.py)
        self.room: Room | None = None
        self.member: Member | None = None
        self.rooms_used = 0
        self._credits = Credits(
            self.config.rate_burst, self.config.rate_per_s, self.config.monotonic
        )
        self._last_in = 0.0  # loop time of the last frame received
        self._idle_timer: asyncio.TimerHandle | None = None
        # Receiving (``take``, ``run``): True while the run task owns the stream of
        # messages (it is handling one, or some wait); only when False may a frame be
        # handled as it arrives.
        self.busy = True
        store = getattr(server, "store", None)
        self._inline = getattr(store, "completes_inline", False) is True
        self._append = _append_now(server) if self._inline else None
        # A move on a store that answers appends by callback (Redis' group commit):
        # judged in ``take``, acknowledged from the store's reply (``_move_later``).
        # While it is pending (``_pending``: its message and start), the frames after it
        # wait in ``_held``, in order (at most ``held_frames``, then websockets' assembler).
        self._later = None if self._inline else _append_later(store)
        self._pending: tuple[Room, Member, m.Move, Any, float, float] | None = None
        self._held: deque[bytes] = deque()
        self._blocked = False  # the run task waits for the pending move (``_until_answered``)
        self._waiting = 0  # messages in websockets' assembler, for the run task, in order
        self._work: Coroutine[Any, Any, None] | _Resume | None = None  # handed to run
        self._wake: asyncio.Future[None] | None = None  # the idle run task waits on it
        self._lost = False  # the TCP connection ended
        # The run task's context (log fields: server/logs.py) as of when it went idle: a
        # move handled as it arrives runs in it, so it logs what the task would.
        self._ctx: contextvars.Context | None = None

    # ------------------------------------------------------------------ sending
    def send(self, message: Any) -> None:
        """Send a server message (see ``send_frame``)."""
        if self.legal_moves:  # opt-in only: the default path pays this one test
            message = legal.annotate(self.member, message)
        self.send_frame(encode(message))

    # ------------------------------------------------------------------ receiving
    def _idle_limit(self) -> float | None:
        """Seconds of silence allowed now: before hello, and outside a room."""
        if not self.hello_done:
            return self.config.hello_timeout_s
        return self.config.idle_timeout_s if self.room is None else None

    def _arm_idle(self) -> None:
        limit = self._idle_limit()
        if limit is not None and self._idle_timer is None:
            loop = asyncio.get_running_loop()
            self._idle_timer = loop.call_at(self._last_in + limit, self._idle_due)

    def _idle_due(self) -> None:
        self._idle_timer = None
        limit = self._idle_limit()
        if limit is None or self.closing:
            return
        if asyncio.get_running_loop().time() - self._last_in >= limit:
            self.close_with(Code.IDLE_TIMEOUT, f"nothing received for {limit:g} s")
        else:  # a frame came meanwhile: wait for the rest of the new silence
            self._arm_idle()

    # Receiving is push, not pull: websockets' protocol callback hands each complete
    # frame to ``take`` (server/guard.py, ``GuardedConnection.process_event``). While
    # the run task is idle, a binary frame is decoded there and then, and a move on a
    # store whose calls complete inline (the memory store) is judged, stored and
    # acknowledged in that same callback: no future, no task wake-up, no coroutine
    # frames resumed per move (docs/SERVER.md "One move"). Anything else (other
    # messages, a move on Redis, a handling that suspends) is the run task's, one at a
    # time: frames arriving meanwhile go to websockets' assembler, in order, and it
    # pauses reading past its high-water mark (``max_queue``: backpressure, as when
    # the run task pulled every frame with ``recv()``).
    def take(self, frame: bytes) -> bool:
        """A complete binary frame, as it arrives: handled now (True), or False when the
        run task is busy (or the connection closing): the caller queues it then.

        A move on a store that appends synchronously starts here, in the protocol
        callback, outside any task (``_Resume`` hands a suspended rest to the run task):
        code on that path must not need a current task (``asyncio.timeout``,
        ``asyncio.current_task``)."""
        if self.busy or self._closing is not None:
            return False
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        self._last_in = loop.time()
        if self._pending is not None:  # behind a move on Redis: in order, once it is answered
            held = self._held
            held.append(frame)
            if len(held) >= self.config.held_frames:
                self.busy = True  # the next ones go to websockets' assembler (it pauses)
            return True
        self.busy = True
        started = time.perf_counter()
        msg = self._accept(frame)
        if msg is not None:
            work: Coroutine[Any, Any, None] | _Resume | None
            if type(msg) is m.Move and self._inline:
                ctx = self._ctx
                if ctx is None:  # (not reached: set whenever the run task goes idle)
                    ctx = self._ctx = contextvars.copy_context()
                append = self._append
                if append is not None:  # no coroutine at all, unless a finish check follows
                    work = ctx.run(self._move_now, msg, started, append)
                else:
                    work = self._serve(msg, started)
                if work is not None:
                    try:
                        yielded = ctx.run(work.send, None)
                    except StopIteration:
                        work = None
                    else:  # it suspended (a store step that waits): the run task goes on
                        work = _Resume(work, yielded)
            elif type(msg) is m.Move and self._later is not None:
                ctx = self._ctx
                if ctx is None:  # (not reached: set whenever the run task goes idle)
                    ctx = self._ctx = contextvars.copy_context()
                work = ctx.run(self._move_later, msg, started)
            else:
                work = self._serve(msg, started)
            if work is not None:
                self._hand_over(work)
                return True
        if self._closing is not None:
            self._wake_run()  # the run task ends the connection
        elif self._idle_timer is None:
            self._arm_idle()
        self.busy = False
        return True

    def queued(self) -> None:
        """A complete message went to websockets' assembler (``take`` said False, or it
        was not a complete binary frame): the run task receives it, in turn."""
        self._waiting += 1
        if self._loop is not None:
            self._last_in = self._loop.time()
        self.busy = True
        self._wake_run()

    def lost(self) -> None:
        """The TCP connection ended: the run task finishes what is queued, then ends."""
        self._lost = True
        self._wake_run()

    def _hand_over(self, work: Coroutine[Any, Any, None] | _Resume) -> None:
        self._work = work
        self._wake_run()

    def _wake_run(self) -> None:
        wake = self._wake
        if wake is not None and not wake.done():
            wake.set_result(None)

    def _attach(self) -> None:
        """Take the frames from websockets: from now on they come to ``take``/``queued``.
        Messages already in its assembler (sent right after the handshake) are counted
        for the run task."""
        ws = self.ws
        attach = getattr(ws, "attach", None)
        if attach is None:  # a plain ServerConnection (not guard.py's): pull every frame
            self._waiting = -1
            return
        self._waiting = attach(self)

    async def run(self) -> None:
        """Serve the connection until it closes; then leave its room."""
        self.server.metrics.connections.inc()
        loop = self._loop = asyncio.get_running_loop()
        recv = self.ws.recv
        self._last_in = loop.time()
        if self._closing is not None:  # refused at the door (shutting down, address cap)
            self._start_writer()
        try:
            self._arm_idle()
            self._attach()
            while self._closing is None:
                work = self._work
                if work is not None:
                    self._work = None
                    await work
                elif self._pending is not None:  # a move on Redis: what follows waits for it
                    await self._until_answered(loop)
                    continue
                elif self._held:  # frames held behind it, before those in the assembler
                    await self._handle(self._held.popleft())
                elif self._waiting:
                    if self._waiting > 0:
                        self._waiting -= 1
                    try:
                        frame = await recv()
                    except ConnectionClosed:
                        break
                    self._last_in = loop.time()
                    await self._handle(frame)
                elif self._lost:
                    break
                else:  # nothing to do: frames are handled as they arrive (``take``)
                    self._ctx = contextvars.copy_context()
                    self.busy = False
                    await self._woken(loop)
                    continue
                if self._idle_timer is None:
                    self._arm_idle()  # left a room: the idle deadline applies again
        finally:
            self.busy = True  # nothing more is handled as it arrives
            self._held.clear()  # (the connection is closing: not answered)
            while self._pending is not None:  # its ack (or refusal) first: the seat's state
                await self._until_answered(loop)
            detach = getattr(self.ws, "detach", None)
            if detach is not None:
                detach()
            work, self._work, self._ctx = self._work, None, None
            if isinstance(work, Coroutine):
                work.close()  # never started: the connection closed first
            if self._idle_timer is not None:
                self._idle_timer.cancel()
                self._idle_timer = None
            try:
                await lobby.drop(self.server, self)
            except Exception:
                log.exception("connection %s: leaving its room failed", self.id)
            if self._closing is None:
                self._stopped = True
            writer = self._writer_task
            if writer is not None:
                try:
                    await asyncio.wait_for(asyncio.shield(writer),
                                           self.config.shutdown_grace_s)
                except (TimeoutError, asyncio.CancelledError):
                    writer.cancel()
            self.server.metrics.connections.dec()

    async def _handle(self, frame: bytes | str) -> None:
        """One message the run task received itself (from websockets' assembler)."""
        started = time.perf_counter()
        msg = self._accept(frame)
        if msg is None:
            return
        if type(msg) is m.Move and self._later is not None:
            self._move_later(msg, started)  # answered from the store's reply (``_pending``)
        else:
            await self._serve(msg, started)

    def _accept(self, frame: bytes | str) -> Any:
        """Count, charge and decode ``frame``: its message, or None when it was answered
        with an error here (rate limited, undecodable)."""
        self.server.metrics.frames_in.value += 1  # (a HotCounter: its inc() without the call)
        if not self._credits.take():
            self._error(ProtocolError(Code.RATE_LIMITED, "too many messages; slow down"))
            return None
        try:
            # A text frame is refused by the decoder (bad_frame): the protocol is binary.
            msg = decode_client(frame, self.config.max_frame)
        except DecodeError as exc:
            self._error(exc)
            return None
        if type(msg) is not m.Move:  # (a move costs one credit: no further test)
            heavy = isinstance(msg, _HEAVY) or (isinstance(msg, m.Hello) and msg.token is not None)
            if heavy and not self._credits.take(self.config.rate_cost_heavy - 1):
                self._credits.credits += 1  # refund: the message is dropped, not half-charged
                self._error(ProtocolError(Code.RATE_LIMITED, "too many rooms requests; slow down"))
                return None
        return msg

    async def _serve(self, msg: Any, started: float) -> None:
        """Carry out a decoded message (``started``: when its frame was taken); every
        failure becomes its documented error."""
        try:
            if type(msg) is m.Move:  # the hot path: judged here, without _dispatch's frame
                room, member = self._in_room()
                self._replied(await race.play(room, member, msg), started)
            else:
                await self._dispatch(msg)
        except Exception as exc:
            self._failed(exc, msg)

    def _move_now(self, msg: m.Move, started: float,
                  append: Callable[..., None]) -> Coroutine[Any, Any, None] | None:
        """A move on a store that appends synchronously (``race.play_now``): answered
        here, or the coroutine of what must wait (after its ack, if it was stored)."""
        try:
            room, member = self.room, self.member
            if room is None or member is None or not self.hello_done:
                room, member = self._in_room()  # (raises: its error, in its order)
            reply = race.play_now(room, member, msg, append)
        except Exception as exc:
            self._failed(exc, msg)
            return None
        if isinstance(reply, m.Accepted):
            # ``move_latency.observe``, inline (a HotHistogram: once per move, no call)
            latency = self.server.metrics.move_latency
            took = time.perf_counter() - started
            latency.counts[bisect_left(latency.bounds, took)] += 1
            latency.sum += took
            return None
        if isinstance(reply, m.Rejected):
            self.send(reply)
            return None
        return self._move_rest(reply, msg, started)

    async def _move_rest(self, rest: Coroutine[Any, Any, Any], msg: m.Move,
                         started: float) -> None:
        try:
            reply = await rest
        except Exception as exc:
            self._failed(exc, msg)
            return
        self._replied(reply, started)

    def _move_later(self, msg: m.Move, started: float) -> None:
        """A move on a store that answers appends by callback (``race.play_later``):
        judged now, and answered from the store's reply (``_answered``); until then the
        connection's later frames wait (``take`` holds them)."""
        later = self._later
        assert later is not None
        try:
            room, member = self._in_room()
            judged = race.play_later(room, member, msg, later, self._answered)
        except Exception as exc:
            self._failed(exc, msg)
            return
        if isinstance(judged, m.Rejected):  # judged illegal: nothing to store
            self.send(judged)
        else:  # (and when it was handed to the store: its timer)
            self._pending = (room, member, msg, judged, started, time.perf_counter())

    def _answered(self, exc: Exception | None) -> None:
        """The store answered the pending move (``exc``: None when it is stored; called
        from the store's reply, outside any task): the ack or refusal, then the frames
        held behind it, in order, each as ``take`` would handle it — until one waits
        again (another move on Redis, or a coroutine the run task takes over)."""
        pending, self._pending = self._pending, None
        if pending is None:  # (not reached: one answer per move)
            return
        if self.receiving:  # (not reached: the reply comes from the store's connection)
            self._answered_now(pending, exc)
            return
        # The ack (and what else this sends) is written at the end, in one write: now,
        # not a loop iteration later (``Outbound.flush``).
        self.receiving = True
        try:
            self._answered_now(pending, exc)
        finally:
            self.receiving = False
            if self._unflushed_frames:
                self.flush()

    def _answered_now(self, pending: tuple[Room, Member, m.Move, Any, float, float],
                      exc: Exception | None) -> None:
        room, member, msg, judged, started, submitted = pending
        self.server.metrics.store_latency.labels("append_move").observe(
            time.perf_counter() - submitted)
        outcome = race.appended(room, member, msg, judged, exc)
        work: Coroutine[Any, Any, None] | None
        if isinstance(outcome, Exception):
            self._failed(outcome, msg)
            work = None
        elif isinstance(outcome, m.Accepted | m.Rejected):
            self._replied(outcome, started)
            work = None
        else:
            work = self._move_rest(outcome, msg, started)
        held = self._held
        while work is None and held and self._pending is None and self._closing is None:
            frame = held.popleft()
            started = time.perf_counter()
            msg = self._accept(frame)
            if msg is None:
                continue
            if type(msg) is m.Move:  # (in the move's context: see GroupCommit.submit_later)
                self._move_later(msg, started)
            else:
                work = self._serve(msg, started)
        if work is not None:
            self.busy = True
            self._hand_over(work)  # then the held frames, then the assembler's
        elif self._pending is None:
            if self._blocked or self._waiting or self._lost or self._closing is not None:
                self.busy = True
                self._wake_run()  # the run task goes on: frames in the assembler, or the end
            else:
                self.busy = False
        elif len(held) < self.config.held_frames and not self._waiting:
            self.busy = False

    async def _until_answered(self, loop: asyncio.AbstractEventLoop) -> None:
        """Wait (the run task) until the pending move on Redis is answered."""
        self._blocked = True
        try:
            await self._woken(loop)
        finally:
            self._blocked = False

    async def _woken(self, loop: asyncio.AbstractEventLoop) -> None:
        """Wait (the run task) until ``_wake_run`` wakes it."""
        self._wake = wake = loop.create_future()
        try:
            await wake
        finally:
            self._wake = None

    def _replied(self, reply: m.Accepted | m.Rejected, started: float) -> None:
        """A move's outcome: a rejection is sent (the ack was, by ``race``), an
        acknowledged move's latency counted."""
        if isinstance(reply, m.Rejected):
            self.send(reply)
        else:
            self.server.metrics.move_latency.observe(time.perf_counter() - started)

    def _failed(self, exc: Exception, msg: Any) -> None:
        """``msg``'s handling raised ``exc``: its documented error (an unexpected one is
        logged, and the client told ``internal``)."""
        if isinstance(exc, ProtocolError):
            self._error(exc)
        elif isinstance(exc, StoreUnavailable):
            self._error(ProtocolError(Code.STORE_UNAVAILABLE))
        else:
            log.error("connection %s: %s failed", self.id, type(msg).__name__, exc_info=exc)
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
    async def _dispatch(self, msg: Any) -> None:
        """Every message but ``Move`` (``_handle`` judges moves itself)."""
        server = self.server
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
        self.batched = msg.batched
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
