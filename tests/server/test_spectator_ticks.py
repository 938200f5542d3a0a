"""The spectators' tick serves its spectators slice by slice (``SpectatorTicks``): no
loop callback judges more than ``TICK_WRITE_SLICE`` of them, and each is judged on its
state when its slice runs (one that left gets nothing, one that started joining has the
moves buffered, one that fell out of step goes through its own filter)."""

from __future__ import annotations

from server import events as ev
from server.room import Member, Room
from server.spectator_ticks import TICK_WRITE_SLICE

from .test_buffers import START_MS, _expected, _room
from .test_shared_frames import DeferringPeer, _run_slices


async def _watched(moves: int, spectators: int) -> tuple[Room, list[Member], list[ev.Moved]]:
    now = [START_MS]
    room, _, events = await _room(now, moves)
    members = [Member(DeferringPeer(f"w{i}"), 0, pending=None) for i in range(spectators)]
    for member in members:
        room.attach(member)
    for event in events:
        await room._on_event(ev.encode_event(event))
    return room, members, events


async def test_a_flush_judges_one_slice_of_spectators_and_leaves_the_rest() -> None:
    room, members, events = await _watched(3, 2 * TICK_WRITE_SLICE + 5)
    room._ticks.flush()
    # the filters of the first slice advanced; the others' wait for their own callbacks
    advanced = [m.diff_seen.get(1, 0) for m in members]
    assert advanced == [3] * TICK_WRITE_SLICE + [0] * (TICK_WRITE_SLICE + 5)
    _run_slices(room)
    assert [m.diff_seen[1] for m in members] == [3] * len(members)
    for member in members:
        assert member.conn.diffs() == _expected(events, 1, 3)  # type: ignore[attr-defined]


async def test_a_spectator_is_judged_on_its_state_when_its_slice_runs() -> None:
    room, members, events = await _watched(3, TICK_WRITE_SLICE + 3)
    room._ticks.flush()
    gone, joining, behind, steady = members[-3], members[-2], members[-1], members[0]
    room.detach(gone.conn)
    joining.pending = []  # its boards are being read again (as ``_start_showing`` does)
    behind.held = {1: {}}
    behind.filling = {1}  # a gap of its own is being filled from the log
    _run_slices(room)
    assert gone.conn.sent == []  # type: ignore[attr-defined]
    assert joining.conn.sent == []  # type: ignore[attr-defined]
    assert joining.pending == events  # the tick's moves, buffered with its other events
    # out of step: the per-member filter, one frame of its own with the same diffs
    assert behind.conn.diffs() == _expected(events, 1, 3)  # type: ignore[attr-defined]
    assert steady.conn.diffs() == _expected(events, 1, 3)  # type: ignore[attr-defined]
