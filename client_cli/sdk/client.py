"""``RaceClient``: one websocket session with a solrace server, in asyncio.

It speaks the protocol (protocol/messages.py) and keeps a ``RoomState`` current: every
board it may see is updated move by move with ``engine.apply_diff`` and checked against
the server's state hash. Requests are coroutines that return the server's answer or raise
a typed ``RaceError``. Every server message is also offered to ``events()`` (an async
iterator) and to an optional ``on_event`` callback.

If the connection drops (or a board desyncs) while in a room, the client resumes by
itself: a player sends ``Hello{token, seen}``, a spectator joins again; with exponential
backoff and jitter. A move in flight across a drop is resolved by the replayed log
(accepted) or sent again with the same sequence (never played twice: the server checks
the sequence).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import msgspec
from websockets.exceptions import ConnectionClosed

import engine
from protocol import PROTOCOL_VERSION, Code, encode
from protocol import messages as M

from .errors import ClientClosed, ConnectionLost, MoveRejected, RaceError
from .room import RoomState
from .session import CLIENT_NAME, Desynced, Disconnected, Reconnected, Session, _PendingMove

# How long a move is retried while the server says its store is unavailable (a Redis
# failover takes seconds; the server never answers internal for it).
STORE_PATIENCE_S = 30.0
# How long a command that prints the results once waits for the deal's verdict when the
# results came without it: the server's solver has at most a second or so per deal
# (results_solver_s), from the room's creation, so it is nearly always known by then.
VERDICT_WAIT_S = 3.0
# resign(): how long to wait for the seat's own "resigned" after each send, and how many
# sends (a resignation is idempotent on the server: a second one is refused as finished).
RESIGN_CONFIRM_S = 10.0
RESIGN_TRIES = 3
# A seat whose race is over (protocol.md, seat status).
_SEAT_OVER = frozenset({"won", "stuck", "resigned", "timeout"})
# ``list_rooms`` reads the server's room list a page at a time (ListRooms.before): it
# stops at this many rooms (ten pages of the server's default 50) or pages, so one call
# is a bounded number of requests whatever the server holds.
LIST_ROOMS_LIMIT = 500
LIST_PAGES_MAX = 20
# A list costs the server's heavy rate (5 credits at the default 10 a second): a page
# refused rate_limited is asked again after this (times the attempt), at most LIST_RETRIES
# times.
LIST_RATE_WAIT_S = 0.5
LIST_RETRIES = 5

__all__ = ["CLIENT_NAME", "Desynced", "Disconnected", "RaceClient", "Reconnected", "settings_from"]


class RaceClient(Session):
    """A client session. Use ``async with RaceClient(url, name) as client:`` or call
    ``connect()`` and ``close()``. Not thread-safe; one asyncio loop.

    ``bot`` is announced in hello (bots must say so). ``reconnect`` turns automatic
    resume on (default); ``max_retries`` bounds the attempts per drop."""

    async def __aenter__(self) -> RaceClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def connect(self) -> M.Welcome:
        """Open the session: send hello (``bot`` included), return the server's welcome.
        Raises ``RaceError`` (e.g. ``version_mismatch``) or ``ConnectionLost``."""
        ws = await self._open()
        hello = M.Hello(
            version=PROTOCOL_VERSION, name=self.name, bot=self.bot, client=self.client_name,
            batched=True,  # this client applies Diffs frames (Room.update)
        )
        await ws.send(encode(hello))
        try:
            reply = await asyncio.wait_for(self._recv(ws), self.open_timeout)
        except (ConnectionClosed, TimeoutError) as exc:
            await ws.close()
            raise ConnectionLost(f"no welcome from {self.url}: {exc!r}") from None
        if isinstance(reply, M.Error):
            await ws.close()
            raise RaceError(reply.code, reply.message, reply.retryable)
        if not isinstance(reply, M.Welcome):
            await ws.close()
            raise RaceError(Code.BAD_FRAME, f"expected welcome, got {type(reply).__name__}")
        self.welcome = reply
        self.room.update(reply)
        self._ws = ws
        self._closing = False
        self._reader = asyncio.create_task(self._read_loop(), name=f"solrace-reader-{self.name}")
        return reply

    async def resume(self, token: str) -> RoomState:
        """Open the session by taking back a seat with its resume token (kept from an
        earlier session's ``room.token``): the room and the board as they are now. Raises
        ``RaceError`` (``bad_token`` when the token is unknown or the race is over)."""
        ws = await self._open()
        self.room.token = token
        try:
            joined = await asyncio.wait_for(self._handshake(ws), self.open_timeout)
        except (ConnectionClosed, TimeoutError) as exc:
            await ws.close()
            raise ConnectionLost(f"no answer to the resume from {self.url}: {exc!r}") from None
        except RaceError:
            await ws.close()
            self.room.token = None
            raise
        self._ws = ws
        self._closing = False
        self._handle(joined)
        self._reader = asyncio.create_task(self._read_loop(), name=f"solrace-reader-{self.name}")
        return self.room

    async def close(self) -> None:
        """Close the session (sends nothing more; the server keeps a player's seat for
        its grace period). Waiting requests fail with ``ClientClosed``."""
        self._closing = True
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._reader, 5)
        self._fail_all(ClientClosed())

    @property
    def connected(self) -> bool:
        """True while a connection is open (False while resuming)."""
        return self._ws is not None and self._failure is None and not self._resyncing

    # ================================================================== requests
    async def _request(
        self, message: Any, expect: tuple[type, ...], timeout_s: float = 15.0
    ) -> Any:
        """Send ``message`` and wait for the first reply of a type in ``expect``, or an
        ``Error`` (raised as ``RaceError``)."""
        async with self._request_lock:
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self._reply = (expect, future)
            try:
                await self._send(message)
                return await asyncio.wait_for(future, timeout_s)
            except TimeoutError:
                raise RaceError(
                    "timeout",
                    f"no answer to {type(message).__name__} in {timeout_s}s",
                    retryable=True,
                ) from None
            finally:
                self._reply = None

    async def create_room(
        self, settings: M.RoomSettings | dict[str, Any], as_player: bool = True
    ) -> RoomState:
        """Create a room (``settings`` as ``RoomSettings`` or a dict of its attribute
        names) and take its first seat (or watch it). Returns the room state."""
        if isinstance(settings, dict):
            settings = M.RoomSettings(**settings)
        await self._request(M.CreateRoom(settings=settings, as_player=as_player), (M.Joined,))
        return self.room

    async def join(self, code: str, role: M.Role = "player") -> RoomState:
        """Join room ``code`` as ``"player"`` or ``"spectator"``."""
        await self._request(M.Join(code=code, role=role), (M.Joined,))
        return self.room

    async def list_page(self, before: str | None = None) -> M.RoomList:
        """One page of the open public rooms, newest first (the server's page size): the
        first without ``before``, the next with the ``next`` of the page before. A page
        refused ``rate_limited`` (a list costs the server's heavy rate, several credits)
        is asked again after a pause, up to LIST_RETRIES times."""
        for attempt in range(1, LIST_RETRIES + 1):
            try:
                reply: M.RoomList = await self._request(M.ListRooms(before=before),
                                                        (M.RoomList,))
                return reply
            except RaceError as exc:
                if exc.code != Code.RATE_LIMITED or attempt == LIST_RETRIES:
                    raise
            await asyncio.sleep(LIST_RATE_WAIT_S * attempt)  # credits refill: not a sync
        raise AssertionError("unreachable")

    async def list_rooms(self, limit: int = LIST_ROOMS_LIMIT) -> list[M.RoomSummary]:
        """The open public rooms, newest first, each once: the server's pages read in
        order until the last one, or until ``limit`` rooms or LIST_PAGES_MAX pages were
        read, whichever comes first (so at most ``limit`` rooms and LIST_PAGES_MAX
        requests, however many rooms the server has)."""
        rooms: list[M.RoomSummary] = []
        seen: set[str] = set()
        cursor: str | None = None
        for _ in range(LIST_PAGES_MAX):
            page = await self.list_page(cursor)
            for room in page.rooms:
                if room.code not in seen and len(rooms) < limit:
                    seen.add(room.code)
                    rooms.append(room)
            cursor = page.next
            if cursor is None or len(rooms) >= limit:
                break
        return rooms

    async def _through_outages(self, message: Any, expect: tuple[type, ...]) -> Any:
        """``_request``, sent again while the server answers ``store_unavailable`` (for
        up to STORE_PATIENCE_S: a Redis failover takes seconds; nothing was changed)."""
        waited = 0.0
        for attempt in itertools.count(1):
            try:
                return await self._request(message, expect)
            except RaceError as exc:
                if exc.code != Code.STORE_UNAVAILABLE or waited >= STORE_PATIENCE_S:
                    raise
            delay = min(1.0, 0.2 * attempt)
            await asyncio.sleep(delay)  # backoff before retrying, not synchronisation
            waited += delay
        raise AssertionError("unreachable")

    async def ready(self, ready: bool = True) -> None:
        """Say this player is (not) ready. Refusals arrive as ``RaceError``."""
        await self._through_outages(M.Ready(ready=ready), (M.Seats, M.Countdown, M.Started))

    async def rematch(self, want: bool = True) -> None:
        """After the results: ask for (or withdraw from) a new race in this room on a new
        deal (``ready`` in the finished phase). When everyone asked, the server sends
        ``Joined`` again with a new commitment and the room is back in its lobby. A
        server without rematches refuses it (``room_closed``)."""
        await self._request(M.Ready(ready=want), (M.Seats, M.Joined))

    async def start_now(self) -> None:
        """(Creator only) start the countdown without waiting for everyone to be ready;
        after the results, start the rematch with the players who asked (``Joined``)."""
        await self._request(M.StartNow(), (M.Countdown, M.Started, M.Joined))

    async def resign(self) -> None:
        """Give up the race (the rank then goes by progress). Returns once the server has
        marked this seat over (its own ``Progress`` says so) or the race has ended; a race
        already over needs no resignation. Sent again while the server's store is
        unavailable (up to ``STORE_PATIENCE_S``) and when no confirmation comes in time
        (``RESIGN_TRIES`` sends): a resignation lost in a failover would otherwise leave
        the seat racing, and the room waiting for it. Raises ``RaceError`` (``timeout``)
        when the server never confirms."""

        def over(room: RoomState) -> bool:
            me = room.me
            return room.results is not None or (me is not None and me.status in _SEAT_OVER)

        for _ in range(RESIGN_TRIES):
            if over(self.room):
                return
            try:
                # Any of these may answer (a rival's move too): the seat's own status,
                # below, is the confirmation.
                await self._through_outages(M.Resign(), (M.Progress, M.Ranking, M.Results))
            except RaceError as exc:
                if exc.code in (Code.FINISHED, Code.NOT_RUNNING):
                    return
                if exc.code != "timeout":
                    raise
            with contextlib.suppress(TimeoutError):
                await self.wait_for(over, RESIGN_CONFIRM_S)
                return
        raise RaceError("timeout", f"the server did not confirm the resignation after "
                                   f"{RESIGN_TRIES} tries", True)

    async def leave(self) -> None:
        """Leave the room."""
        await self._send(M.Leave())

    async def hint(self) -> str | None:
        """Ask the server for a hint (rooms with hints on); None when it knows none."""
        reply: M.Hint = await self._request(M.HintRequest(), (M.Hint,))
        return reply.move

    async def ping(self) -> float:
        """Round trip to the server in seconds."""
        t0 = time.perf_counter()
        await self._request(M.Ping(nonce=random.getrandbits(31)), (M.Pong,))
        return time.perf_counter() - t0

    async def move(self, notation: str, timeout_s: float = 30.0) -> M.Accepted:
        """Play a move (looser typing is normalised: ``"3 - F"`` → ``"3>f"``) and wait for
        the server: returns ``Accepted`` (the board is already updated) or raises
        ``MoveRejected`` with the server's code and reason (the board is unchanged).
        Moves are sent one at a time, each with the next sequence number."""
        text = engine.normalise_move(notation)
        async with self._move_lock:
            board = self.room.my_board
            if board is None:
                raise RaceError(Code.NOT_RUNNING, "no board yet: the race has not started")
            seq = board.seq + 1
            waited = 0.0
            for attempt in itertools.count(1):
                try:
                    return await self._move_once(seq, text, timeout_s)
                except MoveRejected as exc:
                    # rate_limited / store_unavailable: nothing was played; same seq again.
                    # A store outage (a Redis failover) lasts seconds: keep trying for up
                    # to STORE_PATIENCE_S; other refusals get five tries.
                    patient = exc.code == Code.STORE_UNAVAILABLE and waited < STORE_PATIENCE_S
                    if not exc.retryable or (attempt >= 5 and not patient):
                        raise
                    delay = min(1.0, 0.2 * attempt)
                    await asyncio.sleep(delay)  # backoff before retrying, not synchronisation
                    waited += delay
            raise AssertionError("unreachable")

    async def _move_once(self, seq: int, text: str, timeout_s: float) -> M.Accepted:
        future: asyncio.Future[M.Accepted] = asyncio.get_running_loop().create_future()
        self._pending = _PendingMove(seq, text, future, time.perf_counter())
        try:
            await self._send(M.Move(seq=seq, move=text))
            return await asyncio.wait_for(future, timeout_s)
        except TimeoutError:
            raise RaceError("timeout", f"no answer to move {text} in {timeout_s}s", True) from None
        finally:
            self._pending = None

    # ================================================================== waiting
    async def wait_for(
        self, predicate: Callable[[RoomState], bool], timeout_s: float | None = None
    ) -> RoomState:
        """Wait until ``predicate(room)`` holds (checked now and after every message).
        Raises the session's failure (e.g. ``ConnectionLost``) once it has ended for good:
        nothing more will arrive."""
        if predicate(self.room):
            return self.room
        if self._failure is not None:
            raise self._failure
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (predicate, future)
        self._watchers.append(entry)
        try:
            await asyncio.wait_for(future, timeout_s)
        finally:
            if entry in self._watchers:
                self._watchers.remove(entry)
        return self.room

    async def wait_for_verdict(self, timeout_s: float = VERDICT_WAIT_S) -> M.Results | None:
        """The results, once they say whether the deal was winnable: at once when they
        came with the verdict, else after the server's ``Verdict`` (folded into
        ``room.results``) or ``timeout_s``, whichever comes first (an undecided deal
        never gets one). None before the results."""
        with contextlib.suppress(TimeoutError, RaceError):
            await self.wait_for(
                lambda r: r.results is not None and r.results.winnable is not None, timeout_s
            )
        return self.room.results

    async def events(self) -> AsyncIterator[Any]:
        """Every server message (and ``Disconnected``/``Reconnected``/``Desynced``) in
        order, already folded into ``room``. Ends when the client closes or fails."""
        while True:
            item = await self._events.get()
            if item is None:
                return
            yield item

    # ================================================================== reading


def settings_from(variant: str, **kwargs: Any) -> M.RoomSettings:
    """``RoomSettings`` from a variant name and attribute keywords (``options``,
    ``rank_by``, ``time_limit_s``, ...); raises ``RaceError(bad_settings)`` on bad input."""
    try:
        settings = M.RoomSettings(variant=variant, **kwargs)
        # Structs do not check constraints on construction; a round trip through the
        # codec applies the same limits the server will.
        return msgspec.msgpack.decode(msgspec.msgpack.encode(settings), type=M.RoomSettings)
    except (TypeError, msgspec.ValidationError) as exc:
        raise RaceError(Code.BAD_SETTINGS, str(exc)) from None
