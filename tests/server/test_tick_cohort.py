"""The spectators in step share one seen-state (``SpectatorTicks``' cohort), and a
spectator in the cohort or leaving it gets exactly the frames it would get outside any
cohort.

The oracle is the per-spectator path itself, with the cohort switched off
(``SpectatorTicks.cohorts``): the same sequence of events (moves, lost moves filled from
the log, ticks and their slices, backed-up transports, spectators joining, revealed,
leaving) is run on two rooms alike but for the switch, and every spectator's decoded
frames and final filters must be equal. Independently of both, a spectator there from
the start gets every diff of every seat once, in order, as the engine played them, and
every seat's progress in increasing order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.messages import Diffs, Progress
from server import events as ev
from server.config import ServerConfig
from server.metrics import Metrics
from server.room import Member, Room
from server.spectator_ticks import TICK_WRITE_SLICE
from server.store.memory import MemoryStore
from server.store.records import LogEntry, RoomRecord, SeatRecord

from .test_buffers import START_MS, Peer, _moves, _settle
from .test_shared_frames import SharingPeer, _connection, _parsed

SEATS = (1, 2)
MOVES = 12  # per seat


class Watcher(SharingPeer):
    """A spectator taking ``Diffs`` whose transport can be backed up (``backed``: the
    tick's shared bytes cannot go straight to it, ``send_frame`` takes them)."""

    backed = False

    def shared_transport(self, frame: bytes, size: int, more: Sequence[bytes] = ()) -> Any:
        return None if self.backed else super().shared_transport(frame, size, more)


async def _race(delay_s: int = 0, **config: Any
                ) -> tuple[Room, dict[int, list[ev.Moved]], list[int]]:
    """A running Spanish room of two seats, each with ``MOVES`` moves in the store (the
    same lasting moves of the same deal; race clock = seq ms), the events announcing
    them by seat, and the injected clock. The tick's own timer never fires (a tick is
    flushed by the test's steps, or at once after a quiet spell): a 16 ms timer would
    fire or not during a step depending on how fast the machine ran the steps before it,
    and the runs compared would then cut their ticks differently."""
    config.setdefault("spectator_tick_ms", 10**9)
    now = [START_MS]
    store = MemoryStore()
    record = RoomRecord(code="COHO", settings={"v": "spanish", "o": {}, "sd": delay_s},
                        seed=7, salt="00", commitment="c", start_ms=START_MS)
    await store.create_room(record)
    for _ in SEATS:
        await store.add_seat("COHO", SeatRecord(seat=0, name="p"), len(SEATS))
    await store.set_phase("COHO", "lobby", "running")
    events: dict[int, list[ev.Moved]] = {seat: [] for seat in SEATS}
    for seq, (move, state_hash, revealed) in enumerate(_moves(MOVES), 1):
        for seat in SEATS:
            await store.append_move("COHO", seat, 1, seq, LogEntry(move, seq), moves=seq)
            events[seat].append(ev.Moved(seat, seq, move, state_hash, seq, list(revealed), 0,
                                         "playing"))
    host = SimpleNamespace(config=ServerConfig(clock=lambda: now[0], **config), store=store,
                           metrics=Metrics())
    room = Room(host, await store.get_room("COHO"))  # type: ignore[arg-type]
    room.cards.racing, room.cards.down = set(SEATS), {seat: 0 for seat in SEATS}  # all face up
    return room, events, now


# One step of a run (``_play``): a kind and a number (a seat: 1 + n % 2; a spectator: n).
# Moves, ticks and slices often (so that cohorts form and ticks are left half out), the
# rest now and then.
KINDS = (["move"] * 8 + ["flush"] * 4 + ["slice"] * 4
         + ["settle", "lose", "backed", "leave", "join", "ready", "hidden", "fill"])
STEPS = st.tuples(st.sampled_from(KINDS), st.integers(0, 5))
# move: the seat's next event; lose: its event never comes (a gap, filled from the log);
# settle: the room's tasks run (gap fills, reveals); backed: its transport backs up, or
# drains; hidden: a spectator told hidden joins (revealed at the next event); fill: a
# gap of seat 2 filled (as a delayed room's lost diff falling due).


async def _play(steps: list[tuple[str, int]], cohorts: bool, spectators: int, size: int,
                frame_max: int = 256, tick_max: int = 1024
                ) -> tuple[list[Any], Room, dict[int, list[ev.Moved]], dict[int, int],
                           set[int]]:
    """Run ``steps`` on a fresh room; per spectator (in the order they came) what it was
    sent, its filters and closes. Also the room, the events, the highest seq delivered
    per seat and the spectators that left. ``frame_max``, ``tick_max``:
    ``spectator_frame_max`` and ``spectator_tick_max`` (small: full ticks come while
    others are going out, ticks of several frames, ticks finished at once)."""
    room, events, _ = await _race(spectator_frame_max=frame_max, spectator_tick_max=tick_max)
    room._ticks.cohorts = cohorts
    room._ticks.slice = size  # a tick left half out between two steps
    watchers: list[tuple[Watcher, Member]] = []
    for i in range(spectators):
        peer = Watcher(f"w{i}")
        member = Member(peer, 0, pending=None)
        room.attach(member)
        watchers.append((peer, member))
    next_seq = {seat: 1 for seat in SEATS}  # the next event of each seat
    delivered = {seat: 0 for seat in SEATS}
    joining: list[tuple[Member, dict[int, int]]] = []
    left: set[int] = set()
    for kind, arg in steps:
        if kind in ("move", "lose"):
            arg = SEATS[arg % 2]
            seq = next_seq[arg]
            if seq > MOVES:
                continue
            next_seq[arg] = seq + 1
            if kind == "move":
                delivered[arg] = seq
                await room._on_event(ev.encode_event(events[arg][seq - 1]))
        elif kind == "flush":
            room._ticks.flush()
        elif kind == "slice":
            if room._ticks.writes:
                room._ticks.write_slice()
        elif kind == "settle":
            await _settle(room)
        elif kind == "backed":
            if arg < len(watchers):
                peer = watchers[arg][0]
                peer.backed = not peer.backed
        elif kind == "leave":
            if 0 < arg < len(watchers) and arg not in left:
                left.add(arg)
                room.detach(watchers[arg][0])
        elif kind == "join":
            peer = Watcher(f"w{len(watchers)}")
            member = Member(peer, 0)  # pending: its Joined is being built
            room.attach(member)
            watchers.append((peer, member))
            # its snapshot: every move of the log so far (lost ones too)
            joining.append((member, {seat: n - 1 for seat, n in next_seq.items()}))
        elif kind == "ready":
            if joining:
                member, snapshot = joining.pop(0)
                member.diff_seen.update(snapshot)
                room.ready(member)
        elif kind == "fill":
            if arg < len(watchers) and delivered[2]:
                member = watchers[arg][1]
                if member.pending is None and not member.boards_hidden:
                    room._diffs.fill_to(member, 2, delivered[2])  # as a lost one due
        elif kind == "hidden":
            peer = Watcher(f"w{len(watchers)}")
            member = Member(peer, 0, pending=None, boards_hidden=True)
            room.attach(member)
            watchers.append((peer, member))
    for _ in range(3):  # the last tick out, fills done, the frames they led to out
        room._ticks.flush()
        while room._ticks.writes:
            room._ticks.write_slice()
        await _settle(room)
    out = [(peer.sent, dict(member.diff_seen), dict(member.progress_seen), peer.closed_with,
            member.pending) for peer, member in watchers]
    return out, room, events, delivered, left


def _diffs_by_seat(sent: list[Any]) -> dict[int, list[tuple[int, str, int]]]:
    out: dict[int, list[tuple[int, str, int]]] = {seat: [] for seat in SEATS}
    for message in sent:
        diffs = message.diffs if isinstance(message, Diffs) else [message]
        for d in diffs:
            if hasattr(d, "move"):
                out[d.seat].append((d.seq, d.move, d.hash))
    return out


def _progress_by_seat(sent: list[Any]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {seat: [] for seat in SEATS}
    for message in sent:
        for p in message.progress if isinstance(message, Diffs) else [message]:
            if isinstance(p, Progress):
                out[p.seat].append(p.moves)
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(STEPS, min_size=20, max_size=80), spectators=st.integers(2, 8),
       size=st.integers(1, 2),
       limits=st.sampled_from([(2, 2), (3, 3), (2, 5), (3, 7), (1, 4), (256, 1024)]))
def test_a_spectator_gets_the_same_frames_with_or_without_the_cohort(
        steps: list[tuple[str, int]], spectators: int, size: int,
        limits: tuple[int, int]) -> None:
    frame_max, tick_max = limits  # moves a frame holds; moves a tick holds
    async def run() -> tuple[Any, ...]:
        with_cohort = await _play(steps, True, spectators, size, frame_max, tick_max)
        without = await _play(steps, False, spectators, size, frame_max, tick_max)
        return with_cohort, without

    (got, room, events, delivered, left), (expected, plain, _, _, _) = asyncio.run(run())
    assert plain._ticks.cohort == {}  # the oracle never formed one
    assert got == expected
    for i, (sent, *_rest) in enumerate(got[:spectators]):
        if i in left:
            continue
        # every diff once, in order, as the engine played it (lost ones from the log)
        by_seat = _diffs_by_seat(sent)
        for seat in SEATS:
            assert by_seat[seat] == [(e.seq, e.move, e.hash) for e in events[seat]
                                     if e.seq <= delivered[seat]]
    for sent, *_rest in got:
        for moves in _progress_by_seat(sent).values():
            assert moves == sorted(set(moves))  # increasing: none twice, none back
        for message in sent:  # never more moves in a frame than the protocol's bound
            if isinstance(message, Diffs):
                assert len([d for d in message.diffs if hasattr(d, "move")]) <= frame_max
    # what the cohort holds is what each of its members would hold on its own
    for member in room._ticks.cohort:
        assert member.cohort and member.pending is None and not member.boards_hidden
        assert member.diff_seen is room._ticks.seen_d
        assert member.progress_seen is room._ticks.seen_p


async def _steady(count: int, ticks: int) -> tuple[Room, list[Member], dict[int, list[ev.Moved]]]:
    room, events, _ = await _race()
    members = [Member(Watcher(f"w{i}"), 0, pending=None) for i in range(count)]
    for member in members:
        room.attach(member)
    for seq in range(1, ticks + 1):
        await room._on_event(ev.encode_event(events[1][seq - 1]))
        room._ticks.flush()
        while room._ticks.writes:
            room._ticks.write_slice()
    return room, members, events


async def test_spectators_in_step_come_to_share_one_seen_state() -> None:
    count = 2 * TICK_WRITE_SLICE + 3
    room, members, events = await _steady(count, 3)
    ticks = room._ticks
    assert len(ticks.cohort) == count
    assert all(m.diff_seen is ticks.seen_d and m.progress_seen is ticks.seen_p
               for m in members)
    assert ticks.seen_d == {1: 3} and ticks.seen_p == {1: 3}
    # a tick for the cohort: judged and advanced once, at the flush; its frame is owed
    # to each member slice by slice
    await room._on_event(ev.encode_event(events[1][3]))
    ticks.flush()
    assert ticks.seen_d == {1: 4}
    assert len(ticks.unserved) == count - TICK_WRITE_SLICE
    while ticks.writes:
        ticks.write_slice()
    assert not ticks.unserved
    for member in members:
        assert [[d.seq for d in f.diffs] for f in member.conn.sent] == [[1], [2], [3], [4]]


async def test_one_leaving_before_its_slice_is_judged_on_its_own_state_before_the_tick(
) -> None:
    count = TICK_WRITE_SLICE + 2
    room, members, events = await _steady(count, 2)
    last = members[-1]
    await room._on_event(ev.encode_event(events[1][2]))  # seat 1's move 3
    room._ticks.flush()  # the first slice out; ``last`` is still owed the tick
    room._diffs.fill_to(last, 2, 1)  # a gap of seat 2 to fill from the log
    assert not last.cohort and last.diff_seen == {1: 2}  # the state before the tick
    assert last.diff_seen is not room._ticks.seen_d
    while room._ticks.writes:
        room._ticks.write_slice()
    await _settle(room)
    # its own frame (the per-member filter: it was filling), then seat 2's move 1
    frames = last.conn.sent  # type: ignore[attr-defined]
    assert [type(f).__name__ for f in frames][-2:] == ["Diffs", "Diff"]
    assert [(d.seat, d.seq) for d in frames[-2].diffs] == [(1, 3)]
    assert (frames[-1].seat, frames[-1].seq) == (2, 1)
    assert last.diff_seen == {1: 3, 2: 1} and room._ticks.seen_d == {1: 3}
    assert len(room._ticks.cohort) == count - 1


async def test_a_new_round_or_a_reveal_takes_every_member_out_first() -> None:
    room, members, _ = await _steady(5, 2)
    shared = room._ticks.seen_d
    room._boards.start_showing(members[0])
    assert not members[0].cohort and members[0].diff_seen == shared
    assert members[0].diff_seen is not shared
    room._begin_round(2)
    assert room._ticks.cohort == {} and room._ticks.seen_d is None
    assert all(not m.cohort and m.diff_seen == {1: 2} for m in members)
    assert len({id(m.diff_seen) for m in members}) == len(members)
    for task in list(room._tasks):
        task.cancel()


async def test_a_withheld_spectator_never_joins_and_never_gets_a_diff() -> None:
    room, events, _ = await _race()
    shown = [Member(Watcher(f"w{i}"), 0, pending=None) for i in range(3)]
    hidden = Member(Watcher("h"), 0, pending=None, boards_hidden=True)
    room._boards.reveal_scan = False  # nothing reveals it in this test (the room shows boards)
    for member in [*shown, hidden]:
        room.attach(member)
    room._boards.reveal_scan = False
    for seq in range(1, 5):
        await room._on_event(ev.encode_event(events[1][seq - 1]))
        room._boards.reveal_scan = False
        room._ticks.flush()
        while room._ticks.writes:
            room._ticks.write_slice()
    assert len(room._ticks.cohort) == 3 and not hidden.cohort
    assert all(not f.diffs for f in hidden.conn.sent)  # type: ignore[attr-defined]
    assert [p.moves for f in hidden.conn.sent for p in f.progress] == [1, 2, 3, 4]  # type: ignore[attr-defined]


async def _slow_consumer_run(cohorts: bool) -> list[Any]:
    """Three real connections in a cohort; one's transport backs up past
    ``max_outbound_bytes`` and it is cut as a slow consumer, then leaves."""
    room, events, _ = await _race()
    room._ticks.cohorts = cohorts
    conns = [_connection(max_outbound_bytes=4096) for _ in range(3)]
    for conn, _ws in conns:
        conn.batched = True
        room.attach(Member(conn, 0, pending=None))
    for seq in range(1, 7):
        if seq == 3:
            conns[1][1].transport.buffered = 5000  # it stopped reading
        await room._on_event(ev.encode_event(events[1][seq - 1]))
        room._ticks.flush()
        while room._ticks.writes:
            room._ticks.write_slice()
        if seq == 4:
            room.detach(conns[1][0])
    out = []
    for conn, ws in conns:
        out.append(([f.data for f in _parsed(bytes(ws.transport.data))], ws.sent,
                    conn._closing))
        if conn._writer_task is not None:
            conn._writer_task.cancel()
    return out


async def test_a_slow_consumer_in_the_cohort_is_cut_as_it_would_be_outside() -> None:
    got = await _slow_consumer_run(True)
    assert got == await _slow_consumer_run(False)
    assert got[1][2] is not None and got[1][2][0].name == "SLOW_CONSUMER"
    assert len(got[0][0]) == 6 and got[0][0] == got[2][0]  # the others: every tick


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(st.sampled_from(["move1", "move2", "fire", "flush", "slice", "slice",
                                       "later", "settle"]), min_size=20, max_size=60),
       spectators=st.integers(2, 5), size=st.integers(1, 2))
def test_a_delayed_room_serves_the_same_frames_with_or_without_the_cohort(
        steps: list[str], spectators: int, size: int) -> None:
    """A delayed room (5 s) whose delay buffer holds 3 diffs: the others are filled from
    the log when due (``SpectatorDelay.fire``: every spectator leaves the cohort)."""

    async def play(cohorts: bool) -> list[Any]:
        room, events, now = await _race(delay_s=5, delay_buffer_max=3)
        room._ticks.cohorts = cohorts
        room._ticks.slice = size
        peers = [Watcher(f"w{i}") for i in range(spectators)]
        for peer in peers:
            room.attach(Member(peer, 0, pending=None))
        nxt = {1: 0, 2: 0}
        for step in steps:
            if step.startswith("move"):
                seat = int(step[-1])
                if nxt[seat] < MOVES:
                    await room._on_event(ev.encode_event(events[seat][nxt[seat]]))
                    nxt[seat] += 1
            elif step == "fire":
                room._delay.fire()
            elif step == "later":
                now[0] += 1_700  # the race clock is seq ms: ~1 s on is none yet, 6 s all
            elif step == "flush":
                room._ticks.flush()
            elif step == "slice":
                if room._ticks.writes:
                    room._ticks.write_slice()
            else:
                await _settle(room)
        now[0] += 10_000
        for _ in range(3):
            room._delay.fire()
            room._ticks.flush()
            while room._ticks.writes:
                room._ticks.write_slice()
            await _settle(room)
        room._delay.drop()
        return [peer.sent for peer in peers]

    async def run() -> tuple[list[Any], list[Any]]:
        return await play(True), await play(False)

    got, expected = asyncio.run(run())
    assert got == expected


def test_the_watcher_stand_in_takes_the_usual_path_when_backed_up() -> None:
    peer = Watcher("w")
    assert peer.shared_transport(b"x", 3) is not None
    peer.backed = True
    assert peer.shared_transport(b"x", 3) is None
    assert isinstance(peer, Peer)
