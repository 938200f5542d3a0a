"""The spectators' diffs of one room: each spectator's sequence filter with its gap fills
from the log (``SpectatorDiffs``), and a delayed room's diffs waiting for their time
(``SpectatorDelay``).

Every diff a spectator is sent goes through ``SpectatorDiffs.deliver_diff``: duplicates
are dropped, a diff that arrives before its predecessor is held until the gap is filled
from the seat's checkpoint and log (``fill_to``), and nothing goes to a spectator whose
boards are withheld (hidden information).

In a delayed room the diffs wait in one buffer shared by every spectator on this node
(``DelayBuffer``, bounded) with one timer for the earliest (``SpectatorDelay``): the
moves' diffs from the room's events while a spectator is here (``buffer_move``), and
those a delayed spectator joining still has to receive, from the log
(``buffer_window``). Those that fall due go through the filter (or to the room's tick).
docs/SERVER.md, "Snapshots" and "Buffers".

What the two need of their room are protocols (``DiffsRoom``, ``DelayRoom``), so this
module does not import ``server.room`` (which imports this one).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Mapping
from typing import Any, Generic, Protocol, TypeVar

from protocol import encode
from protocol.messages import Diff

from . import events as ev
from . import views
from .config import ServerConfig
from .delay_buffer import DelayBuffer
from .store.base import StoreUnavailable
from .store.records import RoomRecord


class DiffsMember(Protocol):
    """What the diffs read and advance of a spectator (``room.Member`` is one)."""

    conn: Any  # a ``room.Peer``
    pending: list[Any] | None  # events buffered while it joins; None: live
    boards_hidden: bool
    diff_seen: dict[int, int]
    held: dict[int, dict[int, Diff]]
    filling: set[int]
    fill_to: dict[int, int]
    cohort: bool  # in the tick's cohort (spectator_ticks): its seen-state is shared

    @property
    def is_player(self) -> bool:
        """True for a seat holder, False for a spectator."""


M = TypeVar("M", bound=DiffsMember)
M_co = TypeVar("M_co", bound=DiffsMember, covariant=True)


class DueTicks(Protocol):
    """The room's spectators' tick as the delay sees it (``SpectatorTicks`` is one)."""

    def add_due(self, due: list[Diff]) -> None:
        """Put diffs that fell due in the tick, in order."""


class DiffsRoom(Protocol[M_co]):
    """What the spectators' filter needs of its room (``room.Room`` is one)."""

    @property
    def members(self) -> Mapping[Any, M_co]:
        """The room's members on this node, by connection."""

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run ``coro`` as one of the room's tasks."""

    async def rebuild_seat(self, seat: int, **bounds: Any) -> views.Replay:
        """Seat ``seat``'s board from its checkpoint and log."""

    def leave_cohort(self, member: Any) -> None:
        """Take ``member`` out of the tick's cohort, with a seen-state of its own."""


class DelayRoom(DiffsRoom[M], Protocol[M]):
    """What the spectator delay needs of its room, besides (``room.Room`` is one)."""

    closed: bool
    record: RoomRecord

    @property
    def delay_ms(self) -> int:
        """How far behind the live race spectators are kept (0: live)."""

    @property
    def _ticks(self) -> DueTicks:
        """The room's spectators' tick."""

    def now_ms(self) -> int:
        """Wall milliseconds (the room's clock)."""

    def _grouped(self) -> tuple[list[M], list[M], list[M]]:
        """(players, spectators of older clients, spectators taking ``Diffs``)."""

    def _hold_pending(self, member: M, item: ev.Event | Diff) -> None:
        """Buffer ``item`` for a member still joining."""


class SpectatorDiffs(Generic[M]):
    """Each spectator's sequence filter, and its gap fills (see the module docstring)."""

    def __init__(self, room: DiffsRoom[M], config: ServerConfig) -> None:
        self.room = room
        self.config = config
        # The last diff encoded for spectators: a move goes to every member of the room
        # in one loop, so one entry encodes it once for all of them.
        self._diff_frame: tuple[tuple[int, int, int, int, str], bytes] | None = None

    def deliver_diff(self, member: M, diff: Diff, out: list[Diff] | None = None) -> None:
        """Send ``diff`` to a spectator in sequence order: duplicates are dropped, a diff
        that arrives before its predecessor is held until the gap is filled from the log
        (at most ``member_held_max`` per seat: beyond it the held ones are dropped and
        the fill reads them from the log too). Nothing while the member's boards are
        withheld (hidden information). With ``out`` the diffs to send are appended to it
        (the caller sends them as one ``Diffs``) instead of sent one frame each."""
        if member.boards_hidden:
            return
        if member.cohort:  # its filter is about to change: its own, not the cohort's
            self.room.leave_cohort(member)
        seen = member.diff_seen.get(diff.seat, 0)
        if diff.seq <= seen:
            return
        held = member.held.setdefault(diff.seat, {})
        if diff.seq > seen + 1:
            if len(held) >= self.config.member_held_max:
                held.clear()  # every one of them is in the log: the fill brings them
            held[diff.seq] = diff
            self.fill_to(member, diff.seat, diff.seq)
            return
        if out is not None:
            out.append(diff)
        else:
            member.conn.send_frame(self._encoded(diff))
        seen = diff.seq
        while seen + 1 in held:
            seen += 1
            if out is not None:
                out.append(held.pop(seen))
            else:
                member.conn.send_frame(self._encoded(held.pop(seen)))
        member.diff_seen[diff.seat] = seen

    def _encoded(self, diff: Diff) -> bytes:
        """``diff`` encoded, once for every spectator it goes to (a spectator's frames
        are never annotated: ``legal`` only touches a seat's own states)."""
        key = (diff.seat, diff.seq, diff.hash, diff.clock_ms, diff.move)
        cached = self._diff_frame
        if cached is not None and cached[0] == key:
            return cached[1]
        frame = encode(diff)
        self._diff_frame = (key, frame)
        return frame

    def fill_to(self, member: M, seat: int, seq: int) -> None:
        """Have ``member`` brought up to ``seq`` on ``seat`` from the log (one fill per
        seat at a time; a running fill picks up a later target)."""
        if member.cohort:  # filling: out of step until the fill is done
            self.room.leave_cohort(member)
        if seq > member.fill_to.get(seat, 0):
            member.fill_to[seat] = seq
        if seat not in member.filling:
            member.filling.add(seat)
            self.room.spawn(self._fill_gap(member, seat))

    async def _fill_gap(self, member: M, seat: int) -> None:
        """Multi-node: a move's event can be lost for good (its node crashed between
        storing the move and publishing it, or the store was briefly unreachable), and a
        diff can be dropped at a bound, so a gap in a spectator's diffs is filled from
        the seat's checkpoint and log, up to the diff that revealed it (never past what
        is due: the delay), ``member_held_max`` diffs at a time."""
        try:
            while self.room.members.get(member.conn) is member:
                seen = member.diff_seen.get(seat, 0)
                target = member.fill_to.get(seat, 0)
                if target <= seen:
                    break
                upto = min(target, seen + self.config.member_held_max)
                rebuilt = await self.room.rebuild_seat(seat, upto=upto, diffs_after=seen)
                if rebuilt.seq < upto:
                    break  # the log does not have them (yet): the next diff tries again
                for diff in rebuilt.diffs:
                    if self.room.members.get(member.conn) is member:
                        self.deliver_diff(member, diff)
        except StoreUnavailable:
            pass  # the next out-of-order diff tries again
        finally:
            member.filling.discard(seat)


class SpectatorDelay(Generic[M]):
    """A delayed room's diffs waiting for their time on this node, shared by every
    spectator here, and the one timer for the earliest (see the module docstring)."""

    def __init__(self, room: DelayRoom[M], config: ServerConfig,
                 diffs: SpectatorDiffs[M]) -> None:
        self.room = room
        self.config = config
        self.diffs = diffs
        self.buffer = DelayBuffer(config.delay_buffer_max)
        self.timer: asyncio.TimerHandle | None = None
        # Per seat, the first seq buffered from the events (a joiner's diffs before it
        # come from the log).
        self._from_events: dict[int, int] = {}
        self._generation = 0  # counts the buffer's drops (a joiner's work is void)

    def buffer_move(self, diff: Diff) -> None:
        """Keep a move's ``diff`` from the room's events until it falls due (the room
        calls this only while a spectator is here: one who joins later gets the moves
        still due from the log, ``buffer_window``)."""
        due = (self.room.record.start_ms or 0) + diff.clock_ms + self.room.delay_ms
        self._from_events.setdefault(diff.seat, diff.seq)
        self._keep(diff, due)

    def _keep(self, diff: Diff, due_ms: int) -> None:
        """Keep ``diff`` for the spectators until ``due_ms`` (wall ms): ``DelayBuffer``,
        which at its bound notes it for a fill from the log instead."""
        self.buffer.add(diff, due_ms)
        self._arm(due_ms)

    def _arm(self, due_ms: int) -> None:
        """Make the timer fire by ``due_ms`` (one timer per room)."""
        if self.room.closed:
            return
        loop = asyncio.get_running_loop()
        when = loop.time() + max(0, due_ms - self.room.now_ms()) / 1000
        timer = self.timer
        if timer is not None and timer.when() <= when:
            return
        if timer is not None:
            timer.cancel()
        self.timer = loop.call_at(when, self.fire)

    def fire(self) -> None:
        """Deliver every diff now due to every spectator (buffered for one still
        joining), then re-arm for the next (the timer's callback)."""
        self.timer = None
        room = self.room
        if room.closed:
            return
        spectators = [m for m in room.members.values() if not m.is_player]
        due, lost = self.buffer.pop_due(room.now_ms())
        _, legacy, batched = room._grouped()
        if due and batched:  # they go out at the tick, coalesced like live moves
            room._ticks.add_due(due)
        deliver_diff = self.diffs.deliver_diff
        for diff in due:
            for target in legacy:
                if room.members.get(target.conn) is not target:
                    continue
                if target.pending is not None:
                    room._hold_pending(target, diff)
                else:
                    deliver_diff(target, diff)
        for seat, seq in lost:
            for target in spectators:
                if (target.pending is None and not target.boards_hidden
                        and room.members.get(target.conn) is target):
                    self.diffs.fill_to(target, seat, seq)
        later = self.buffer.next_due()
        if later is not None:
            self._arm(later)

    def drop(self) -> None:
        """Forget every diff waiting and the timer (no spectator left, a new round,
        closing)."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.buffer.clear()
        self._from_events = {}
        self._generation += 1

    async def buffer_window(self, seat: int, board: views.Replay) -> None:
        """A delayed spectator joins with ``board`` as of the cutoff: the seat's moves
        after it, not yet due, go to the buffer -- those it does not have already (it
        has every move from the first buffered from the events on), from the log, in
        slices. ``board``'s game is advanced (the caller has made its Board)."""
        start_ms = self.room.record.start_ms or 0
        generation = self._generation
        seq = board.seq
        while True:
            first = self._from_events.get(seat)
            upto = seq + self.config.rebuild_slice
            if first is not None:
                upto = min(upto, first - 1)
            if upto <= seq:
                break
            part = await self.room.rebuild_seat(seat, upto=upto, diffs_after=seq,
                                                start=views.Replay(board.game, seq, [],
                                                                   board.reached))
            if generation != self._generation:
                return  # the buffer went (no spectator left) while this ran
            first = self._from_events.get(seat)
            for diff in part.diffs:
                if first is None or diff.seq < first:
                    self._keep(diff, start_ms + diff.clock_ms + self.room.delay_ms)
            if part.seq < upto:
                break  # the end of the log
            seq = part.seq
        # The buffer now has every move of the seat after the cutoff: the next joiner
        # (whose cutoff is no earlier) reads none of them from the log.
        first = self._from_events.get(seat)
        if first is None or board.seq + 1 < first:
            self._from_events[seat] = board.seq + 1
