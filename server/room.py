"""A room's presence on this node: its local members, its event fan-out and its timers.

All shared state lives in the store; a ``Room`` here is a cache plus the connections this
node holds in the room. It subscribes to the room's events while it has members (or
timers that must fire), and turns each event into the frames each member may see
(``views``). The race operations themselves (moves, start, finish) are in ``race``.

Hidden information (``room_boards``): while any racing seat has a face-down card,
spectators get no board and no diff; the moment none has (or the race is over) each
spectator gets every board as ``Snapshot`` messages, then diffs as usual. The room
learns face-down counts and statuses from its events (``Started``, ``Moved.down``,
``SeatStatus``), or from the store when it opens mid-race.

Ordering: a member is attached *pending* before its ``Joined`` is built from the store;
events arriving meanwhile are buffered (at most ``member_pending_max``), then replayed
through the same per-member filter, which drops anything the ``Joined`` already covered
(per-seat sequence numbers).

Events this node publishes go through the room's outbox (``room_outbox``), so the caller
never waits for the store.

Boards are rebuilt from a checkpoint and the log's tail (``snapshots``), never from the
whole log; the seat's holder stores the checkpoints (``checkpoint``, after each ack).
Spectators of a delayed room share one buffer of diffs waiting for their time
(``delay_buffer_max``, kept only while a spectator is here) and one timer; each
spectator's diffs go through its sequence filter, gaps filled from the log
(``spectator_diffs``). Spectators
whose hello set ``ds`` get the moves as one ``Diffs`` frame per tick of the room, encoded
and framed once for all those in step and written in slices between the players' reads
(``spectator_ticks``); players get each move at once.
docs/SERVER.md, "Snapshots" and
"Buffers".
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable, Coroutine
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
)
from protocol.ranking import BOT_LIKE_MOVES

from . import events as ev
from . import snapshots, views
from .config import ServerConfig
from .core.standing import opening
from .metrics import Metrics
from .room_boards import HiddenCards, RoomBoards
from .room_outbox import RoomOutbox
from .spectator_diffs import SpectatorDelay, SpectatorDiffs
from .spectator_ticks import SpectatorTicks
from .standings import Standings
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
    batched: bool  # hello.ds: as a spectator it takes Diffs frames (one per tick)
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
    # events (and due diffs) buffered while its Joined or boards are built; None: live
    pending: list[ev.Event | Diff] | None = field(default_factory=list)
    overflowed: bool = False  # pending passed its bound: the member is being closed
    started_sent: bool = False
    results_sent: bool = False
    diff_seen: dict[int, int] = field(default_factory=dict)  # seat -> last Diff seq sent
    progress_seen: dict[int, int] = field(default_factory=dict)  # seat -> last Progress moves
    held: dict[int, dict[int, Diff]] = field(default_factory=dict)  # out-of-order diffs
    filling: set[int] = field(default_factory=set)  # seats whose diff gap is being filled
    fill_to: dict[int, int] = field(default_factory=dict)  # seat -> fill the gap up to
    boards_hidden: bool = False  # a spectator told ``hidden``: no board or diff until shown
    # clocks of the seat's last deliberate moves (bot-like play; bounded by the rule's N)
    recent_clocks: deque[int] = field(default_factory=lambda: deque(maxlen=BOT_LIKE_MOVES))
    bot_like: bool = False  # this seat's play was already marked bot-like
    batched: bool = False  # a spectator taking Diffs frames (its hello said so)
    # in its room's tick cohort: diff_seen and progress_seen are the cohort's shared dicts,
    # taken out (``Room.leave_cohort``) before anything changes them (spectator_ticks)
    cohort: bool = False

    def __post_init__(self) -> None:
        self.batched = bool(getattr(self.conn, "batched", False))

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
        # The last move's Diff and the last Progress frame: a move goes to every member
        # of the room in one loop, so one entry each builds and encodes it once for all
        # of them.
        self._moved_diff: tuple[ev.Moved, Diff] | None = None
        self._progress_frame: tuple[tuple[int, int, int, str, int], bytes] | None = None
        # Members by how a move reaches them (players, spectators taking a P and a D per
        # move, spectators taking Diffs); None: to be sorted again (membership changed).
        self._groups: tuple[list[Member], list[Member], list[Member]] | None = None
        # The spectators' tick (server/spectator_ticks.py): its moves, timer and writes.
        self._ticks: SpectatorTicks[Member] = SpectatorTicks(self, self.config,
                                                             server.metrics)
        # A member out of the tick's cohort, with a seen-state of its own (a no-op for one
        # not in it): before anything changes what a spectator has seen or may see.
        self.leave_cohort = self._ticks.leave
        # The spectators' diffs (server/spectator_diffs.py): each one's sequence filter
        # (``deliver_diff`` is its bound method: no call more per diff) and, in a delayed
        # room, the diffs waiting for their time.
        self._diffs: SpectatorDiffs[Member] = SpectatorDiffs(self, self.config)
        self.deliver_diff = self._diffs.deliver_diff
        self._delay: SpectatorDelay[Member] = SpectatorDelay(self, self.config, self._diffs)
        # Hidden information (server/room_boards.py): what this node knows of the seats'
        # face-down cards, and the boards each member may see.
        self.cards = HiddenCards()
        self._boards: RoomBoards[Member] = RoomBoards(self, self._delay)
        # The store's end-of-batch hook (``Store``'s optional ``after_events``), or None;
        # True while a write of the players' frames is owed at the end of a batch.
        self._after_events: Callable[[Callable[[], None]], bool] | None = getattr(
            self.store, "after_events", None)
        self._players_owed = False
        self._subscribed = False
        self.closed = False
        # What this node publishes to the room (server/room_outbox.py); ``encode_own`` is
        # its bound method (the move path calls it: no call more per move).
        self._outbox = RoomOutbox(self.store, self.code, self.config.room_outbox,
                                  lambda: self.closed)
        self.encode_own = self._outbox.encode_own
        self.standings = Standings(self.store, self.code, self.settings.rank_by)  # live ranking

    # ------------------------------------------------------------------ life cycle
    @property
    def phase(self) -> RoomPhase:
        """The room's phase as last seen by this node."""
        return self.record.phase

    @property
    def delay_ms(self) -> int:
        """How far behind the live race spectators are kept."""
        return self.settings.spectator_delay_s * 1000

    def clock_ms(self) -> int:
        """The race clock (0 before the start)."""
        start = self.record.start_ms
        return max(0, self.now_ms() - start) if start is not None else 0

    async def open(self) -> None:
        """Subscribe to the room's events and read the room."""
        await self.store.subscribe(self.code, self._event_now)
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
        self._ticks.flush()
        self.closed = True
        self.cancel_all()
        self._delay.drop()
        if self._subscribed:
            self._subscribed = False
            try:
                await self.store.unsubscribe(self.code, self._event_now)
            except Exception:  # the store may be gone at shutdown; nothing to undo
                log.debug("room %s: unsubscribe failed", self.code, exc_info=True)

    @property
    def idle(self) -> bool:
        """No members and nothing this node must still do for the room."""
        return not self.members and not self._tasks

    # ------------------------------------------------------------------ members
    def attach(self, member: Member) -> None:
        """Add a member (pending: events are buffered until ``ready``)."""
        old = self.members.get(member.conn)
        if old is not None:
            self.leave_cohort(old)
        self.members[member.conn] = member
        self._groups = None
        self._boards.reveal_scan = True

    def ready(self, member: Member) -> None:
        """The member's ``Joined`` is queued: deliver the events buffered meanwhile (and
        the boards, if they were withheld and the room stopped hiding meanwhile)."""
        boards = self._boards
        boards.reveal_scan = True
        self._release(member)
        if member.boards_hidden and not boards.hidden:
            boards.start_showing(member)

    def _release(self, member: Member) -> None:
        pending, member.pending = member.pending or [], None
        if member.overflowed:
            return  # being closed: it gets nothing more
        for event in pending:
            if isinstance(event, Diff):
                self.deliver_diff(member, event)
            else:
                self._deliver(member, event)

    def _hold_pending(self, member: Member, item: ev.Event | Diff) -> None:
        """Buffer ``item`` for a member whose ``Joined`` (or boards) is being built. At
        ``member_pending_max`` the member is closed (``slow_consumer``): a client that
        joins again or resumes gets a fresh snapshot; dropping an event instead would
        leave it waiting for a diff that never comes."""
        pending = member.pending
        assert pending is not None
        if member.overflowed:
            return
        if len(pending) >= self.config.member_pending_max:
            member.overflowed = True
            pending.clear()
            log.warning("room %s: %s's join buffer overflowed; closing it", self.code,
                        member.conn.name)
            member.conn.close_with(Code.SLOW_CONSUMER,
                                   "the room moved on while you were joining: join again")
            return
        pending.append(item)

    def detach(self, conn: Peer) -> Member | None:
        """Remove a connection's membership (the caller updates the seat record). The
        last spectator to go takes the delay buffer with it (nobody needs it)."""
        member = self.members.pop(conn, None)
        self._groups = None
        if member is not None:
            self.leave_cohort(member)
        if member is not None and not member.is_player and not any(
                not m.is_player for m in self.members.values()):
            self._delay.drop()
        return member

    def holder(self, seat: int) -> Member | None:
        """The local member holding ``seat``, if any."""
        for member in self.members.values():
            if member.seat == seat:
                return member
        return None

    # ------------------------------------------------------------------ events
    async def publish(self, event: ev.Event) -> None:
        """Publish ``event`` to every node of the room (this one included), in order,
        without waiting for the store (``RoomOutbox``: retried in order while the store
        refuses; at most ``room_outbox`` events queued; ``flush`` waits for them). Any
        other failure is logged and the event dropped: the state is in the store, and
        the next event or a resume brings receivers up to date."""
        self._outbox.publish(event)

    def checkpoint(self, seat: int, seq: int, clock_ms: int) -> None:
        """Every ``checkpoint_every`` moves, the seat's holder (this node: ``race.play``
        has just stored move ``seq`` and advanced its game, after the ack) stores the
        board, so rebuilds replay the log from there (``snapshots``). Off the ack path,
        best effort: a missing checkpoint only makes rebuilds start from an earlier one."""
        every = self.config.checkpoint_every
        if every <= 0 or seq % every:
            return
        member = self.holder(seat)
        if member is None or member.game is None or member.seq != seq:
            return
        saved = views.checkpoint(self.record, seq, clock_ms, member.game, member.reached)
        self.spawn(self._put_checkpoint(seat, saved))

    async def _put_checkpoint(self, seat: int, saved: Any) -> None:
        try:
            await self.store.put_checkpoint(self.code, seat, saved)
        except StoreUnavailable as exc:
            log.info("room %s: checkpoint %s of seat %s not stored (%s)", self.code,
                     saved.seq, seat, exc)

    async def rebuild_seat(self, seat: int, **bounds: Any) -> views.Replay:
        """Seat ``seat``'s board from its checkpoint and log: ``snapshots.rebuild`` with
        this room's record and slice (``bounds``: its keyword arguments)."""
        return await snapshots.rebuild(self.store, self.record, self.settings, seat,
                                       slice_moves=self.config.rebuild_slice, **bounds)

    async def flush(self) -> None:
        """Wait until every event published so far has been handed to the store."""
        await self._outbox.flush()

    async def _on_event(self, data: bytes) -> None:
        """Handle one of the room's events to the end (``_event_now``, and what it left
        to wait for)."""
        pending = self._event_now(data)
        if pending is not None:
            await pending

    def _event_now(self, data: bytes) -> Coroutine[Any, Any, None] | None:
        """The room's event handler (subscribed to the store): apply the event and send
        each member what it may see of it. Synchronous, unless the live ranking must
        read the seats from the store first: then the rest is returned as a coroutine,
        which the store waits for before the room's next event (its order kept). A move
        costs no coroutine, and the memory store no task, per event."""
        event: ev.Event | None = self._outbox.own_event(data)  # this node's: not decoded
        if event is None:
            try:
                event = ev.decode_event(data)
            except (msgspec.DecodeError, msgspec.ValidationError):
                log.error("room %s: undecodable event dropped", self.code)
                return None
        if self.closed:
            return None
        if isinstance(event, ev.Moved):  # the common event: its own path, fewer calls
            self._apply_moved(event)
            ranking = self.standings.moved(event)
            if ranking is False:
                return self._event_after_read(event)
            self._send_moved(event, ranking)
            return None
        self._apply(event)
        standings = self.standings
        if standings.needs_read(event):
            return self._event_after_read(event)
        self._send_event(event, standings.after_now(event))
        return None

    async def _event_after_read(self, event: ev.Event) -> None:
        """``_event_now``'s rest once the ranking has read the seats."""
        self._send_event(event, await self.standings.after(event))

    def _send_event(self, event: ev.Event, ranking: ev.Broadcast | None) -> None:
        """Send the members ``event`` (applied) and ``ranking`` (after a ranked move:
        every node ranks), and what follows from them (reveals, the room's release)."""
        if isinstance(event, ev.Moved):
            self._send_moved(event, ranking)
            return
        if not isinstance(event, ev.Broadcast):
            # The tick's moves go before any other event (a status, the results, a new
            # round); a broadcast (ranking, seats) carries its own state and may overtake.
            self._ticks.flush()
            if isinstance(event, ev.NewRound):
                self._begin_round(event.round)
                return
        for member in list(self.members.values()):
            try:
                self._deliver(member, event)
            except Exception:
                log.exception("room %s: delivering %s failed", self.code,
                              type(event).__name__)
        if ranking is not None:  # a broadcast: it carries its own state, may overtake a tick
            for member in list(self.members.values()):
                self._deliver(member, ranking)
        boards = self._boards
        if boards.reveal_scan and not boards.hidden:  # the flag first: no scan per move
            boards.scan()
        if isinstance(event, ev.Finished) and self.idle:
            self.spawn(self.server.release_room(self))

    def _send_moved(self, event: ev.Moved, ranking: ev.Broadcast | None) -> None:
        """``_send_event`` for a move (the common event: ``_deliver``'s part for a player
        done in place, a call less per player)."""
        # Players and spectators of older clients now; spectators taking Diffs at the
        # tick (``SpectatorTicks``): their writes never delay this move's rivals.
        players, legacy, batched = self._grouped()
        seat = event.seat
        for member in players:
            try:
                if member.pending is not None:
                    self._hold_pending(member, event)
                elif member.seat != seat:  # (a player gets no Diff; its own move: nothing)
                    self._send_progress(member, seat, event.progress, event.seq,
                                        event.status, event.clock_ms)
            except Exception:
                log.exception("room %s: delivering a move failed", self.code)
        for member in legacy:
            try:
                self._deliver(member, event)
            except Exception:
                log.exception("room %s: delivering a move failed", self.code)
        if batched:
            self._ticks.add_move(event)
        if ranking is not None:  # a broadcast: it carries its own state, may overtake a tick
            for member in list(self.members.values()):
                self._deliver(member, ranking)
        # The rivals' frames of this move (its Progress, a ranking) leave at the end of
        # the store's batch of events (every move the loop read in its last pass), in
        # one write per player for the whole batch, not one per move: at saturation
        # that was half the node's CPU (docs/BENCHMARKS.md, "Rivals' frames written once
        # per batch"). Not at their connection's turn in the loop's queue of callbacks
        # either, where a slice of the spectators' tick (~0.3 ms of writes) may be
        # queued ahead of them. A store with no batch: now, as each move comes.
        if not self._players_owed:
            after_events = self._after_events
            if after_events is not None and after_events(self._write_players):
                self._players_owed = True
            else:
                self._write_players()
        boards = self._boards
        if boards.reveal_scan and not boards.hidden:  # the flag first: no scan per move
            boards.scan()

    def _write_players(self) -> None:
        """Write what the room's players have been sent and not written yet, one write
        each (``Outbound.flush``; the frames' own flush, scheduled, is then a no-op). A
        player whose frames are being received is left to its own callback, which
        flushes at its end."""
        self._players_owed = False
        for member in self._grouped()[0]:
            conn: Any = member.conn  # a ``Connection`` (an ``Outbound``) when it can
            if getattr(conn, "receiving", True) is False and conn.unflushed():
                conn.flush()

    def _begin_round(self, number: int) -> None:
        """A rematch: hold every member's events (as for a member joining) until its new
        ``Joined`` is queued, then read the new round from the store and send it."""
        # The new round's deal is hidden or not on its own: forget what this one showed
        # (before any event of the new round is applied).
        self.cards = HiddenCards()
        self._delay.drop()
        self._boards.reveal_scan = True
        self._ticks.dissolve()  # every member's seen-state is its own again (reset below)
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
            self.leave_cohort(member)
            if member.is_player and member.seat not in kept:
                # it did not ask: its seat is gone; it keeps what it has (the results)
                self.members.pop(member.conn, None)
                self._groups = None
                member.conn.room = member.conn.member = None
                continue
            if member.is_player:
                member.epoch = kept[member.seat].epoch
            member.game, member.seq, member.status = None, 0, "lobby"
            member.progress_ms, member.reached = None, {}
            member.started_sent = member.results_sent = False
            member.diff_seen, member.progress_seen, member.held = {}, {}, {}
            member.filling, member.fill_to = set(), {}
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
        if isinstance(event, ev.Moved):  # (``_event_now`` applies moves itself)
            self._apply_moved(event)
        elif isinstance(event, ev.Countdown):
            if record.phase == "lobby":
                self.record = msgspec.structs.replace(
                    record, phase="countdown", start_ms=event.start_ms
                )
        elif isinstance(event, ev.Started):
            self.record = msgspec.structs.replace(record, phase="running", start_ms=event.start_ms)
            fresh = views.new_board(self.record, self.settings)
            self.cards.started(event.seats, opening(fresh).status == "playing",
                               views.face_down(fresh))
        elif isinstance(event, ev.SeatStatus):
            if event.status != "playing":
                self.cards.done.add(event.seat)
        elif isinstance(event, ev.Finished):
            self.record = msgspec.structs.replace(record, phase="finished")
            self.cards.ended = True

    def _apply_moved(self, event: ev.Moved) -> None:
        """``_apply`` for a move."""
        self.cards.moved(event.seat, event.seq, event.down, event.status)
        if self.settings.spectator_delay_s and not self.closed:  # (``delay_ms``'s test)
            _, legacy, batched = self._grouped()
            if legacy or batched:
                # A spectator here (groups: no scan per move). One buffer for all
                # spectators; each member filters duplicates. None without a spectator
                # here: one who joins later gets the moves still due from the log
                # (boards_for), so the buffer lives only while needed.
                self._delay.buffer_move(self._diff_of(event))

    def _deliver(self, member: Member, event: ev.Event) -> None:
        """Send ``member`` what it may see of ``event``."""
        if member.pending is not None:
            self._hold_pending(member, event)
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
                self.deliver_diff(member, self._diff_of(event))
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
        if member.cohort:
            self.leave_cohort(member)
        member.progress_seen[seat] = moves
        key = (seat, progress, moves, status, clock_ms)
        cached = self._progress_frame
        if cached is None or cached[0] != key:  # one encoding for every member
            frame = encode(Progress(seat=seat, progress=progress, moves=moves,
                                    status=status, clock_ms=clock_ms))
            cached = self._progress_frame = (key, frame)
        member.conn.send_frame(cached[1])  # never annotated (``legal``): shared

    def _diff_of(self, moved: ev.Moved) -> Diff:
        """The spectators' ``Diff`` of a move, built once for all of them."""
        cached = self._moved_diff
        if cached is None or cached[0] is not moved:
            diff = Diff(seat=moved.seat, seq=moved.seq, move=moved.move, hash=moved.hash,
                        clock_ms=moved.clock_ms, revealed=moved.revealed)
            cached = self._moved_diff = (moved, diff)
        return cached[1]

    # ------------------------------------------------------------------ members by kind
    def _grouped(self) -> tuple[list[Member], list[Member], list[Member]]:
        """The members as (players, spectators of older clients, spectators taking
        ``Diffs``), sorted once per change of membership, not once per move."""
        groups = self._groups
        if groups is None:
            players: list[Member] = []
            legacy: list[Member] = []
            batched: list[Member] = []
            for member in self.members.values():
                if member.is_player:
                    players.append(member)
                else:
                    (batched if member.batched else legacy).append(member)
            groups = self._groups = (players, legacy, batched)
        return groups

    # ------------------------------------------------------------------ boards
    async def boards_for(self, member: Member,
                         seats: list[SeatRecord] | None = None) -> list[Board]:
        """The boards ``member`` may see now (``RoomBoards.boards_for``)."""
        return await self._boards.boards_for(member, seats)

    def send_started(self, member: Member, start_ms: int, seats: list[int]) -> None:
        """Send ``Started`` with the boards ``member`` may see (``RoomBoards.send_started``)."""
        self._boards.send_started(member, start_ms, seats)

    async def publish_seats(self) -> None:
        """Tell every node the seat list changed (read from the store, so it is current)."""
        seats = await self.store.get_seats(self.code)
        frame = encode(Seats(seats=[views.seat_info(s) for s in seats]))
        await self.publish(ev.Broadcast(frame))
