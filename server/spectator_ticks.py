"""The spectators' tick of one room: the moves since the last tick as one ``Diffs`` frame.

A spectator whose hello set ``ds`` gets the room's moves as one ``Diffs`` frame per tick
(every move of the tick, in order, and the latest ``Progress`` per seat) instead of a
``Progress`` and a ``Diff`` per move. The frame is encoded once and framed once for every
spectator *in step* with the room, and written ``TICK_WRITE_SLICE`` connections per loop
callback, so the players' frames are read and acked between two slices. The next tick
counts its ``spectator_tick_ms`` from the last write of the one before. docs/SERVER.md,
"The spectators' tick".

``SpectatorTicks`` owns the tick's state (its moves, its due diffs, its timer, the
connections still holding its frame); what it needs of its room is ``TickRoom``, a
protocol, so this module does not import ``server.room`` (which imports this one).
"""

from __future__ import annotations

import asyncio
import logging
import operator
from collections import deque
from collections.abc import Mapping
from typing import Any, Generic, Protocol, TypeVar

from protocol import encode
from protocol.messages import Diff, Diffs, Progress

from . import events as ev
from .config import ServerConfig
from .metrics import Metrics

log = logging.getLogger(__name__)

# Spectators written per loop callback when a tick goes out (``write_slice``): between
# two slices the loop reads the players' frames, so a tick to 1,000 spectators never
# holds a player's ack for more than one slice's writes (~1 ms on the bench machine).
TICK_WRITE_SLICE = 128


class Deferring(Protocol):
    """A peer that can hold a frame shared by many and write it later (``Connection``
    can; a peer without ``defer_frame`` is sent the frame at once)."""

    def defer_frame(self, frame: bytes) -> bool:
        """Hold ``frame`` for ``write_deferred`` (True), or send it at once (False)."""

    def write_deferred(self) -> bool:
        """Write the held frame; True if written as shared bytes."""


class TickMember(Protocol):
    """What the tick reads and advances of a spectator (``room.Member`` is one)."""

    conn: Any  # a ``room.Peer``, ``Deferring`` too if it has ``defer_frame``
    pending: list[Any] | None  # events buffered while it joins; None: live
    boards_hidden: bool
    diff_seen: dict[int, int]
    progress_seen: dict[int, int]
    held: dict[int, dict[int, Diff]]
    filling: set[int]


M = TypeVar("M", bound=TickMember)


class TickRoom(Protocol[M]):
    """What the tick needs of its room (``room.Room`` is one)."""

    code: str
    closed: bool

    @property
    def delay_ms(self) -> int:
        """How far behind the live race spectators are kept (0: live)."""

    @property
    def members(self) -> Mapping[Any, M]:
        """The room's members on this node, by connection."""

    def _grouped(self) -> tuple[list[M], list[M], list[M]]:
        """(players, spectators of older clients, spectators taking ``Diffs``)."""

    def _hold_pending(self, member: M, item: ev.Event | Diff) -> None:
        """Buffer ``item`` for a member still joining."""

    def _diff_of(self, moved: ev.Moved) -> Diff:
        """The spectators' ``Diff`` of a move, built once for all of them."""

    def deliver_diff(self, member: M, diff: Diff, out: list[Diff] | None = None) -> None:
        """``diff`` through the member's filter (duplicates dropped, gaps filled)."""


class SpectatorTicks(Generic[M]):
    """The spectators' tick of one room (see the module docstring)."""

    def __init__(self, room: TickRoom[M], config: ServerConfig, metrics: Metrics) -> None:
        self.room = room
        self.config = config
        self.metrics = metrics
        # The moves since the last flush and the delayed diffs that fell due meanwhile,
        # one timer, the loop time of the last flush.
        self.moves: list[ev.Moved] = []
        self.due: list[Diff] = []
        self.timer: asyncio.Handle | None = None
        self.last = float("-inf")
        # Spectators holding the tick's shared frame, to be written slice by slice.
        self.writes: deque[Any] = deque()  # ``Deferring`` peers
        self.write_handle: asyncio.Handle | None = None

    def add_move(self, moved: ev.Moved) -> None:
        """Put a move in the tick and have the tick flushed (``schedule``)."""
        self.moves.append(moved)
        self.schedule()

    def add_due(self, due: list[Diff]) -> None:
        """Put a delayed room's diffs that fell due in the tick, in order, and have the
        tick flushed (``schedule``)."""
        self.due.extend(due)
        self.schedule()

    def schedule(self) -> None:
        """Have the tick flushed: at the end of this loop iteration if the last tick
        finished going out ``spectator_tick_ms`` ago (a move after a quiet spell waits
        for nothing), else when it will have; at once at ``spectator_tick_max`` moves.
        The interval counts from the last tick's last write, not its start, so however
        long a tick takes to write, the players get the loop for at least as long
        between two ticks (a busy room's spectators get fewer, fuller frames)."""
        if len(self.moves) + len(self.due) >= self.config.spectator_tick_max:
            self.flush()
            return
        if self.timer is not None or self.room.closed or self.writes:
            return  # the last slice of the tick going out schedules the next (write_slice)
        loop = asyncio.get_running_loop()
        wait = self.last + self.config.spectator_tick_ms / 1000 - loop.time()
        self.timer = (loop.call_soon(self.flush) if wait <= 0
                      else loop.call_later(wait, self.flush))

    def flush(self) -> None:
        """Send the spectators taking ``Diffs`` the tick: its diffs in order (the moves',
        or in a delayed room the diffs that fell due) and the latest ``Progress`` per
        seat. The frame is encoded once and written to every spectator in step with the
        room (live, boards shown, no held diff or gap fill, its last diff of each seat
        just before the tick's first); a spectator whose boards are withheld gets the
        progress alone (one shared frame too); any other one goes through the per-member
        filter (``deliver_diff``) and gets a frame of its own; one still joining has the
        moves buffered with its other events. A shared frame is held by each connection
        (``defer_frame``) and written ``TICK_WRITE_SLICE`` connections per loop callback
        (``write_slice``), the first slice now; a tick still going out when the next
        is flushed is finished first."""
        if self.writes:  # the last tick is still going out: finish it first
            self.write_slice(len(self.writes))
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        moves, due = self.moves, self.due
        if not moves and not due:
            return
        self.moves, self.due = [], []
        self.last = asyncio.get_running_loop().time()
        room = self.room
        spectators = room._grouped()[2]
        if room.closed or not spectators:
            return
        diffs = due if room.delay_ms else [room._diff_of(moved) for moved in moves]
        latest: dict[int, ev.Moved] = {}
        for moved in moves:
            best = latest.get(moved.seat)
            if best is None or moved.seq > best.seq:
                latest[moved.seat] = moved
        progress = [Progress(seat=e.seat, progress=e.progress, moves=e.seq, status=e.status,
                             clock_ms=e.clock_ms) for e in latest.values()]
        first: dict[int, int] = {}
        last: dict[int, int] = {}
        in_run = True  # each seat's diffs in the tick follow one another
        for diff in diffs:
            before = last.get(diff.seat)
            if before is None:
                first[diff.seat] = diff.seq
            elif diff.seq != before + 1:
                in_run = False
            last[diff.seat] = diff.seq
        # in step: each seat's last diff right before the tick's first (a dict-items
        # subset test runs in C; so do the map()s below: this loop is per spectator,
        # per tick)
        expect = {seat: seq - 1 for seat, seq in first.items() if seq > 1}.items()
        firsts = [seat for seat, seq in first.items() if seq == 1]  # none seen: 0 or absent
        zeros = [0] * len(firsts)
        moves_now = {p.seat: p.moves for p in progress}
        seats_now, counts_now = list(moves_now), list(moves_now.values())
        unseen = [-1] * len(seats_now)
        shown: bytes | None = None
        withheld: bytes | None = None
        writes = self.writes
        members = room.members
        for member in spectators:
            conn = member.conn
            if members.get(conn) is not member:
                continue
            try:
                if member.pending is not None:
                    for moved in moves:
                        room._hold_pending(member, moved)
                    if room.delay_ms:
                        for diff in due:
                            room._hold_pending(member, diff)
                    continue
                seen_p = member.progress_seen
                seen_d = member.diff_seen
                # ahead: it already has a seat's progress as of this tick (from the log)
                if any(map(operator.ge, map(seen_p.get, seats_now, unseen), counts_now)):
                    self.tick_for(member, diffs, progress)
                    continue
                if member.boards_hidden:
                    seen_p.update(moves_now)
                    if not progress:
                        continue
                    if withheld is None:
                        withheld = encode(Diffs(progress=progress))
                    frame = withheld
                elif (in_run and expect <= seen_d.items() and not member.filling
                      and not any(member.held.values())
                      and not any(map(seen_d.get, firsts, zeros))):
                    seen_d.update(last)
                    seen_p.update(moves_now)
                    if shown is None:
                        shown = encode(Diffs(diffs=diffs, progress=progress))
                    frame = shown
                else:
                    self.tick_for(member, diffs, progress)
                    continue
                # held by the connection, written slice by slice (``write_slice``)
                defer = getattr(conn, "defer_frame", None)
                if defer is None:
                    conn.send_frame(frame)
                elif defer(frame):
                    writes.append(conn)
            except Exception:
                log.exception("room %s: the spectators' tick failed for one", room.code)
        self.write_slice()

    def tick_for(self, member: M, diffs: list[Diff], progress: list[Progress]) -> None:
        """The tick for one spectator not in step: each diff through the per-member
        filter, each progress newer than what it has, in one ``Diffs`` of its own."""
        out: list[Diff] = []
        for diff in diffs:
            self.room.deliver_diff(member, diff, out)
        kept = [p for p in progress if p.moves > member.progress_seen.get(p.seat, -1)]
        for p in kept:
            member.progress_seen[p.seat] = p.moves
        if out or kept:
            member.conn.send_frame(encode(Diffs(diffs=out, progress=kept)))

    def write_slice(self, count: int = TICK_WRITE_SLICE) -> None:
        """Write the frames the next ``count`` spectators hold for the tick (framed once
        for all: ``Connection.write_deferred``) and schedule the rest for the next loop
        iteration, so the players' frames are read and acked between two slices. Once
        the tick is out, the next one is due ``spectator_tick_ms`` later."""
        if self.write_handle is not None:
            self.write_handle.cancel()
            self.write_handle = None
        writes = self.writes
        written = 0
        for _ in range(min(count, len(writes))):
            try:
                written += writes.popleft().write_deferred()
            except Exception:
                log.exception("room %s: a spectator's write failed", self.room.code)
        if written:
            self.metrics.frames_out.inc(written)
        loop = asyncio.get_running_loop()
        if writes:
            self.write_handle = loop.call_soon(self.write_slice)
            return
        self.last = loop.time()  # the tick is out: the next one counts from here
        if self.moves or self.due:
            self.schedule()
