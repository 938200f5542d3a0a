"""The in-memory store: one process, no persistence. The default, and the reference the
Redis store is tested against (tests/store/ runs the same contract tests on both).

Every method completes without awaiting anything before its effect is applied, so each
call is atomic with respect to every other coroutine on the loop — the same guarantee the
Redis store gets from Lua scripts. Records go in and come out as copies: a caller that
mutates a record it got back changes nothing here, as with a remote store.
"""

from __future__ import annotations

import asyncio
import bisect
import copy
import heapq
import inspect
import logging
import time
from array import array
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import msgspec

from .base import (
    Cursor,
    Deadline,
    Durability,
    EventHandler,
    Listed,
    SeqConflict,
    StaleEpoch,
    call_handler,
)
from .records import (
    NEW_ROUND_SEAT,
    Checkpoint,
    LogColumns,
    LogEntry,
    RoomRecord,
    SeatRecord,
)

log = logging.getLogger(__name__)

_ROOM_FIELDS = frozenset(RoomRecord.__struct_fields__) - {"code"}
_SEAT_FIELDS = frozenset(SeatRecord.__struct_fields__) - {"seat", "epoch"}


_MARK_EVERY = 64  # a packed log remembers where every 64th entry starts (random access)


class PackedLog:
    """One seat's move log, packed: per move the zigzag varint of its race clock minus the
    previous move's, a length byte and the move's text (about 6 bytes a move, where a
    list of ``LogEntry`` objects cost over 100: a room's log lives as long as the room,
    docs/SECURITY.md "Memory per move"). Entries are decoded on read."""

    __slots__ = ("_clock", "_data", "_mark_clock", "_mark_offset", "count")

    def __init__(self) -> None:
        self._data = bytearray()
        self.count = 0
        self._clock = 0  # the last entry's clock
        # entry k * _MARK_EVERY starts at _mark_offset[k]; the clock before it
        self._mark_offset = array("Q")
        self._mark_clock = array("q")

    def append(self, move: str, clock_ms: int) -> None:
        """Add an entry at the end."""
        text = move.encode()
        if len(text) > 255:
            raise ValueError(f"move notation too long to log: {move!r}")
        if self.count % _MARK_EVERY == 0:
            self._mark_offset.append(len(self._data))
            self._mark_clock.append(self._clock)
        data = self._data
        delta = clock_ms - self._clock
        zigzag = delta * 2 if delta >= 0 else -delta * 2 - 1
        while zigzag >= 0x80:
            data.append((zigzag & 0x7F) | 0x80)
            zigzag >>= 7
        data.append(zigzag)
        data.append(len(text))
        data += text
        self._clock = clock_ms
        self.count += 1

    def read(self, after: int = 0, limit: int | None = None) -> list[LogEntry]:
        """The entries after the first ``after``, at most ``limit`` of them."""
        after = max(after, 0)
        stop = self.count if limit is None else min(self.count, after + max(limit, 0))
        moves: list[str] = []
        clocks: list[int] = []
        self.read_columns(after, stop, moves, clocks)
        return [LogEntry(move, clock) for move, clock in zip(moves, clocks, strict=True)]

    def read_columns(self, after: int, stop: int, moves: list[str], clocks: list[int]) -> None:
        """Append entries ``after`` (0-based) up to ``stop`` (excluded, at most
        ``count``) to ``moves`` and ``clocks``: the results' columns, without an object
        per entry."""
        stop = min(stop, self.count)
        after = max(after, 0)
        if after >= stop:
            return
        mark = after // _MARK_EVERY
        pos, clock = self._mark_offset[mark], self._mark_clock[mark]
        data = self._data
        add_move, add_clock = moves.append, clocks.append
        for index in range(mark * _MARK_EVERY, stop):
            zigzag = data[pos]
            pos += 1
            if zigzag >= 0x80:  # more than one byte (deltas of 64 ms or more)
                zigzag &= 0x7F
                shift = 7
                while True:
                    byte = data[pos]
                    pos += 1
                    zigzag |= (byte & 0x7F) << shift
                    shift += 7
                    if byte < 0x80:
                        break
            clock += (zigzag >> 1) ^ -(zigzag & 1)
            end = pos + 1 + data[pos]
            if index >= after:
                add_move(data[pos + 1 : end].decode())
                add_clock(clock)
            pos = end


class _Room:
    """Everything kept for one room code."""

    __slots__ = ("checkpoints", "expires_at", "logs", "record", "results", "seats")

    def __init__(self, record: RoomRecord) -> None:
        self.record = record
        self.seats: dict[int, SeatRecord] = {}
        self.logs: dict[int, PackedLog] = {}
        self.checkpoints: dict[int, list[Checkpoint]] = {}  # by seat, ascending seq
        self.results: bytes | None = None
        self.expires_at: float | None = None  # time.monotonic() deadline


def _check_fields(fields: dict[str, Any], allowed: frozenset[str], what: str) -> None:
    if fields.keys() <= allowed:  # the usual answer, without a set built per call
        return
    unknown = set(fields) - allowed
    if unknown:
        raise TypeError(f"{what} has no settable field(s) {', '.join(sorted(unknown))}")


class MemoryStore:
    """``Store`` kept in this process's memory (see ``server.store.base.Store``)."""

    # Its calls need no task of their own (no ``asyncio.timeout``, nothing reads the
    # current task) and ``append_move`` never waits: a connection judges, stores and
    # acknowledges a move in the callback its frame arrived in (server/connection.py,
    # ``Connection.take``). A store without it gets the run task's handling.
    completes_inline = True

    def __init__(self) -> None:
        self._rooms: dict[str, _Room] = {}
        # (created_ms, code) of public rooms, ascending; finished or expired ones are
        # dropped when a listing meets them (each once), so a page costs O(page).
        self._public: list[Cursor] = []
        self._subscribers: dict[str, list[EventHandler]] = {}
        self._closed = False
        # (code, kind) -> due (wall ms); the heap orders them, stale entries skipped
        self._deadlines: dict[tuple[str, str], int] = {}
        self._due: list[tuple[int, str, str]] = []
        # Events not yet delivered, in publication order (code, event, set when done):
        # ``append_move``'s event is delivered after the call returns (ack first).
        self._events: deque[tuple[str, bytes, asyncio.Future[None] | None]] = deque()
        self._delivering = False
        self._deliver_soon = False  # a ``_deliver_now`` callback is scheduled
        # The loop of the last append_move (a store serves one loop; each
        # get_running_loop() costs a getpid() on Python 3.11, once per move here).
        self._loop: asyncio.AbstractEventLoop | None = None
        # set when an async handler made delivery go on in a task (kept from the GC)
        self._deliverer: asyncio.Task[None] | None = None
        # ``after_events``: callbacks owed at the end of the batch ``_deliver_now`` is
        # delivering (None: no batch is being delivered in place)
        self._after: list[Callable[[], None]] | None = None

    # ------------------------------------------------------------------ internals
    def _room(self, code: str) -> _Room | None:
        room = self._rooms.get(code)
        if room is not None and room.expires_at is not None and time.monotonic() >= room.expires_at:
            # Expiry is checked on access, so it holds even without a running loop timer.
            del self._rooms[code]
            return None
        return room

    # ------------------------------------------------------------------ rooms
    async def create_room(self, room: RoomRecord) -> bool:
        """Store a new room; False (and nothing changed) if the code is taken."""
        if self._room(room.code) is not None:
            return False
        self._rooms[room.code] = _Room(copy.deepcopy(room))
        if room.settings.get("pu", True):
            bisect.insort(self._public, (room.created_ms, room.code))
        return True

    async def get_room(self, code: str) -> RoomRecord | None:
        """The room, or None if there is none (or it expired)."""
        room = self._room(code)
        return copy.deepcopy(room.record) if room else None

    async def list_rooms(self) -> list[RoomRecord]:
        """Rooms not finished, in creation order."""
        out = []
        for code in list(self._rooms):
            room = self._room(code)
            if room is not None and room.record.phase != "finished":
                out.append(copy.deepcopy(room.record))
        return out

    async def list_public(self, before: Cursor | None,
                          limit: int) -> tuple[list[Listed], Cursor | None]:
        """Public rooms not finished, newest first, older than ``before`` — see ``Store``."""
        index = self._public
        i = (bisect.bisect_left(index, before) if before is not None else len(index)) - 1
        out: list[Listed] = []
        stale: list[int] = []
        last: Cursor | None = None
        while i >= 0 and len(out) < limit:
            last = index[i]
            room = self._room(last[1])
            if room is None or room.record.phase == "finished":
                stale.append(i)  # descending: deleting in this order keeps indexes valid
            else:
                seats = [msgspec.structs.replace(room.seats[n]) for n in sorted(room.seats)]
                out.append((copy.deepcopy(room.record), seats))
            i -= 1
        for j in stale:
            del index[j]
        return out, (last if i >= 0 else None)

    async def unlist_room(self, code: str) -> None:
        """Drop the room from the public index — see ``Store``."""
        room = self._room(code)
        if room is not None:
            key = (room.record.created_ms, code)
            i = bisect.bisect_left(self._public, key)
            if i < len(self._public) and self._public[i] == key:
                del self._public[i]

    async def set_phase(self, code: str, expect: str, phase: str, **fields: Any) -> bool:
        """Compare-and-set of the room's phase (and ``fields``) — see ``Store``."""
        _check_fields(fields, _ROOM_FIELDS - {"phase"}, "RoomRecord")
        room = self._room(code)
        if room is None or room.record.phase != expect:
            return False
        room.record = msgspec.structs.replace(room.record, phase=phase, **copy.deepcopy(fields))
        return True

    async def new_round(self, code: str, keep: list[int], **fields: Any) -> bool:
        """A rematch: finished → lobby with a fresh race (see ``Store.new_round``)."""
        _check_fields(fields, _ROOM_FIELDS - {"phase"}, "RoomRecord")
        room = self._room(code)
        if room is None or room.record.phase != "finished":
            return False
        await self.unlist_room(code)  # its old index entry, if a listing did not drop it
        room.record = msgspec.structs.replace(room.record, phase="lobby",
                                              **copy.deepcopy(fields))
        if room.record.settings.get("pu", True):  # listed again, like a new room
            bisect.insort(self._public, (room.record.created_ms, code))
        room.results = None
        room.seats = {n: msgspec.structs.replace(seat, **NEW_ROUND_SEAT)
                      for n, seat in room.seats.items() if n in keep}
        room.logs = {n: PackedLog() for n in room.seats}
        room.checkpoints = {}
        return True

    async def expire_room(self, code: str, ttl_s: int) -> None:
        """The room and everything in it disappear after ``ttl_s`` seconds."""
        room = self._room(code)
        if room is None:
            return
        room.expires_at = time.monotonic() + ttl_s
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # pragma: no cover - always called from a loop in practice
            return
        # Free the memory even if nobody asks for the room again.
        loop.call_later(max(ttl_s, 0) + 0.001, self._room, code)

    # ------------------------------------------------------------------ seats
    async def add_seat(self, code: str, seat: SeatRecord, max_players: int) -> int | None:
        """The next free seat number (1..max_players) while in the lobby, else None."""
        room = self._room(code)
        if room is None or room.record.phase != "lobby":
            return None
        for number in range(1, max_players + 1):
            if number not in room.seats:
                room.seats[number] = msgspec.structs.replace(seat, seat=number)
                room.logs[number] = PackedLog()
                return number
        return None

    async def remove_seat(self, code: str, seat: int, epoch: int) -> bool:
        """Free the seat while the room is in the lobby — see ``Store``."""
        room = self._room(code)
        held = room.seats.get(seat) if room is not None else None
        if room is None or held is None or room.record.phase != "lobby" or held.epoch != epoch:
            return False
        del room.seats[seat]
        room.logs.pop(seat, None)
        room.checkpoints.pop(seat, None)
        return True

    async def get_seats(self, code: str) -> list[SeatRecord]:
        """Every seat of the room, by seat number (empty if there is no room)."""
        room = self._room(code)
        if room is None:
            return []
        return [msgspec.structs.replace(room.seats[n]) for n in sorted(room.seats)]

    async def get_seat(self, code: str, seat: int) -> SeatRecord | None:
        """One seat, or None."""
        room = self._room(code)
        if room is None or seat not in room.seats:
            return None
        return msgspec.structs.replace(room.seats[seat])

    async def update_seat(self, code: str, seat: int, **fields: Any) -> None:
        """Set some SeatRecord attributes (not ``seat`` or ``epoch``); no-op without seat."""
        _check_fields(fields, _SEAT_FIELDS, "SeatRecord")
        room = self._room(code)
        if room is None or seat not in room.seats:
            return
        room.seats[seat] = msgspec.structs.replace(room.seats[seat], **fields)

    async def take_seat(self, code: str, seat: int) -> int:
        """Increment and return the seat's epoch. Raises ``KeyError`` if there is no seat."""
        room = self._room(code)
        if room is None or seat not in room.seats:
            raise KeyError(f"no seat {seat} in room {code!r}")
        record = room.seats[seat]
        room.seats[seat] = msgspec.structs.replace(record, epoch=record.epoch + 1)
        return record.epoch + 1

    # ------------------------------------------------------------------ move logs
    async def append_move(
        self, code: str, seat: int, epoch: int, seq: int, entry: LogEntry, *,
        event: bytes | None = None, **seat_fields: Any,
    ) -> None:
        """Append move ``seq`` fenced by ``epoch``, set ``seat_fields`` and publish
        ``event`` in one step — see ``Store.append_move``. A missing room or seat counts
        as a stale writer (``StaleEpoch``). The event joins the store's event queue at
        once (so it keeps its place among the room's events) but reaches subscribers only
        after this call returned: the caller acknowledges the move first."""
        self.append_move_now(code, seat, epoch, seq, entry, event, seat_fields)

    def appends_now(self) -> bool:
        """True when ``append_move`` is this class's own: then ``append_move_now`` is the
        same step without a coroutine, and a caller may use it instead (a subclass that
        overrides ``append_move`` — a test's failing or slow store — is not bypassed)."""
        return type(self).append_move is MemoryStore.append_move

    def append_move_now(
        self, code: str, seat: int, epoch: int, seq: int, entry: LogEntry,
        event: bytes | None, seat_fields: dict[str, Any],
    ) -> None:
        """``append_move``, synchronously (see ``appends_now``), the seat's fields given
        as a dict (a call with ``**fields`` packs them into a new dict: ~0.3 µs a move)."""
        if not seat_fields.keys() <= _SEAT_FIELDS:  # (the usual answer: no call)
            _check_fields(seat_fields, _SEAT_FIELDS, "SeatRecord")
        room = self._rooms.get(code)
        if (room is not None and room.expires_at is not None
                and time.monotonic() >= room.expires_at):
            room = self._room(code)  # expired (``_room``'s test, without its call): dropped
        if room is None or (record := room.seats.get(seat)) is None:
            raise StaleEpoch(f"no seat {seat} in room {code!r}")
        if record.epoch != epoch:
            raise StaleEpoch(f"epoch {epoch} is not the seat's current {record.epoch}")
        entries = room.logs[seat]
        if seq != entries.count + 1:
            raise SeqConflict(entries.count + 1)
        entries.append(entry.move, entry.clock_ms)
        if seat_fields:
            room.seats[seat] = msgspec.structs.replace(record, **seat_fields)
        if event is not None:
            self._events.append((code, event, None))
            if not self._delivering and not self._deliver_soon:
                # A loop callback, not a task: a room's handler is synchronous for a
                # move (``Room._event_now``), so most ticks deliver with no task at all.
                self._deliver_soon = True
                loop = self._loop
                if loop is None or not loop.is_running():  # (tests run a store per loop)
                    loop = self._loop = asyncio.get_running_loop()
                loop.call_soon(self._deliver_now)

    async def read_log(self, code: str, seat: int, after: int = 0,
                       limit: int | None = None) -> list[LogEntry]:
        """The seat's log entries after the first ``after`` ones, at most ``limit``."""
        return self._read_log(code, seat, after, limit)

    def _read_log(self, code: str, seat: int, after: int, limit: int | None) -> list[LogEntry]:
        room = self._room(code)
        entries = room.logs.get(seat) if room is not None else None
        return entries.read(after, limit) if entries is not None else []

    async def read_logs(self, code: str, seats: Sequence[int],
                        slice_entries: int) -> dict[int, LogColumns]:
        """The seats' whole logs as columns, decoded ``slice_entries`` at a time with the
        event loop free between slices — see ``Store.read_logs``. The logs and their
        lengths are taken before the first slice (a packed log only grows, and a new
        round gives the seat a new one), so the answer is the logs as at the call."""
        room = self._room(code)
        found = room.logs if room is not None else {}
        taken = [(seat, found.get(seat)) for seat in seats]
        frozen = [(seat, packed, packed.count if packed is not None else 0)
                  for seat, packed in taken]
        step = max(slice_entries, 1)
        out: dict[int, LogColumns] = {}
        decoded = 0
        for seat, packed, count in frozen:
            columns = out[seat] = LogColumns([], [])
            for start in range(0, count, step):
                if decoded:
                    await asyncio.sleep(0)  # let the loop serve others between slices
                assert packed is not None
                packed.read_columns(start, min(start + step, count), *columns)
                decoded += 1
        return out

    # ------------------------------------------------------------------ checkpoints
    async def put_checkpoint(self, code: str, seat: int, checkpoint: Checkpoint) -> None:
        """Keep the checkpoint (replacing one at the same seq) while the seat exists."""
        room = self._room(code)
        if room is None or seat not in room.seats:
            return
        kept = room.checkpoints.setdefault(seat, [])
        i = bisect.bisect_left(kept, checkpoint.seq, key=lambda c: c.seq)
        copied = msgspec.structs.replace(checkpoint, reached=list(checkpoint.reached))
        if i < len(kept) and kept[i].seq == checkpoint.seq:
            kept[i] = copied
        else:
            kept.insert(i, copied)

    async def get_checkpoint(self, code: str, seat: int, max_seq: int | None = None,
                             max_clock_ms: int | None = None) -> Checkpoint | None:
        """The latest checkpoint within both bounds — see ``Store``."""
        return self._get_checkpoint(code, seat, max_seq, max_clock_ms)

    def _get_checkpoint(self, code: str, seat: int, max_seq: int | None,
                        max_clock_ms: int | None) -> Checkpoint | None:
        room = self._room(code)
        kept = room.checkpoints.get(seat, []) if room is not None else []
        i = len(kept)
        if max_seq is not None:
            i = min(i, bisect.bisect_right(kept, max_seq, key=lambda c: c.seq))
        if max_clock_ms is not None:  # clocks grow with seq within a seat
            i = min(i, bisect.bisect_right(kept, max_clock_ms, key=lambda c: c.clock_ms))
        if i == 0:
            return None
        found = kept[i - 1]
        return msgspec.structs.replace(found, reached=list(found.reached))

    async def checkpoint_and_tail(
        self, code: str, seat: int, limit: int, max_seq: int | None = None,
        max_clock_ms: int | None = None,
    ) -> tuple[Checkpoint | None, list[LogEntry]]:
        """``get_checkpoint`` and the ``limit`` log entries after it — see ``Store``."""
        saved = self._get_checkpoint(code, seat, max_seq, max_clock_ms)
        return saved, self._read_log(code, seat, saved.seq if saved else 0, max(limit, 0))

    # ------------------------------------------------------------------ results
    async def put_results(self, code: str, results: bytes) -> bytes:
        """Keep the encoded results unless there are some; returns the stored ones."""
        room = self._room(code)
        if room is None:
            return bytes(results)
        if room.results is None:
            room.results = bytes(results)
        return room.results

    # ------------------------------------------------------------------ deadlines
    async def set_deadline(self, code: str, kind: str, at_ms: int) -> None:
        """Due at ``at_ms``, replacing an earlier deadline of the same kind."""
        self._deadlines[(code, kind)] = at_ms
        heapq.heappush(self._due, (at_ms, code, kind))

    async def clear_deadline(self, code: str, kind: str) -> None:
        """Remove the deadline (its heap entry is dropped when it comes up)."""
        self._deadlines.pop((code, kind), None)

    async def claim_deadlines(self, now_ms: int, lease_ms: int, limit: int) -> list[Deadline]:
        """Take the due deadlines, earliest first, leasing each until now + lease."""
        out: list[Deadline] = []
        while self._due and self._due[0][0] <= now_ms and len(out) < limit:
            at_ms, code, kind = heapq.heappop(self._due)
            if self._deadlines.get((code, kind)) != at_ms:
                continue  # replaced or cleared since it was pushed
            lease = now_ms + lease_ms
            await self.set_deadline(code, kind, lease)
            out.append(Deadline(code, kind, at_ms, lease))
        return out

    async def done_deadline(self, deadline: Deadline) -> None:
        """Remove the deadline unless it was set again since the claim."""
        key = (deadline.code, deadline.kind)
        if self._deadlines.get(key) == deadline.lease_ms:
            del self._deadlines[key]

    async def get_results(self, code: str) -> bytes | None:
        """The encoded results, or None."""
        room = self._room(code)
        return room.results if room else None

    # ------------------------------------------------------------------ events
    async def publish(self, code: str, event: bytes) -> None:
        """Call every subscriber of the room, in subscription order, after the events
        published before it (by ``publish`` or ``append_move``), and return once they
        have been called. A failing handler is logged and does not stop the others (as
        a remote subscriber's failure could not stop delivery elsewhere)."""
        if self._delivering:  # another caller is delivering: wait for this one's turn
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._events.append((code, event, done))
            await done
            return
        self._events.append((code, event, None))
        await self._deliver_queued()

    def _deliver_now(self) -> None:
        """Deliver the queued events in order from a loop callback (scheduled by
        ``append_move``). Synchronous handlers are called in place; at the first handler
        that returns an awaitable, the rest (that handler's wait, the event's remaining
        handlers, the rest of the queue) goes on in a task, still the one deliverer."""
        self._deliver_soon = False
        if self._delivering:  # a deliverer is running: it empties the queue
            return
        self._delivering = True
        self._after = []
        events = self._events
        try:
            while events:
                code, event, done = events.popleft()
                handlers = self._subscribers.get(code)
                if handlers:
                    called = list(handlers)  # a handler may unsubscribe while we loop
                    for i, handler in enumerate(called):
                        try:
                            result = handler(event)
                        except Exception:
                            log.exception("room %s: event handler %r failed", code, handler)
                            continue
                        if result is not None and inspect.isawaitable(result):
                            self._deliverer = asyncio.get_running_loop().create_task(
                                self._resume(result, code, event, called[i + 1:], done))
                            return  # still delivering: the task ends it
                if done is not None and not done.done():
                    done.set_result(None)
        except BaseException:
            self._delivering = False
            raise
        else:
            self._delivering = False
        finally:
            self._end_batch()

    def after_events(self, callback: Callable[[], None]) -> bool:
        """Call ``callback`` once the events being delivered now have all been delivered
        (at the end of this loop callback's batch, before any other callback runs) and
        return True; False, and nothing kept, when no batch is being delivered in place
        (the caller does its work now). What a room uses to write its rivals' frames once
        per batch of moves rather than once per move."""
        after = self._after
        if after is None:
            return False
        after.append(callback)
        return True

    def _end_batch(self) -> None:
        """Run the callbacks ``after_events`` took for the batch that just ended (each
        once; a failing one is logged and does not stop the others)."""
        after, self._after = self._after, None
        for callback in after or ():
            try:
                callback()
            except Exception:
                log.exception("a callback after delivering events failed: %r", callback)

    async def _resume(self, pending: Awaitable[Any], code: str, event: bytes,
                      rest: list[EventHandler], done: asyncio.Future[None] | None) -> None:
        """``_deliver_now``'s continuation: wait for the handler that returned
        ``pending``, call the event's other handlers, then deliver the rest of the queue."""
        try:
            try:
                await pending
            except Exception:
                log.exception("room %s: event handler failed", code)
            for handler in rest:
                await call_handler(handler, event, code)
            if done is not None and not done.done():
                done.set_result(None)
            await self._deliver_queued()
        finally:
            self._delivering = False
            self._deliverer = None

    async def _deliver_queued(self) -> None:
        """Deliver the queued events in order (one deliverer at a time)."""
        self._delivering = True
        try:
            while self._events:
                code, event, done = self._events.popleft()
                for handler in list(self._subscribers.get(code, ())):
                    await call_handler(handler, event, code)
                if done is not None and not done.done():
                    done.set_result(None)
        finally:
            self._delivering = False

    async def subscribe(self, code: str, handler: EventHandler) -> None:
        """Call ``handler(event)`` for every event published to the room from now on."""
        self._subscribers.setdefault(code, []).append(handler)

    async def unsubscribe(self, code: str, handler: EventHandler) -> None:
        """Stop calling ``handler`` (once per matching subscribe)."""
        handlers = self._subscribers.get(code)
        if handlers and handler in handlers:
            handlers.remove(handler)
            if not handlers:
                del self._subscribers[code]

    # ------------------------------------------------------------------ life cycle
    async def durability(self) -> Durability:
        """Durable as far as it goes: the memory lives exactly as long as the one node
        that uses it (a restart loses the races, and the players, together)."""
        return Durability(True, "in-process memory: one node, its races end with it")

    async def healthy(self) -> bool:
        """True until closed."""
        return not self._closed

    async def close(self) -> None:
        """Drop subscribers; the data stays readable (nothing to release)."""
        self._closed = True
        self._subscribers.clear()
