"""A room's presence on this node: its local members, its event fan-out and its timers.

All shared state lives in the store; a ``Room`` here is a cache plus the connections this
node holds in the room. It subscribes to the room's events while it has members (or
timers that must fire), and turns each event into the frames each member may see
(``views``). The race operations themselves (moves, start, finish) are in ``race``.

Hidden information (``views``): while any racing seat has a face-down card, spectators
get no board and no diff; the moment none has (or the race is over) each spectator gets
every board as ``Snapshot`` messages, then diffs as usual. The room learns face-down
counts and statuses from its events (``Started``, ``Moved.down``, ``SeatStatus``), or
from the store when it opens mid-race.

Ordering: a member is attached *pending* before its ``Joined`` is built from the store;
events arriving meanwhile are buffered, then replayed through the same per-member filter,
which drops anything the ``Joined`` already covered (per-seat sequence numbers).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec

import engine
from protocol import Code, encode
from protocol.messages import (
    Board,
    Countdown,
    Diff,
    Joined,
    Progress,
    RoomPhase,
    RoomSettings,
    Seats,
    SeatStatus,
    Snapshot,
    Started,
)
from protocol.ranking import BOT_LIKE_MOVES

from . import events as ev
from . import views
from .config import ServerConfig
from .core.standing import opening
from .metrics import Metrics
from .store.base import Store, StoreUnavailable
from .store.records import RoomRecord, SeatRecord
from .timers import Timed
from .verdicts import VerdictPool

log = logging.getLogger(__name__)


class Peer(Protocol):
    """One client connection as a room sees it (``connection.Connection`` is one): a
    bounded outbox and its room binding. A protocol, so this module needs no import of
    the connection module (which imports this one)."""

    id: int
    name: str
    bot: bool
    address: str  # the client's address (server/addresses.py)
    room: Room | None
    member: Member | None

    def send(self, message: Any) -> None:
        """Queue a server message."""

    def send_frame(self, frame: bytes) -> None:
        """Queue an encoded frame."""

    def close_with(self, code: Code, message: str) -> None:
        """Send what is queued, then ``Closing`` with ``code``, then close."""

    def count_room(self) -> None:
        """Count a create/join/resume against the connection's allowance."""


class Host(Protocol):
    """The node as its rooms see it (``app.Server`` is one)."""

    config: ServerConfig
    store: Store
    metrics: Metrics
    solver_slot: asyncio.Semaphore
    verdicts: VerdictPool

    async def release_room(self, room: Room) -> None:
        """Forget ``room`` on this node if it has nothing more to do here."""

    def wake_at(self, at_ms: int) -> None:
        """A deadline of one of its rooms falls due at ``at_ms``: sweep then (any node
        sweeps every deadline anyway; this makes the arming node fire on time)."""
OUTBOX_BACKOFF_MIN_S = 0.05  # a refused publish is retried after this, doubling...
OUTBOX_BACKOFF_MAX_S = 1.0  # ...up to this, until the store answers
PHASE_ORDER = {"lobby": 0, "countdown": 1, "running": 2, "finished": 3}


@dataclass(eq=False)
class Member:
    """One connection in one room. ``seat`` is 0 for a spectator. For a player, ``game``
    is the seat's engine game after ``seq`` moves (only this node's holder writes)."""

    conn: Peer
    seat: int
    epoch: int = 0
    created: bool = False  # this connection created the room (it may start it)
    game: engine.Game | None = None
    seq: int = 0
    status: str = "lobby"
    progress_ms: int | None = None
    reached: dict[int, int] = field(default_factory=dict)  # progress -> first clock_ms
    pending: list[ev.Event] | None = field(default_factory=list)
    started_sent: bool = False
    results_sent: bool = False
    diff_seen: dict[int, int] = field(default_factory=dict)  # seat -> last Diff seq sent
    progress_seen: dict[int, int] = field(default_factory=dict)  # seat -> last Progress moves
    held: dict[int, dict[int, Diff]] = field(default_factory=dict)  # out-of-order diffs
    filling: set[int] = field(default_factory=set)  # seats whose diff gap is being filled
    boards_hidden: bool = False  # a spectator told ``hidden``: no board or diff until shown
    # clocks of the seat's last deliberate moves (bot-like play; bounded by the rule's N)
    recent_clocks: deque[int] = field(default_factory=lambda: deque(maxlen=BOT_LIKE_MOVES))
    bot_like: bool = False  # this seat's play was already marked bot-like

    @property
    def is_player(self) -> bool:
        """True for a seat holder, False for a spectator."""
        return self.seat > 0


class Room(Timed):
    """A room as seen by this node (see the module docstring)."""

    def __init__(self, server: Host, record: RoomRecord) -> None:
        self.server = server
        self.store = server.store
        self.config = server.config
        self.code = record.code
        self.record = record
        self.settings = msgspec.convert(record.settings, RoomSettings)
        self.members: dict[Peer, Member] = {}
        Timed.__init__(self, self.config.clock, f"room {self.code}")
        self._spectator_timers: set[asyncio.TimerHandle] = set()
        self._subscribed = False
        self._outbox: deque[bytes] = deque()
        self._publisher: asyncio.Task[None] | None = None
        self.closed = False
        # Hidden information (module docstring): seats' face-down counts, the seats racing
        # at the start (None: not known on this node yet) and those done since.
        self._down: dict[int, int] = {}
        self._down_seq: dict[int, int] = {}
        self._racing: set[int] | None = None
        self._done: set[int] = set()
        self._ended = False  # the Finished event was applied

    # ------------------------------------------------------------------ life cycle
    @property
    def phase(self) -> RoomPhase:
        """The room's phase as last seen by this node."""
        return self.record.phase

    @property
    def delay_ms(self) -> int:
        """How far behind the live race spectators are kept."""
        return self.settings.spectator_delay_s * 1000

    @property
    def hidden(self) -> bool:
        """The room has hidden information now: started and not seen to finish, and some
        racing seat still has a face-down card (or this node does not know yet: assume it
        does). Judged from the events this node applied, not from the cached phase alone:
        the shell can mark the room finished before the events that end it (the last
        resignation, the results) reach its members, and they must come first."""
        if self.phase in ("lobby", "countdown") or self._ended:
            return False
        if self._racing is None:
            return True
        return views.room_hidden(self._down, self._racing - self._done)

    def _note_down(self, seat: int, seq: int, down: int) -> None:
        if seq >= self._down_seq.get(seat, -1):
            self._down_seq[seat], self._down[seat] = seq, down

    async def _learn_racing(self) -> None:
        """Read from the store which seats race and their face-down counts (a node that
        opened the room after its start: it saw no ``Started``)."""
        racing: set[int] = set()
        for seat in await self.store.get_seats(self.code):
            if seat.status != "playing":
                continue
            racing.add(seat.seat)
            if seat.seat not in self._down:
                entries = await self.store.read_log(self.code, seat.seat)
                rebuilt = views.replay(self.record, self.settings, seat.seat, entries)
                self._note_down(seat.seat, rebuilt.seq, views.face_down(rebuilt.game))
        if self._racing is None:
            self._racing = racing

    def clock_ms(self) -> int:
        """The race clock (0 before the start)."""
        start = self.record.start_ms
        return max(0, self.now_ms() - start) if start is not None else 0

    async def open(self) -> None:
        """Subscribe to the room's events and read the room."""
        await self.store.subscribe(self.code, self._on_event)
        self._subscribed = True
        await self.refresh()

    async def refresh(self) -> None:
        """Re-read the room record. The phase never goes back: an event applied while the
        read was in flight may be newer."""
        record = await self.store.get_room(self.code)
        if record is not None and PHASE_ORDER[record.phase] >= PHASE_ORDER[self.phase]:
            self.record = record

    async def close(self) -> None:
        """Send what is in the outbox, then unsubscribe and cancel every timer (the room
        has no business on this node)."""
        try:
            await asyncio.wait_for(self.flush(), 5)
        except Exception:
            log.warning("room %s: outbox not flushed before close", self.code)
        self.closed = True
        self.cancel_all()
        for handle in self._spectator_timers:
            handle.cancel()
        self._spectator_timers.clear()
        if self._subscribed:
            self._subscribed = False
            try:
                await self.store.unsubscribe(self.code, self._on_event)
            except Exception:  # the store may be gone at shutdown; nothing to undo
                log.debug("room %s: unsubscribe failed", self.code, exc_info=True)

    @property
    def idle(self) -> bool:
        """No members and nothing this node must still do for the room."""
        return not self.members and not self._tasks

    # ------------------------------------------------------------------ members
    def attach(self, member: Member) -> None:
        """Add a member (pending: events are buffered until ``ready``)."""
        self.members[member.conn] = member

    def ready(self, member: Member) -> None:
        """The member's ``Joined`` is queued: deliver the events buffered meanwhile (and
        the boards, if they were withheld and the room stopped hiding meanwhile)."""
        self._release(member)
        if member.boards_hidden and not self.hidden:
            self._start_showing(member)

    def _release(self, member: Member) -> None:
        pending, member.pending = member.pending or [], None
        for event in pending:
            self._deliver(member, event)

    def _start_showing(self, member: Member) -> None:
        """Send a spectator told ``hidden`` every board it may now see, as ``Snapshot``
        messages; events from now on are buffered as during a join, so they follow the
        snapshots (no diff is lost or sent twice: ``boards_for`` records the sequences
        the snapshots cover)."""
        member.pending = []
        self.spawn(self._show_boards(member))

    async def _show_boards(self, member: Member) -> None:
        try:
            boards = await self.boards_for(member)
        except StoreUnavailable:
            log.warning("room %s: boards not shown (store unavailable)", self.code)
            boards = None
        if self.members.get(member.conn) is not member:
            return
        if boards is not None:
            member.boards_hidden = False
            for board in boards:
                member.conn.send(Snapshot(board=board))
        self._release(member)

    def detach(self, conn: Peer) -> Member | None:
        """Remove a connection's membership (the caller updates the seat record)."""
        return self.members.pop(conn, None)

    def holder(self, seat: int) -> Member | None:
        """The local member holding ``seat``, if any."""
        for member in self.members.values():
            if member.seat == seat:
                return member
        return None

    # ------------------------------------------------------------------ events
    async def publish(self, event: ev.Event) -> None:
        """Publish ``event`` to every node of the room (this one included), in order.

        Events go through a per-room outbox drained by one task, so the caller (a move
        being acknowledged) does not wait for the publish round trip, while events from
        this node still reach every node in the order they were produced. A publish the
        store refuses is retried, in order, until it goes out (the outbox holds at most
        ``room_outbox`` events; ``flush`` waits for it). Any other failure is logged
        and the event dropped: the state is in the store, and the next event or a
        resume brings receivers up to date."""
        if len(self._outbox) >= self.config.room_outbox:
            self._outbox.popleft()  # the store has been away for long: oldest goes first
            log.warning("room %s: outbox full; oldest event dropped", self.code)
        self._outbox.append(ev.encode_event(event))
        if self._publisher is None or self._publisher.done():
            self._publisher = asyncio.get_running_loop().create_task(self._drain_outbox())

    async def _drain_outbox(self) -> None:
        backoff = OUTBOX_BACKOFF_MIN_S
        while self._outbox and not self.closed:
            try:
                await self.store.publish(self.code, self._outbox[0])
            except StoreUnavailable as exc:
                # Kept and sent again, in order, when the store is back: a dropped
                # Started or Finished would leave players waiting for ever. Receivers
                # drop what they already have (a refused publish may have gone out).
                log.warning("room %s: publish failed (%s); retrying", self.code, exc)
                await asyncio.sleep(backoff)  # retry backoff, not synchronisation
                backoff = min(backoff * 2, OUTBOX_BACKOFF_MAX_S)
                continue
            except Exception:
                log.exception("room %s: publish failed; event dropped", self.code)
            self._outbox.popleft()
            backoff = OUTBOX_BACKOFF_MIN_S

    async def flush(self) -> None:
        """Wait until every event published so far has been handed to the store."""
        while self._publisher is not None and not self._publisher.done():
            await asyncio.shield(self._publisher)

    async def _on_event(self, data: bytes) -> None:
        try:
            event = ev.decode_event(data)
        except (msgspec.DecodeError, msgspec.ValidationError):
            log.error("room %s: undecodable event dropped", self.code)
            return
        if self.closed:
            return
        self._apply(event)
        if isinstance(event, ev.NewRound):
            self._begin_round(event.round)
            return
        for member in list(self.members.values()):
            try:
                self._deliver(member, event)
            except Exception:
                log.exception("room %s: delivering %s failed", self.code, type(event).__name__)
        if not self.hidden:
            # After the event itself (the resignation or results that ended the hiding
            # come first). Level-triggered: the phase can also change under this cache
            # (the shell's own reads), and a reveal the store refused is retried on the
            # next event.
            for member in list(self.members.values()):
                if member.boards_hidden and member.pending is None:
                    self._start_showing(member)
        if isinstance(event, ev.Finished) and self.idle:
            self.spawn(self.server.release_room(self))

    def _begin_round(self, number: int) -> None:
        """A rematch: hold every member's events (as for a member joining) until its new
        ``Joined`` is queued, then read the new round from the store and send it."""
        # The new round's deal is hidden or not on its own: forget what this one showed
        # (before any event of the new round is applied).
        self._down, self._down_seq, self._racing, self._done = {}, {}, None, set()
        self._ended = False
        for member in self.members.values():
            if member.pending is None:
                member.pending = []
        self.spawn(self._send_round(number))

    async def _send_round(self, number: int) -> None:
        record = await self.store.get_room(self.code)
        if record is None or record.round < number:
            return
        self.record = record
        seats = await self.store.get_seats(self.code)
        kept = {s.seat: s for s in seats}
        for member in list(self.members.values()):
            if member.is_player and member.seat not in kept:
                # it did not ask: its seat is gone; it keeps what it has (the results)
                self.members.pop(member.conn, None)
                member.conn.room = member.conn.member = None
                continue
            if member.is_player:
                member.epoch = kept[member.seat].epoch
            member.game, member.seq, member.status = None, 0, "lobby"
            member.progress_ms, member.reached = None, {}
            member.started_sent = member.results_sent = False
            member.diff_seen, member.progress_seen, member.held = {}, {}, {}
            member.filling = set()
            member.boards_hidden, member.bot_like = False, False
            member.recent_clocks.clear()
            member.conn.send(self.joined_message(member, seats, []))
            self.ready(member)
        if self.idle:
            await self.server.release_room(self)

    def joined_message(self, member: Member, seats: list[SeatRecord], boards: list[Board],
                       token: str | None = None) -> Joined:
        """The ``Joined`` that puts ``member`` in this room as it is now."""
        record, phase = self.record, self.phase
        return Joined(
            code=self.code, settings=self.settings, phase=phase, seat=member.seat,
            commitment=record.commitment, seats=[views.seat_info(s) for s in seats],
            token=token, creator=record.creator, start_ms=record.start_ms,
            clock_ms=self.clock_ms() if phase == "running" else None, boards=boards,
            round=record.round, hidden=member.boards_hidden,
        )

    def _apply(self, event: ev.Event) -> None:
        """Update this node's cache of the room from an event."""
        record = self.record
        if isinstance(event, ev.Countdown):
            if record.phase == "lobby":
                self.record = msgspec.structs.replace(
                    record, phase="countdown", start_ms=event.start_ms
                )
        elif isinstance(event, ev.Started):
            self.record = msgspec.structs.replace(record, phase="running", start_ms=event.start_ms)
            fresh = views.new_board(self.record, self.settings)
            racing = opening(fresh).status == "playing"
            self._racing = set(event.seats) if racing else set()
            for seat in event.seats:
                self._note_down(seat, 0, views.face_down(fresh))
        elif isinstance(event, ev.SeatStatus):
            if event.status != "playing":
                self._done.add(event.seat)
        elif isinstance(event, ev.Finished):
            self.record = msgspec.structs.replace(record, phase="finished")
            self._ended = True
        if isinstance(event, ev.Moved):
            self._note_down(event.seat, event.seq, event.down)
            if event.status != "playing":
                self._done.add(event.seat)
        if (isinstance(event, ev.Moved) and self.delay_ms and not self.closed
                and any(not m.is_player for m in self.members.values())):
            # One timer per move for all spectators; each member filters duplicates.
            # None without a spectator here: one who joins later gets the moves still
            # due from the log (boards_for), so the buffer lives only while needed.
            due = (self.record.start_ms or 0) + event.clock_ms + self.delay_ms
            diff = Diff(
                seat=event.seat, seq=event.seq, move=event.move, hash=event.hash,
                clock_ms=event.clock_ms, revealed=event.revealed,
            )
            self.schedule_diff(None, diff, due)

    def _deliver(self, member: Member, event: ev.Event) -> None:
        """Send ``member`` what it may see of ``event``."""
        if member.pending is not None:
            member.pending.append(event)
            return
        conn = member.conn
        if isinstance(event, ev.Broadcast):
            conn.send_frame(event.frame)
        elif isinstance(event, ev.Countdown):
            conn.send(Countdown(start_ms=event.start_ms, server_ms=self.now_ms()))
        elif isinstance(event, ev.Started):
            self.send_started(member, event.start_ms, event.seats)
        elif isinstance(event, ev.Moved):
            if member.seat != event.seat:
                self._send_progress(member, event.seat, event.progress, event.seq,
                                    event.status, event.clock_ms)
            if not member.is_player and not self.delay_ms:
                self.deliver_diff(member, Diff(
                    seat=event.seat, seq=event.seq, move=event.move, hash=event.hash,
                    clock_ms=event.clock_ms, revealed=event.revealed,
                ))
        elif isinstance(event, ev.SeatStatus):
            if member.seat == event.seat:
                member.status = event.status
            conn.send(Progress(seat=event.seat, progress=event.progress, moves=event.moves,
                               status=event.status, clock_ms=event.clock_ms))
        elif isinstance(event, ev.TakenOver):
            if member.seat == event.seat and member.epoch < event.epoch:
                self.server.metrics.takeovers.inc()
                conn.close_with(Code.TAKEN_OVER, "another connection resumed this seat")
        elif isinstance(event, ev.Finished) and not member.results_sent:
            member.results_sent = True
            member.status = "finished"
            conn.send_frame(event.frame)

    def _send_progress(
        self, member: Member, seat: int, progress: int, moves: int, status: SeatStatus,
        clock_ms: int,
    ) -> None:
        if moves <= member.progress_seen.get(seat, -1):
            return
        member.progress_seen[seat] = moves
        member.conn.send(Progress(seat=seat, progress=progress, moves=moves,
                                  status=status, clock_ms=clock_ms))

    # ------------------------------------------------------------------ spectators' diffs
    def deliver_diff(self, member: Member, diff: Diff) -> None:
        """Send ``diff`` to a spectator in sequence order: duplicates are dropped, a diff
        that arrives before its predecessor is held until the gap is filled. Nothing while
        the member's boards are withheld (hidden information)."""
        if member.boards_hidden:
            return
        seen = member.diff_seen.get(diff.seat, 0)
        if diff.seq <= seen:
            return
        held = member.held.setdefault(diff.seat, {})
        if diff.seq > seen + 1:
            held[diff.seq] = diff
            if diff.seat not in member.filling:
                member.filling.add(diff.seat)
                self.spawn(self._fill_gap(member, diff.seat, diff.seq))
            return
        member.conn.send(diff)
        seen = diff.seq
        while seen + 1 in held:
            seen += 1
            member.conn.send(held.pop(seen))
        member.diff_seen[diff.seat] = seen

    async def _fill_gap(self, member: Member, seat: int, upto: int) -> None:
        """Multi-node: a move's event can be lost for good (its node crashed between
        storing the move and publishing it, or the store was briefly unreachable), so a
        gap in a spectator's diffs is filled from the seat's log (which has every stored
        move), up to the diff that revealed it (never past what is due: the delay)."""
        try:
            entries = await self.store.read_log(self.code, seat)
        except StoreUnavailable:
            return  # the next out-of-order diff tries again
        finally:
            member.filling.discard(seat)
        seen = member.diff_seen.get(seat, 0)
        rebuilt = views.replay(self.record, self.settings, seat, entries[:upto], diffs_after=seen)
        for diff in rebuilt.diffs:
            if self.members.get(member.conn) is member:
                self.deliver_diff(member, diff)

    def schedule_diff(self, member: Member | None, diff: Diff, due_ms: int) -> None:
        """Deliver ``diff`` at wall time ``due_ms`` (never earlier) to ``member``, or to
        every spectator present then when ``member`` is None."""
        loop = asyncio.get_running_loop()

        def fire() -> None:
            self._spectator_timers.discard(handle_box[0])
            if self.closed:
                return
            remaining = due_ms - self.now_ms()
            if remaining > 0:
                handle_box[0] = loop.call_later(remaining / 1000, fire)
                self._spectator_timers.add(handle_box[0])
                return
            targets = [member] if member is not None else [
                m for m in self.members.values() if not m.is_player
            ]
            for target in targets:
                if target.pending is None and self.members.get(target.conn) is target:
                    self.deliver_diff(target, diff)

        handle_box = [loop.call_later(max(0, due_ms - self.now_ms()) / 1000, fire)]
        self._spectator_timers.add(handle_box[0])

    # ------------------------------------------------------------------ boards
    async def boards_for(self, member: Member) -> list[Board]:
        """The boards ``member`` may see now: its own (player, racing), none while the
        room hides information (spectator, racing: ``member.boards_hidden`` is set), every
        board as of ``now - delay`` (spectator, racing) or every final board (finished).
        Records the sequences covered so later diffs are not sent twice; schedules the
        delayed diffs a spectator still has to receive."""
        phase = self.phase
        if phase in ("lobby", "countdown"):
            return []
        if member.is_player and phase == "running":
            assert member.game is not None
            member.diff_seen[member.seat] = member.seq
            return [views.board(member.seat, member.seq, member.game)]
        if phase == "running" and not member.is_player:
            if self._racing is None:
                await self._learn_racing()
            if self.hidden:
                member.boards_hidden = True
                return []
        seats = await self.store.get_seats(self.code)
        cutoff = None
        if phase == "running" and self.delay_ms:
            cutoff = self.clock_ms() - self.delay_ms
        out = []
        for seat in seats:
            entries = await self.store.read_log(self.code, seat.seat)
            rebuilt = views.replay(self.record, self.settings, seat.seat, entries,
                                   until_clock_ms=cutoff)
            out.append(views.board(seat.seat, rebuilt.seq, rebuilt.game))
            member.diff_seen[seat.seat] = rebuilt.seq
            if cutoff is not None and rebuilt.seq < len(entries):
                later = views.replay(self.record, self.settings, seat.seat, entries,
                                     diffs_after=rebuilt.seq)
                start = self.record.start_ms or 0
                for diff in later.diffs:
                    self.schedule_diff(member, diff, start + diff.clock_ms + self.delay_ms)
        return out

    def send_started(self, member: Member, start_ms: int, seats: list[int]) -> None:
        """Send ``Started`` with the boards ``member`` may see (players: their own fresh
        board, set up as the seat's game)."""
        if member.started_sent:
            return
        member.started_sent = True
        if member.is_player:
            member.game = views.new_board(self.record, self.settings)
            member.seq, member.status = 0, opening(member.game).status
            boards = [views.board(member.seat, 0, member.game)]
        elif self.hidden:
            member.boards_hidden = True
            boards = []
        else:
            fresh = views.new_board(self.record, self.settings)
            boards = [views.board(seat, 0, fresh) for seat in seats]
        member.conn.send(Started(start_ms=start_ms, boards=boards, hidden=member.boards_hidden))

    async def publish_seats(self) -> None:
        """Tell every node the seat list changed (read from the store, so it is current)."""
        seats = await self.store.get_seats(self.code)
        frame = encode(Seats(seats=[views.seat_info(s) for s in seats]))
        await self.publish(ev.Broadcast(frame))
