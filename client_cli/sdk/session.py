"""The machinery under ``RaceClient``: reading frames, folding them into the room state,
settling requests, and resuming after a drop or a desync.

Resume: a player reconnects with exponential backoff and jitter and sends
``Hello{token, seen}``; a spectator joins again. A move in flight across a drop is
settled by the resumed board (stored before the drop: accepted) or sent again with the
same sequence (never played twice: the server checks the sequence). A board whose hash
disagrees is dropped and fetched again the same way (``seen = 0``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

from protocol import PROTOCOL_VERSION, Code, DecodeError, decode_server, encode
from protocol import messages as M

from .errors import ClientClosed, ConnectionLost, MoveRejected, RaceError
from .room import RoomState

log = logging.getLogger("solrace.client")

CLIENT_NAME = "solrace-sdk/0.1"
# Refusals that mean "come back later" (PROTOCOL.md, "Transport"): 503 (the node is at
# its admission rate, full, or stopping) and 429 (this address's caps). A connection is
# tried again, with backoff, for this long: 10,000 players reconnecting to one node at
# its default 300 a second are all back in ~33 s.
BUSY_STATUSES = frozenset({429, 503})
BUSY_PATIENCE_S = 60.0
# Codes after which resuming is pointless: the seat belongs to someone else now.
_NO_RESUME = {Code.TAKEN_OVER, Code.BAD_TOKEN, Code.VERSION_MISMATCH}
# Reconnect backoff: the first wait, doubling per failed try up to the cap (``backoff_delay``).
BACKOFF_S = 0.1
MAX_BACKOFF_S = 5.0


def backoff_delay(attempt: int, base_s: float = BACKOFF_S,
                  max_s: float = MAX_BACKOFF_S) -> float:
    """Seconds to wait after the ``attempt``-th (1-based) failure in a row: ``base_s``
    doubling per failure up to ``max_s``, jittered to 50-100% so that clients refused or
    dropped together do not all come back at once (no thundering herd)."""
    delay: float = min(max_s, base_s * 2 ** (max(attempt, 1) - 1))
    return delay * random.uniform(0.5, 1.0)


@dataclass(frozen=True)
class Disconnected:
    """Event: the connection dropped; the client is trying to resume."""

    reason: str


@dataclass(frozen=True)
class Reconnected:
    """Event: the session was resumed after ``attempts`` tries; boards are current again."""

    attempts: int


@dataclass(frozen=True)
class Desynced:
    """Event: a board's hash disagreed with the server's; the client resyncs by itself."""

    seat: int


@dataclass
class _PendingMove:
    seq: int
    move: str
    future: asyncio.Future[M.Accepted]
    sent_at: float


class Session:
    """The state and the reading side of a client session (``RaceClient`` adds the
    requests). See ``RaceClient`` for the constructor's arguments."""

    def __init__(
        self,
        url: str,
        name: str,
        *,
        bot: bool = False,
        client: str = CLIENT_NAME,
        reconnect: bool = True,
        max_retries: int = 8,
        backoff_s: float = BACKOFF_S,
        max_backoff_s: float = MAX_BACKOFF_S,
        open_timeout: float = 10.0,
        on_event: Callable[[Any], None] | None = None,
        event_buffer: int = 10_000,
        busy_patience_s: float = BUSY_PATIENCE_S,
    ) -> None:
        self.url, self.name, self.bot, self.client_name = url, name, bot, client
        self.busy_patience_s = busy_patience_s
        self.reconnect, self.max_retries = reconnect, max_retries
        self.backoff_s, self.max_backoff_s, self.open_timeout = (
            backoff_s,
            max_backoff_s,
            open_timeout,
        )
        self.on_event = on_event
        self.room = RoomState()
        self.welcome: M.Welcome | None = None
        self.bytes_in = 0  # payload bytes received (for the load generator)
        self.frames_in = 0
        # Per message type: [frames, payload bytes] (the load generator turns this on).
        self.count_frames = False
        self.frame_stats: dict[str, list[int]] = {}
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._closing = False
        self._failure: RaceError | None = None
        self._request_lock = asyncio.Lock()
        self._move_lock = asyncio.Lock()
        self._reply: tuple[tuple[type, ...], asyncio.Future[Any]] | None = None
        self._pending: _PendingMove | None = None
        self._watchers: list[tuple[Callable[[RoomState], bool], asyncio.Future[None]]] = []
        # Bounded: a consumer that never reads events must not grow memory without end;
        # when full the oldest event is dropped (the RoomState is always complete anyway).
        self._events: asyncio.Queue[Any] = asyncio.Queue(maxsize=event_buffer)
        self._resyncing = False
        self.resumes = 0  # sessions resumed after a drop or a desync
        self._credits = 1.0
        self._credit_at = time.monotonic()

    async def _open(self) -> ClientConnection:
        """A new websocket to the server. A refusal that says "later" (HTTP 503: the
        node's admission budget or a full node; 429: this address's caps) is tried again
        with jittered backoff for up to ``busy_patience_s``: after a node restart many
        players reconnect at once and a node admits them at its rate
        (docs/SECURITY.md, "Node-wide admission rate"). Anything else, or a refusal
        past the patience, raises ``ConnectionLost``."""
        host = urlparse(self.url).hostname or ""
        loopback = host in {"127.0.0.1", "localhost", "::1"}
        give_up = time.monotonic() + self.busy_patience_s
        for attempt in itertools.count(1):
            try:
                return await connect(
                    self.url,
                    open_timeout=self.open_timeout,
                    max_size=1 << 24,
                    proxy=None if loopback else True,
                    user_agent_header=self.client_name,
                )
            except InvalidStatus as exc:
                status = exc.response.status_code
                if status not in BUSY_STATUSES or time.monotonic() >= give_up:
                    raise ConnectionLost(f"cannot connect to {self.url}: {exc}") from None
            except (OSError, InvalidHandshake, InvalidURI, TimeoutError) as exc:
                raise ConnectionLost(f"cannot connect to {self.url}: {exc}") from None
            if self._closing:
                raise ClientClosed()
            await asyncio.sleep(backoff_delay(attempt, self.backoff_s, self.max_backoff_s))
        raise AssertionError("unreachable")

    async def _recv(self, ws: ClientConnection) -> Any:
        """The next message the client understands. A message type it does not know is
        skipped: a newer server may send types added within the protocol version
        (PROTOCOL.md, "Versioning"); anything else undecodable is an error."""
        while True:
            frame = await ws.recv()
            if isinstance(frame, str):
                raise RaceError(Code.BAD_FRAME, "the server sent a text frame")
            self.bytes_in += len(frame)
            self.frames_in += 1
            try:
                msg = decode_server(frame)
            except DecodeError as exc:
                if exc.code == Code.UNKNOWN_TYPE:
                    continue
                raise RaceError(
                    exc.code, f"undecodable frame from the server: {exc.message}"
                ) from None
            break
        if self.count_frames:
            stat = self.frame_stats.setdefault(type(msg).__name__, [0, 0])
            stat[0] += 1
            stat[1] += len(frame)
        return msg

    async def _send(self, message: Any) -> None:
        if self._failure is not None:
            raise self._failure
        if self._ws is None:
            raise ConnectionLost("not connected")
        await self._pace()
        # On a drop the reader notices and resumes; the caller's wait covers the gap.
        with contextlib.suppress(ConnectionClosed):
            await self._ws.send(encode(message))

    async def _pace(self) -> None:
        """Stay within the server's announced rate (``Welcome.rate_per_s``): a token
        bucket of one second's worth of credits, so a fast bot slows down instead of
        collecting ``rate_limited`` errors."""
        rate = self.welcome.rate_per_s if self.welcome is not None else 0.0
        if rate <= 0:
            return
        burst = max(1.0, rate)
        now = time.monotonic()
        self._credits = min(burst, self._credits + (now - self._credit_at) * rate)
        self._credit_at = now
        if self._credits < 1:
            wait = (1 - self._credits) / rate
            self._credits = 1.0
            await asyncio.sleep(wait)  # pacing, not synchronisation
            self._credit_at = time.monotonic()
        self._credits -= 1

    def _emit(self, event: Any) -> None:
        if self._events.full():
            self._events.get_nowait()
        self._events.put_nowait(event)
        if self.on_event is not None:
            try:
                self.on_event(event)
            except Exception:  # a UI callback must not kill the session
                log.exception("on_event callback failed")

    def _handle(self, msg: Any) -> None:
        """Fold one message in, resolve whoever waits for it, then offer it as an event."""
        room = self.room
        pending = self._pending
        if isinstance(msg, M.Accepted):
            if pending is not None and msg.seq == pending.seq and not pending.future.done():
                board = room.my_board
                if board is not None and not board.apply(
                    msg.seq, pending.move, msg.revealed, msg.hash
                ):
                    self._desync(board.seat)
                room.last_clock_ms = max(room.last_clock_ms, msg.clock_ms)
                pending.future.set_result(msg)
        elif isinstance(msg, M.Rejected):
            if pending is not None and msg.seq == pending.seq and not pending.future.done():
                pending.future.set_exception(
                    MoveRejected(
                        pending.move, msg.seq, msg.code, msg.reason, msg.expected, msg.retryable
                    )
                )
            board = room.my_board
            if msg.code == Code.OUT_OF_ORDER and board is not None and msg.expected > board.seq + 1:
                self._desync(board.seat)  # the server has moves we never saw
        else:
            room.update(msg)
            if isinstance(msg, M.Diff) and msg.seat in room.desynced:
                self._desync(msg.seat)
            if isinstance(msg, M.Diffs) and any(d.seat in room.desynced for d in msg.diffs):
                self._desync(next(d.seat for d in msg.diffs if d.seat in room.desynced))
            if (
                isinstance(msg, M.Diff)
                and pending is not None
                and msg.seat == room.seat
                and msg.seq == pending.seq
                and not pending.future.done()
            ):
                # Our in-flight move, replayed after a resume: it was accepted.
                pending.future.set_result(
                    M.Accepted(
                        seq=msg.seq, hash=msg.hash, clock_ms=msg.clock_ms, revealed=msg.revealed
                    )
                )
        if (
            isinstance(msg, M.Error)
            and msg.code in (Code.RATE_LIMITED, Code.STORE_UNAVAILABLE)
            and pending is not None
            and not pending.future.done()
            and self._reply is None
        ):
            # The server refuses an over-rate frame with an Error, not a Rejected; a
            # store outage while the move was handled is one too. Either way the move
            # may be sent again (a stored one is recognised: same seq, same move).
            pending.future.set_exception(
                MoveRejected(pending.move, pending.seq, msg.code, msg.message, pending.seq, True)
            )
        reply = self._reply
        if reply is not None and not reply[1].done():
            if isinstance(msg, M.Error):
                reply[1].set_exception(RaceError(msg.code, msg.message, msg.retryable))
            elif isinstance(msg, reply[0]):
                reply[1].set_result(msg)
        for predicate, future in list(self._watchers):
            if not future.done():
                try:
                    if predicate(room):
                        future.set_result(None)
                except Exception as exc:
                    future.set_exception(exc)
        self._emit(msg)

    def _desync(self, seat: int) -> None:
        """A board disagrees with the server: reconnect and resume to get it again."""
        if self._resyncing:
            return
        log.warning("board %d desynced; resuming to resync", seat)
        self._emit(Desynced(seat))
        self._resyncing = True
        if self._ws is not None:
            asyncio.get_running_loop().create_task(self._ws.close())

    async def _read_loop(self) -> None:
        reason = "closed"
        while True:
            ws = self._ws
            assert ws is not None
            try:
                while True:
                    msg = await self._recv(ws)
                    if isinstance(msg, M.Closing):
                        reason = f"{msg.code}: {msg.message}"
                        self._emit(msg)
                        if msg.code in _NO_RESUME:
                            self._fail(RaceError(msg.code, msg.message, False))
                            return
                        continue
                    if isinstance(msg, M.Error) and msg.fatal and msg.code in _NO_RESUME:
                        self._handle(msg)
                        self._fail(RaceError(msg.code, msg.message, False))
                        return
                    self._handle(msg)
            except ConnectionClosed as exc:
                if reason == "closed":
                    code = exc.rcvd.code if exc.rcvd else "no close frame"
                    reason = f"connection closed ({code})"
            except RaceError as exc:
                reason = str(exc)
            if self._closing:
                self._fail(ClientClosed())
                return
            if not self._can_resume():
                self._fail(ConnectionLost(f"connection lost: {reason}"))
                return
            self._emit(Disconnected(reason))
            try:
                attempts = await self._resume()
            except RaceError as exc:
                self._fail(exc)
                return
            self._resyncing = False
            self._emit(Reconnected(attempts))
            await self._resend_pending()

    def _can_resume(self) -> bool:
        room = self.room
        if not self.reconnect or room.results is not None or not room.code:
            return False
        return room.token is not None or room.seat == 0

    async def _resume(self) -> int:
        """Reconnect with backoff; returns the number of attempts it took."""
        room = self.room
        last: Exception | None = None
        for attempt in range(1, self.max_retries + 1):
            if self._closing:
                raise ClientClosed()
            await asyncio.sleep(backoff_delay(attempt, self.backoff_s, self.max_backoff_s))
            try:
                ws = await self._open()
            except ConnectionLost as exc:
                last = exc
                continue
            try:
                joined = await asyncio.wait_for(self._handshake(ws), self.open_timeout)
            except RaceError as exc:
                await ws.close()
                if exc.code in _NO_RESUME or (not exc.retryable and exc.code != "connection_lost"):
                    raise
                last = exc
                continue
            except (ConnectionClosed, TimeoutError) as exc:
                last = exc
                continue
            self._ws = ws
            self.resumes += 1
            self._handle(joined)
            return attempt
        raise ConnectionLost(
            f"could not resume room {room.code} after {self.max_retries} tries: {last}"
        )

    async def _handshake(self, ws: ClientConnection) -> M.Joined:
        room = self.room
        board = room.my_board
        if room.token is not None:
            seen = 0 if board is None or board.desynced else board.seq
            hello = M.Hello(
                version=PROTOCOL_VERSION,
                name=self.name,
                bot=self.bot,
                client=self.client_name,
                token=room.token,
                seen=seen,
                batched=True,
            )
            await ws.send(encode(hello))
        else:
            await ws.send(
                encode(
                    M.Hello(
                        version=PROTOCOL_VERSION,
                        name=self.name,
                        bot=self.bot,
                        client=self.client_name,
                        batched=True,
                    )
                )
            )
            reply = await self._recv(ws)
            if isinstance(reply, M.Error):
                raise RaceError(reply.code, reply.message, reply.retryable)
            await ws.send(encode(M.Join(code=room.code, role="spectator")))
        while True:
            reply = await self._recv(ws)
            if isinstance(reply, M.Error):
                raise RaceError(reply.code, reply.message, reply.retryable)
            if isinstance(reply, M.Joined):
                if board is not None and board.desynced:
                    room.boards.pop(board.seat, None)
                return reply
            self._handle(reply)  # anything before Joined (e.g. a Welcome) just updates state

    async def _resend_pending(self) -> None:
        pending, board = self._pending, self.room.my_board
        if pending is None or pending.future.done() or board is None:
            return
        if board.seq >= pending.seq:
            # The server had stored it before the drop: the resumed board includes it.
            pending.future.set_result(
                M.Accepted(seq=pending.seq, hash=board.hash, clock_ms=self.room.last_clock_ms)
            )
            return
        await self._send(M.Move(seq=pending.seq, move=pending.move))

    @property
    def failure(self) -> RaceError | None:
        """Why the session ended for good (``ConnectionLost`` after the last resume try,
        ``taken_over``, ``ClientClosed``...), or None while it lives."""
        return self._failure

    def _fail(self, error: RaceError) -> None:
        self._failure = error
        self._fail_all(error)

    def _fail_all(self, error: RaceError) -> None:
        if self._reply is not None and not self._reply[1].done():
            self._reply[1].set_exception(error)
        if self._pending is not None and not self._pending.future.done():
            self._pending.future.set_exception(error)
        for _, future in self._watchers:
            if not future.done():
                future.set_exception(error)
        if self._events.full():
            self._events.get_nowait()
        self._events.put_nowait(None)
