"""Which boards a room's members may see: the room-wide hidden-information rule, on a node.

While any racing seat has a face-down card, a spectator gets no board and no diff (its
boards are *withheld*: ``boards_hidden``); the moment none has (or the race is over),
each waiting spectator gets every board as ``Snapshot`` messages, then diffs as usual.
A player sees its own board only. docs/SERVER.md, "Who sees what".

- ``HiddenCards``: what this node knows for that rule: each racing seat's face-down
  count, the seats racing at the start and those done since, whether the race ended. It
  learns them from the room's events (``Started``, ``Moved.down``, ``SeatStatus``,
  ``Finished``), or from the store when the room opens here mid-race. Pure: no I/O.
- ``RoomBoards``: the boards a member may see now (``boards_for``, ``send_started``),
  and showing them to the spectators waiting when the room stops hiding (``scan``).

It reaches its room through ``BoardsRoom``, a protocol, so this module does not import
``server.room`` (which imports this one).
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine, Mapping
from typing import Any, Generic, Protocol, TypeVar

import engine
from protocol.messages import Board, RoomPhase, RoomSettings, Snapshot, Started

from . import views
from .core.standing import opening
from .spectator_diffs import SpectatorDelay
from .store.base import Store, StoreUnavailable
from .store.records import RoomRecord, SeatRecord

log = logging.getLogger("server.room")  # the room's logger: its warnings as before


class HiddenCards:
    """What a node knows of a room's hidden information (module docstring). A new
    round starts from a new one."""

    __slots__ = ("done", "down", "down_seq", "ended", "racing")

    def __init__(self) -> None:
        self.down: dict[int, int] = {}  # seat -> face-down cards, as of ...
        self.down_seq: dict[int, int] = {}  # ... that seat's move
        self.racing: set[int] | None = None  # seats racing at the start (None: not known)
        self.done: set[int] = set()  # racing seats no longer playing
        self.ended = False  # the Finished event was applied

    def hidden(self, phase: RoomPhase) -> bool:
        """The room has hidden information now: started and not seen to finish, and some
        racing seat still has a face-down card (or this node does not know yet: assume it
        does). Judged from the events this node applied, not from the cached phase alone:
        the shell can mark the room finished before the events that end it (the last
        resignation, the results) reach its members, and they must come first."""
        if phase in ("lobby", "countdown") or self.ended:
            return False
        if self.racing is None:
            return True
        return views.room_hidden(self.down, self.racing - self.done)

    def note_down(self, seat: int, seq: int, down: int) -> None:
        """Seat ``seat`` has ``down`` face-down cards after its move ``seq`` (an older
        count than the one known is ignored: events and store reads may cross)."""
        if seq >= self.down_seq.get(seat, -1):
            self.down_seq[seat], self.down[seat] = seq, down

    def moved(self, seat: int, seq: int, down: int, status: str) -> None:
        """A move of ``seat`` (its face-down count and status after it)."""
        if seq >= self.down_seq.get(seat, -1):
            self.down_seq[seat], self.down[seat] = seq, down
        if status != "playing":
            self.done.add(seat)

    def started(self, seats: list[int], racing: bool, down: int) -> None:
        """The race started with ``seats``, each with ``down`` face-down cards on the
        fresh deal (``racing`` False: the deal ends at once, nobody races)."""
        self.racing = set(seats) if racing else set()
        for seat in seats:
            self.note_down(seat, 0, down)


class BoardsMember(Protocol):
    """What ``RoomBoards`` reads and writes of a member (``room.Member`` is one)."""

    conn: Any  # a ``room.Peer``
    seat: int
    game: engine.Game | None
    seq: int
    status: str
    pending: list[Any] | None
    started_sent: bool
    boards_hidden: bool
    diff_seen: dict[int, int]

    @property
    def is_player(self) -> bool:
        """True for a seat holder."""


M = TypeVar("M", bound=BoardsMember)


class BoardsRoom(Protocol[M]):
    """What ``RoomBoards`` needs of its room (``room.Room`` is one)."""

    code: str
    record: RoomRecord
    settings: RoomSettings
    store: Store
    cards: HiddenCards

    @property
    def phase(self) -> RoomPhase:
        """The room's phase as last seen by this node."""

    @property
    def delay_ms(self) -> int:
        """How far behind the live race spectators are kept (0: live)."""

    @property
    def members(self) -> Mapping[Any, M]:
        """The room's members on this node, by connection."""

    def clock_ms(self) -> int:
        """The race clock (0 before the start)."""

    async def rebuild_seat(self, seat: int, **bounds: Any) -> views.Replay:
        """Seat ``seat``'s board from its checkpoint and log."""

    def leave_cohort(self, member: Any) -> None:
        """Take ``member`` out of the tick's cohort, with a seen-state of its own."""

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run ``coro`` as one of the room's tasks."""

    def _release(self, member: M) -> None:
        """Deliver the events buffered for ``member`` and make it live."""


class RoomBoards(Generic[M]):
    """The boards a room's members may see (module docstring)."""

    def __init__(self, room: BoardsRoom[M], delay: SpectatorDelay[Any]) -> None:
        self.room = room
        self.delay = delay
        # Some member may be waiting for its boards to be shown: ``scan`` looks (the
        # flag first, so a move does not cost a loop over every spectator).
        self.reveal_scan = True

    @property
    def hidden(self) -> bool:
        """The room hides information now (``HiddenCards.hidden``)."""
        room = self.room
        return room.cards.hidden(room.phase)

    async def learn_racing(self) -> None:
        """Read from the store which seats race and their face-down counts (a node that
        opened the room after its start: it saw no ``Started``)."""
        room = self.room
        cards = room.cards
        racing: set[int] = set()
        for seat in await room.store.get_seats(room.code):
            if seat.status != "playing":
                continue
            racing.add(seat.seat)
            if seat.seat not in cards.down:
                rebuilt = await room.rebuild_seat(seat.seat, upto=seat.moves)
                cards.note_down(seat.seat, rebuilt.seq, views.face_down(rebuilt.game))
        if cards.racing is None:
            cards.racing = racing

    def scan(self) -> None:
        """Start showing the boards to every spectator waiting for them (the room no
        longer hides information). After the event itself (the resignation or results
        that ended the hiding come first). Level-triggered: the phase can also change
        under this cache (the shell's own reads), and a reveal the store refused is
        retried on the next event. The flag is cleared once no member waits (a scan per
        move would cost a loop over every spectator)."""
        waiting = False
        for member in list(self.room.members.values()):
            if member.boards_hidden:
                waiting = True
                if member.pending is None:
                    self.start_showing(member)
        self.reveal_scan = waiting

    def start_showing(self, member: M) -> None:
        """Send a spectator told ``hidden`` every board it may now see, as ``Snapshot``
        messages; events from now on are buffered as during a join, so they follow the
        snapshots (no diff is lost or sent twice: ``boards_for`` records the sequences
        the snapshots cover)."""
        self.room.leave_cohort(member)
        member.pending = []
        self.room.spawn(self._show(member))

    async def _show(self, member: M) -> None:
        room = self.room
        try:
            boards = await self.boards_for(member)
        except StoreUnavailable:
            log.warning("room %s: boards not shown (store unavailable)", room.code)
            boards = None
        if room.members.get(member.conn) is not member:
            return
        if boards is not None:
            member.boards_hidden = False
            for board in boards:
                member.conn.send(Snapshot(board=board))
        room._release(member)

    async def boards_for(self, member: M, seats: list[SeatRecord] | None = None
                         ) -> list[Board]:
        """The boards ``member`` may see now: its own (player, racing), none while the
        room hides information (spectator, racing: ``member.boards_hidden`` is set), every
        board as of ``now - delay`` (spectator, racing) or every final board (finished).
        Each board comes from its seat's checkpoint and log tail (``snapshots``), never
        the whole log. Records the sequences covered so later diffs are not sent twice;
        puts the delayed diffs a spectator still has to receive in the room's buffer.
        ``seats``: the room's seats if the caller has just read them (a round trip less)."""
        room = self.room
        room.leave_cohort(member)
        phase = room.phase
        if phase in ("lobby", "countdown"):
            return []
        if member.is_player and phase == "running":
            assert member.game is not None
            member.diff_seen[member.seat] = member.seq
            return [views.board(member.seat, member.seq, member.game)]
        if phase == "running" and not member.is_player:
            if room.cards.racing is None:
                await self.learn_racing()
            if self.hidden:
                member.boards_hidden = True
                self.reveal_scan = True
                return []
        if seats is None:
            seats = await room.store.get_seats(room.code)
        cutoff = None
        if phase == "running" and room.delay_ms:
            cutoff = room.clock_ms() - room.delay_ms
        out = []
        for seat in seats:
            # seat.moves: the log's length when the seats were read (later moves come
            # as events, buffered while this member is pending)
            rebuilt = await room.rebuild_seat(seat.seat, upto=seat.moves, until_clock_ms=cutoff)
            out.append(views.board(seat.seat, rebuilt.seq, rebuilt.game))
            member.diff_seen[seat.seat] = rebuilt.seq
            if cutoff is not None and rebuilt.stopped:
                await self.delay.buffer_window(seat.seat, rebuilt)
        return out

    def send_started(self, member: M, start_ms: int, seats: list[int]) -> None:
        """Send ``Started`` with the boards ``member`` may see (players: their own fresh
        board, set up as the seat's game)."""
        if member.started_sent:
            return
        member.started_sent = True
        room = self.room
        room.leave_cohort(member)
        if member.is_player:
            member.game = views.new_board(room.record, room.settings)
            member.seq, member.status = 0, opening(member.game).status
            boards = [views.board(member.seat, 0, member.game)]
        elif self.hidden:
            member.boards_hidden = True
            self.reveal_scan = True
            boards = []
        else:
            fresh = views.new_board(room.record, room.settings)
            boards = [views.board(seat, 0, fresh) for seat in seats]
        member.conn.send(Started(start_ms=start_ms, boards=boards, hidden=member.boards_hidden))
