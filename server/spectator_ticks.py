"""The spectators' tick of one room: the moves since the last tick as one ``Diffs`` frame.

A spectator whose hello set ``ds`` gets the room's moves as one ``Diffs`` frame per tick
(every move of the tick, in order, and the latest ``Progress`` per seat) instead of a
``Progress`` and a ``Diff`` per move. The frame is encoded once and framed once for every
spectator *in step* with the room, and written ``TICK_WRITE_SLICE`` connections per loop
callback, so the players' frames are read and acked between two slices. The next tick
counts its ``spectator_tick_ms`` from the last write of the one before. The spectators in
step share one seen-state (the cohort: ``SpectatorTicks``), judged and advanced once per
tick. docs/SERVER.md, "The spectators' tick".

``SpectatorTicks`` owns the tick's state (its moves, its due diffs, its timer, the
connections still holding its frame); what it needs of its room is ``TickRoom``, a
protocol, so this module does not import ``server.room`` (which imports this one).
"""

from __future__ import annotations

import asyncio
import logging
import operator
from collections import deque
from collections.abc import Iterable, Mapping
from itertools import repeat
from typing import Any, Generic, Protocol, TypeVar

from protocol import encode
from protocol.messages import Diff, Diffs, Progress

from . import events as ev
from .config import ServerConfig
from .metrics import Metrics
from .outbound import wire_frame

log = logging.getLogger(__name__)

# Spectators judged and written per loop callback when a tick goes out (``write_slice``):
# between two slices the loop reads the players' frames, so a tick never holds a
# player's ack for more than one slice (~0.25 ms of writes on the bench machine). A move
# takes a few loop iterations to be acked (read, store, ack) and may meet a slice at
# each: 32 rather than 128 brought an honest player's p99 under 1,500 spectators from
# 13-21 ms to 8-9 ms in two runs (docs/SECURITY.md); more callbacks per tick cost a loop
# iteration each (~47 for 1,500 spectators).
TICK_WRITE_SLICE = 32


class Sharing(Protocol):
    """A peer that can take a frame shared by many as the same framed bytes
    (``Outbound.shared_transport``: ``Connection`` can; a peer without it is sent the
    frame through ``send_frame``)."""

    def shared_transport(self, frame: bytes, size: int) -> Any:
        """The transport to write the shared bytes to, or None (``send_frame`` it)."""


class TickMember(Protocol):
    """What the tick reads and advances of a spectator (``room.Member`` is one)."""

    conn: Any  # a ``room.Peer``, ``Sharing`` too if it has ``shared_transport``
    pending: list[Any] | None  # events buffered while it joins; None: live
    boards_hidden: bool
    diff_seen: dict[int, int]
    progress_seen: dict[int, int]
    held: dict[int, dict[int, Diff]]
    filling: set[int]
    cohort: bool  # in the tick's cohort: ``diff_seen``/``progress_seen`` are its shared ones


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


class _Tick:
    """One tick built once for all its spectators: its diffs and progress, and what a
    spectator in step with the room has seen just before it (``SpectatorTicks``)."""

    __slots__ = ("counts_now", "delayed", "diffs", "due", "expect", "firsts", "in_run",
                 "last", "moves", "moves_now", "progress", "seats_now", "shown", "single",
                 "unseen", "withheld", "zeros")

    def __init__(self, moves: list[ev.Moved], due: list[Diff], delayed: int,
                 diffs: list[Diff]) -> None:
        self.moves, self.due, self.delayed, self.diffs = moves, due, delayed, diffs
        latest: dict[int, ev.Moved] = {}
        for moved in moves:
            best = latest.get(moved.seat)
            if best is None or moved.seq > best.seq:
                latest[moved.seat] = moved
        self.progress = [Progress(seat=e.seat, progress=e.progress, moves=e.seq,
                                  status=e.status, clock_ms=e.clock_ms)
                         for e in latest.values()]
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
        self.last, self.in_run = last, in_run
        # in step: each seat's last diff right before the tick's first
        self.expect = {seat: seq - 1 for seat, seq in first.items() if seq > 1}.items()
        self.firsts = [seat for seat, seq in first.items() if seq == 1]  # none seen yet
        self.zeros = [0] * len(self.firsts)
        self.moves_now = {p.seat: p.moves for p in self.progress}
        self.seats_now = list(self.moves_now)
        self.counts_now = list(self.moves_now.values())
        self.unseen = [-1] * len(self.seats_now)
        # One seat's run of diffs with that seat's progress (a live room's tick of one
        # mover; every tick of a paced room): (seat, the diff a spectator in step has
        # seen just before the run, the run's last, the progress's moves). None: the
        # general test for each spectator.
        self.single: tuple[int, int, int, int] | None = None
        if in_run and len(first) == 1 and list(self.moves_now) == list(first):
            (seat, start), = first.items()
            self.single = (seat, start - 1, last[seat], self.moves_now[seat])
        self.shown: tuple[bytes, bytes] | None = None  # for those in step: payload, frame
        self.withheld: tuple[bytes, bytes] | None = None  # the progress alone: the same

    def shown_frame(self) -> tuple[bytes, bytes]:
        """The tick's frame for a spectator in step (its diffs and progress), encoded
        and framed (``wire_frame``) once for all: (payload, websocket frame)."""
        shown = self.shown
        if shown is None:
            payload = encode(Diffs(diffs=self.diffs, progress=self.progress))
            shown = self.shown = (payload, wire_frame(payload))
        return shown

    def withheld_frame(self) -> tuple[bytes, bytes]:
        """The tick's frame for a spectator whose boards are withheld (the progress
        alone), encoded and framed once for all: (payload, websocket frame)."""
        withheld = self.withheld
        if withheld is None:
            payload = encode(Diffs(progress=self.progress))
            withheld = self.withheld = (payload, wire_frame(payload))
        return withheld


class SpectatorTicks(Generic[M]):
    """The spectators' tick of one room (see the module docstring).

    The cohort: the spectators in step with the room share one seen-state, the same two
    dicts as their ``diff_seen`` and ``progress_seen``, so a tick judges and advances it
    once for all of them and then only writes their transports. What holds for each
    member of the cohort (``cohort`` set): live (not joining), boards shown, nothing
    held or being filled, a member of the room, taking ``Diffs``, its two dicts the
    cohort's. Every path that would change one of those (a gap fill, a reveal, a round,
    a join, leaving the room; ``leave``) takes it out of the cohort first, with its own
    copy of the seen-state as of its own last frame. A spectator joins at a tick that
    finds it in step with the cohort's very seen-state after that tick; the first one
    in step founds it. A tick the cohort is not in step with dissolves it."""

    # Spectators in step share one seen-state (False: each judged on its own; the tests
    # compare the two).
    cohorts = True
    # Spectators served per loop callback (tests make it small to leave a tick half out).
    slice = TICK_WRITE_SLICE

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
        # The tick going out (its frames: one, or several of at most
        # ``spectator_frame_max`` moves each) and the spectators still to be served it,
        # slice by slice.
        self.current: list[_Tick] | None = None
        # What the cohort's members are owed of the tick going out: the first frame's
        # payload, the others' payloads, and all of them framed as one run of bytes
        # (``_serve_cohort``); set at the flush that finds the cohort in step.
        self.owed: tuple[bytes, list[bytes], bytes] = (b"", [], b"")
        self.writes: deque[M] = deque()
        self.write_handle: asyncio.Handle | None = None
        # The cohort (class docstring): its members, their shared seen-state (None:
        # no cohort), the state before the tick going out, and the members the tick
        # going out still owes its frame (queued in ``writes``; judged with the cohort).
        self.cohort: dict[M, Any] = {}  # member -> its ``shared_transport``
        self.seen_d: dict[int, int] | None = None
        self.seen_p: dict[int, int] | None = None
        self.before: tuple[dict[int, int], dict[int, int]] = ({}, {})
        self.unserved: dict[M, Any] = {}  # the same, those still owed the tick

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
        for nothing), else when it will have; at once with a full frame's moves
        (``spectator_frame_max``) unless the last tick is still going out: then at its
        last slice, the moves meanwhile one tick of several frames written together; at
        once, the last tick finished first, at ``spectator_tick_max`` moves. The
        interval counts from the last tick's last write, not its start, so however long
        a tick takes to write, the players get the loop for at least as long between
        two ticks (a busy room's spectators get fewer, fuller frames)."""
        held = len(self.moves) + len(self.due)
        config = self.config
        if held >= config.spectator_tick_max or (
                held >= config.spectator_frame_max and not self.writes):
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
        seat. Here the tick is built once for all (``_Tick``) and the spectators queued;
        each is then served ``TICK_WRITE_SLICE`` per loop callback (``write_slice``, the
        first slice now), so the players' frames are read and acked between two slices
        and no callback runs the whole room's member loop. A tick still going out when
        the next is flushed is finished first; a room's other events flush the tick
        first (``Room._on_event``), so they follow its moves."""
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
        spectators = room._grouped()[2]  # a new list at each change: never mutated
        if room.closed or not spectators:
            return
        ticks = self.current = self._frames(moves, due)
        seen_d, seen_p = self.seen_d, self.seen_p
        if seen_d is not None and seen_p is not None:
            before = (dict(seen_d), dict(seen_p))
            if all(self._advance(tick, seen_d, seen_p) for tick in ticks):
                # in step, the whole cohort: its frames are owed to each, served in the
                # room's order with the others, slice by slice
                self.before = before
                self.unserved = self.cohort.copy()
                frames = [tick.shown_frame() for tick in ticks]
                self.owed = (frames[0][0], [payload for payload, _ in frames[1:]],
                             b"".join(wire for _, wire in frames))
            else:  # each judged on its own, as before it joined (and before this tick)
                seen_d.clear()
                seen_d.update(before[0])
                seen_p.clear()
                seen_p.update(before[1])
                self.dissolve()
        self.writes.extend(spectators)
        self.write_slice()

    def _frames(self, moves: list[ev.Moved], due: list[Diff]) -> list[_Tick]:
        """The tick's frames: one ``_Tick`` of every move (and due diff), or, past
        ``spectator_frame_max`` of either, one per run of at most that many, in order
        (each a ``Diffs`` frame as the protocol bounds it; ``_serve`` writes a spectator
        all of them at once)."""
        room = self.room
        delayed = room.delay_ms
        most = self.config.spectator_frame_max
        if len(moves) <= most and len(due) <= most:
            return [_Tick(moves, due, delayed,
                          due if delayed else [room._diff_of(m) for m in moves])]
        ticks = []
        for start in range(0, max(len(moves), len(due)), most):
            part, part_due = moves[start:start + most], due[start:start + most]
            ticks.append(_Tick(part, part_due, delayed,
                               part_due if delayed else [room._diff_of(m) for m in part]))
        return ticks

    @staticmethod
    def _advance(tick: _Tick, seen_d: dict[int, int], seen_p: dict[int, int]) -> bool:
        """Whether a spectator with these filters, live, boards shown, nothing held or
        being filled, is in step with ``tick`` (the shared frame is its); if so the
        filters are advanced past it. The tests of ``_serve`` for such a spectator, in
        the same order."""
        single = tick.single
        if single is not None:
            seat, before, after, count = single
            if seen_d.get(seat, 0) == before and seen_p.get(seat, -1) < count:
                seen_d[seat] = after
                seen_p[seat] = count
                return True
        if any(map(operator.ge, map(seen_p.get, tick.seats_now, tick.unseen),
                   tick.counts_now)):
            return False  # ahead on some seat's progress: the per-member filter
        if (tick.in_run and tick.expect <= seen_d.items()
                and not any(map(seen_d.get, tick.firsts, tick.zeros))):
            seen_d.update(tick.last)
            seen_p.update(tick.moves_now)
            return True
        return False

    def leave(self, member: M) -> None:
        """Take ``member`` out of the cohort (no-op if it is not in it) with a seen-state
        of its own: the cohort's, or the one before the tick going out if that tick's
        frame is still owed to it (it is then judged on its own at its slice, as any
        spectator outside the cohort). Called before anything changes what a member of
        the cohort has seen or may see."""
        if not member.cohort:
            return
        member.cohort = False
        self.cohort.pop(member, None)
        if self.unserved.pop(member, None) is not None:
            seen_d, seen_p = self.before
        else:
            seen_d, seen_p = self.seen_d or {}, self.seen_p or {}
        member.diff_seen, member.progress_seen = dict(seen_d), dict(seen_p)
        if not self.cohort:
            self.seen_d = self.seen_p = None

    def dissolve(self) -> None:
        """Every member out of the cohort (``leave``)."""
        for member in list(self.cohort):
            self.leave(member)
        self.seen_d = self.seen_p = None

    def _join(self, member: M, seen_d: dict[int, int], seen_p: dict[int, int]) -> None:
        """``member``, just served the tick going out as one in step, joins the cohort
        if its seen-state is the cohort's (after this tick too), or founds it. Only a
        connection with the shared path (``Sharing``) joins."""
        shared = getattr(member.conn, "shared_transport", None)
        if shared is None:
            return
        cohort_d, cohort_p = self.seen_d, self.seen_p
        if cohort_d is None or cohort_p is None:
            self.seen_d, self.seen_p = seen_d, seen_p
        elif seen_d == cohort_d and seen_p == cohort_p:
            member.diff_seen, member.progress_seen = cohort_d, cohort_p
        else:
            return
        member.cohort = True
        self.cohort[member] = shared

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

    def write_slice(self, count: int | None = None) -> None:
        """Serve the tick to the next ``count`` spectators queued for it (None: ``slice``,
        ``TICK_WRITE_SLICE``) and schedule the rest for the next loop iteration. The
        cohort's members (class docstring) were judged at the flush: each gets the
        shared frame. Any other spectator in step with the room (live,
        boards shown, no held diff or gap fill, its last diff of each seat just before
        the tick's first) gets the shared frame, encoded once and framed once for all
        (``Outbound.shared_transport``: the same bytes to each transport that can take
        them, written in one burst after the slice's tests; a backed-up one is sent the
        frame the usual way, queued within its bounds or cut as a slow consumer), and
        its sequence filters advance in one step; one whose boards are withheld gets
        the progress alone (one shared frame too); any other one goes through the
        per-member filter (``tick_for``) into a frame of its own; one still joining has
        the moves buffered with its other events. Each spectator outside the cohort is
        judged when its slice runs, on its state then (one in step may join the
        cohort there); one taken out of the cohort before its slice is judged so too,
        on its state before the tick. Once the tick is out, the next is due ``spectator_tick_ms``
        later."""
        if self.write_handle is not None:
            self.write_handle.cancel()
            self.write_handle = None
        writes = self.writes
        ticks = self.current
        if count is None:
            count = self.slice
        if ticks is None:  # nothing queued (the room went while a tick was going out)
            writes.clear()
            self.unserved.clear()
        else:
            self._serve(ticks, [writes.popleft() for _ in range(min(count, len(writes)))])
        loop = asyncio.get_running_loop()
        if writes:
            self.write_handle = loop.call_soon(self.write_slice)
            return
        self.current = None
        self.last = loop.time()  # the tick is out: the next one counts from here
        if self.moves or self.due:
            self.schedule()

    def _serve(self, ticks: list[_Tick], batch: list[M]) -> None:
        """The tick going out (its frames, ``ticks``: almost always one) to each
        spectator of ``batch`` (see ``write_slice``): first the members of the cohort
        still owed it (``_serve_cohort``), then every other one, frame after frame
        (``_serve_tick``), which may join the cohort only at the last frame (the
        cohort's seen-state is past all of them)."""
        if self.unserved:
            batch = self._serve_cohort(batch, len(ticks))
        if not batch:
            return
        last = len(ticks) - 1
        for i, tick in enumerate(ticks):
            self._serve_tick(tick, batch, join=i == last)

    def _serve_cohort(self, batch: list[M], frames: int) -> list[M]:
        """Each member of the cohort in ``batch`` still owed the tick going out: judged
        in step with it at the flush and its seen-state advanced there, so nothing is
        tested but its connection (``shared_transport``), and all the tick's frames go
        to it as one run of bytes (``owed``), in the slice's burst of writes. Returns
        the spectators of ``batch`` outside the cohort, in order."""
        owed = self.unserved.pop
        first, more, wire = self.owed
        size = len(wire)
        others: list[M] = []
        ready: list[Any] = []  # transports taking the shared bytes
        for member in batch:
            shared = owed(member, None)
            if shared is None:
                others.append(member)
                continue
            try:
                transport = shared(first, size, more)
                if transport is not None:
                    ready.append(transport)
                else:  # framed for it, or queued: counted when written
                    member.conn.send_frame(first)
                    for payload in more:
                        member.conn.send_frame(payload)
            except Exception:
                log.exception("room %s: the spectators' tick failed for one", self.room.code)
        if ready:
            self._burst(ready, repeat(wire), frames)
        return others

    def _burst(self, transports: list[Any], wires: Iterable[bytes], frames: int) -> None:
        """Write each of ``wires`` to its transport, in one burst after the slice's
        tests, as the plainest broadcast loop does (fewer wake-ups of the readers than
        writes interleaved with the tests: ~0.7 µs per frame less); count ``frames``
        per write in ``frames_out``."""
        written = 0
        for transport, wire in zip(transports, wires, strict=False):  # (``repeat``: endless)
            try:
                transport.write(wire)
            except Exception:  # the transport is closing under us: its reader sees it
                log.debug("room %s: a spectator's write failed", self.room.code,
                          exc_info=True)
                continue
            written += frames
        if written:
            self.metrics.frames_out.inc(written)

    def _serve_tick(self, tick: _Tick, batch: list[M], join: bool = True) -> None:
        """One frame of the tick to each spectator of ``batch``, none of them a member
        of the cohort still owed it (``_serve``). This loop is per spectator, per tick,
        so it does the least it can there: a tick of one seat's run of moves (a paced
        room's every tick) first tries the in-step test of that seat alone, a few dict
        reads; the general tests run in C where they can (a dict-items subset test,
        ``map``); a spectator in step costs one call more (``Outbound.shared_transport``:
        attribute checks) and the tick's shared bytes, framed once, go to the slice's
        transports in one burst of writes after the tests (``_burst``)."""
        room = self.room
        members = room.members
        expect, firsts, zeros = tick.expect, tick.firsts, tick.zeros
        seats_now, counts_now, unseen = tick.seats_now, tick.counts_now, tick.unseen
        moves_now, last, in_run = tick.moves_now, tick.last, tick.in_run
        single = tick.single
        seat, before, after, count = single if single is not None else (0, 0, 0, 0)
        ready: list[Any] = []  # transports taking the shared bytes, and those bytes
        wires: list[bytes] = []
        # joining the cohort: off in the tests' oracle (none ever forms), and before the
        # last frame of a tick of several
        cohorts = self.cohorts and join
        for member in batch:
            conn = member.conn
            if members.get(conn) is not member:
                continue  # it left meanwhile
            try:
                seen_d = member.diff_seen
                seen_p = member.progress_seen
                if (single is not None and member.pending is None
                        and not member.boards_hidden and not member.filling
                        and seen_d.get(seat, 0) == before
                        and seen_p.get(seat, -1) < count
                        and (not member.held or not any(member.held.values()))):
                    # in step, the general tests below would say so too
                    seen_d[seat] = after
                    seen_p[seat] = count
                    frame, wire = tick.shown_frame()
                    if cohorts:
                        self._join(member, seen_d, seen_p)
                elif member.pending is not None:
                    for moved in tick.moves:
                        room._hold_pending(member, moved)
                    if tick.delayed:
                        for diff in tick.due:
                            room._hold_pending(member, diff)
                    continue
                # ahead: it already has a seat's progress as of this tick (from the log)
                elif any(map(operator.ge, map(seen_p.get, seats_now, unseen), counts_now)):
                    self.tick_for(member, tick.diffs, tick.progress)
                    continue
                elif member.boards_hidden:
                    seen_p.update(moves_now)
                    if not tick.progress:
                        continue
                    frame, wire = tick.withheld_frame()
                elif (in_run and expect <= seen_d.items() and not member.filling
                      and not any(member.held.values())
                      and not any(map(seen_d.get, firsts, zeros))):
                    seen_d.update(last)
                    seen_p.update(moves_now)
                    frame, wire = tick.shown_frame()
                    if cohorts:
                        self._join(member, seen_d, seen_p)
                else:
                    self.tick_for(member, tick.diffs, tick.progress)
                    continue
                shared = getattr(conn, "shared_transport", None)
                transport = None if shared is None else shared(frame, len(wire))
                if transport is not None:
                    ready.append(transport)  # the shared bytes, written after the tests
                    wires.append(wire)
                else:
                    conn.send_frame(frame)  # framed for it, or queued: counted when written
            except Exception:
                log.exception("room %s: the spectators' tick failed for one", room.code)
        if ready:
            self._burst(ready, wires, 1)
