"""The spectators' diffs of one room: each spectator's sequence filter, its gap fills from
the log, and the delayed room's buffer of diffs waiting for their time.

Every diff a spectator is sent goes through ``deliver_diff``: duplicates are dropped, a
diff that arrives before its predecessor is held until the gap is filled from the
seat's checkpoint and log (``_fill_gap``), and nothing goes to a spectator whose boards
are withheld (hidden information). In a delayed room the diffs wait in one buffer shared
by every spectator on this node (``DelayBuffer``, bounded) with one timer for the
earliest; a delayed spectator joining gets the moves after its cutoff put in that buffer
(``_buffer_window``). docs/SERVER.md, "Snapshots" and "Buffers".

``SpectatorDiffs`` owns that state (the last diff's encoding, the delay buffer, its
timer, what it already has of each seat); what it needs of its room is ``DiffsRoom``, a
protocol, so this module does not import ``server.room`` (which imports this one).
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

    @property
    def is_player(self) -> bool:
        """True for a seat holder, False for a spectator."""


M = TypeVar("M", bound=DiffsMember)


class DueTicks(Protocol):
    """The room's spectators' tick as the delay sees it (``SpectatorTicks`` is one)."""

    def add_due(self, due: list[Diff]) -> None:
        """Put diffs that fell due in the tick, in order."""


class DiffsRoom(Protocol[M]):
    """What the diffs need of their room (``room.Room`` is one)."""

    code: str
    closed: bool
    record: RoomRecord

    @property
    def delay_ms(self) -> int:
        """How far behind the live race spectators are kept (0: live)."""

    @property
    def members(self) -> Mapping[Any, M]:
        """The room's members on this node, by connection."""

    @property
    def _ticks(self) -> DueTicks:
        """The room's spectators' tick."""

    def now_ms(self) -> int:
        """Wall milliseconds (the room's clock)."""

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run ``coro`` as one of the room's tasks."""

    async def rebuild_seat(self, seat: int, **bounds: Any) -> views.Replay:
        """Seat ``seat``'s board from its checkpoint and log."""

    def _grouped(self) -> tuple[list[M], list[M], list[M]]:
        """(players, spectators of older clients, spectators taking ``Diffs``)."""

    def _hold_pending(self, member: M, item: ev.Event | Diff) -> None:
        """Buffer ``item`` for a member still joining."""


class SpectatorDiffs(Generic[M]):
    """The spectators' diffs of one room (see the module docstring)."""

    def __init__(self, room: DiffsRoom[M], config: ServerConfig) -> None:
        self.room = room
        self.config = config
        # Spectator delay: diffs waiting for their time, shared by every spectator here
        # (``DelayBuffer``); one timer for the earliest. ``_delay_from``: per seat, the
        # first seq buffered from the events (a joiner's diffs before it come from the log).
        self._delayed = DelayBuffer(self.config.delay_buffer_max)
        self._delay_timer: asyncio.TimerHandle | None = None
        self._delay_from: dict[int, int] = {}
        self._delay_generation = 0  # counts the buffer's drops (a joiner's work is void)
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
        seen = member.diff_seen.get(diff.seat, 0)
        if diff.seq <= seen:
            return
        held = member.held.setdefault(diff.seat, {})
        if diff.seq > seen + 1:
            if len(held) >= self.config.member_held_max:
                held.clear()  # every one of them is in the log: the fill brings them
            held[diff.seq] = diff
            self._fill_to(member, diff.seat, diff.seq)
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

    def _fill_to(self, member: M, seat: int, seq: int) -> None:
        """Have ``member`` brought up to ``seq`` on ``seat`` from the log (one fill per
        seat at a time; a running fill picks up a later target)."""
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

    def _buffer_diff(self, diff: Diff, due_ms: int) -> None:
        """Keep ``diff`` for the spectators until ``due_ms`` (wall ms): ``DelayBuffer``,
        which at its bound notes it for a fill from the log instead."""
        self._delayed.add(diff, due_ms)
        self._arm_delay(due_ms)

    def _arm_delay(self, due_ms: int) -> None:
        """Make the delay timer fire by ``due_ms`` (one timer per room)."""
        if self.room.closed:
            return
        loop = asyncio.get_running_loop()
        when = loop.time() + max(0, due_ms - self.room.now_ms()) / 1000
        timer = self._delay_timer
        if timer is not None and timer.when() <= when:
            return
        if timer is not None:
            timer.cancel()
        self._delay_timer = loop.call_at(when, self._fire_delay)

    def _fire_delay(self) -> None:
        """Deliver every diff now due to every spectator (buffered for one still
        joining), then re-arm for the next."""
        self._delay_timer = None
        room = self.room
        if room.closed:
            return
        spectators = [m for m in room.members.values() if not m.is_player]
        due, lost = self._delayed.pop_due(room.now_ms())
        _, legacy, batched = room._grouped()
        if due and batched:  # they go out at the tick, coalesced like live moves
            room._ticks.add_due(due)
        for diff in due:
            for target in legacy:
                if room.members.get(target.conn) is not target:
                    continue
                if target.pending is not None:
                    room._hold_pending(target, diff)
                else:
                    self.deliver_diff(target, diff)
        for seat, seq in lost:
            for target in spectators:
                if (target.pending is None and not target.boards_hidden
                        and room.members.get(target.conn) is target):
                    self._fill_to(target, seat, seq)
        later = self._delayed.next_due()
        if later is not None:
            self._arm_delay(later)

    def _drop_delay_buffer(self) -> None:
        """Forget the spectator delay buffer (no spectator left, a new round, closing)."""
        if self._delay_timer is not None:
            self._delay_timer.cancel()
            self._delay_timer = None
        self._delayed.clear()
        self._delay_from = {}
        self._delay_generation += 1

    async def _buffer_window(self, seat: int, board: views.Replay) -> None:
        """A delayed spectator joins with ``board`` as of the cutoff: the seat's moves
        after it, not yet due, go to the room's delay buffer -- those the buffer does not
        have already (it has every move from ``_delay_from`` on), from the log, in
        slices. ``board``'s game is advanced (the caller has made its Board)."""
        start_ms = self.room.record.start_ms or 0
        generation = self._delay_generation
        seq = board.seq
        while True:
            first = self._delay_from.get(seat)
            upto = seq + self.config.rebuild_slice
            if first is not None:
                upto = min(upto, first - 1)
            if upto <= seq:
                break
            part = await self.room.rebuild_seat(seat, upto=upto, diffs_after=seq,
                                                start=views.Replay(board.game, seq, [],
                                                                   board.reached))
            if generation != self._delay_generation:
                return  # the buffer went (no spectator left) while this ran
            first = self._delay_from.get(seat)
            for diff in part.diffs:
                if first is None or diff.seq < first:
                    self._buffer_diff(diff, start_ms + diff.clock_ms + self.room.delay_ms)
            if part.seq < upto:
                break  # the end of the log
            seq = part.seq
        # The buffer now has every move of the seat after the cutoff: the next joiner
        # (whose cutoff is no earlier) reads none of them from the log.
        first = self._delay_from.get(seat)
        if first is None or board.seq + 1 < first:
            self._delay_from[seat] = board.seq + 1
