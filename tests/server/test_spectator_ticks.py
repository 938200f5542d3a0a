"""The spectators' tick serves its spectators slice by slice (``SpectatorTicks``): no
loop callback judges more than ``TICK_WRITE_SLICE`` of them, and each is judged on its
state when its slice runs (one that left gets nothing, one that started joining has the
moves buffered, one that fell out of step goes through its own filter)."""

from __future__ import annotations

from typing import Any

import pytest

from server import events as ev
from server import spectator_ticks
from server.room import Member, Room
from server.spectator_ticks import TICK_WRITE_SLICE

from .test_buffers import START_MS, BatchedPeer, _expected, _room, _settle
from .test_shared_frames import SharingPeer, _run_slices


async def _watched(moves: int, spectators: int) -> tuple[Room, list[Member], list[ev.Moved]]:
    now = [START_MS]
    room, _, events = await _room(now, moves)
    members = [Member(SharingPeer(f"w{i}"), 0, pending=None) for i in range(spectators)]
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
    joining.pending = []  # its boards are being read again (as ``RoomBoards.start_showing`` does)
    behind.held = {1: {}}
    behind.filling = {1}  # a gap of its own is being filled from the log
    _run_slices(room)
    assert gone.conn.sent == []  # type: ignore[attr-defined]
    assert joining.conn.sent == []  # type: ignore[attr-defined]
    assert joining.pending == events  # the tick's moves, buffered with its other events
    # out of step: the per-member filter, one frame of its own with the same diffs
    assert behind.conn.diffs() == _expected(events, 1, 3)  # type: ignore[attr-defined]
    assert steady.conn.diffs() == _expected(events, 1, 3)  # type: ignore[attr-defined]


# Spectator states around a tick of seat 1's moves 3 and 4 (or 1 and 2: ``start``):
# in step, ahead on progress, behind, partly covered, never seen, holding, filling,
# boards withheld, joining.
STATES: list[dict[str, Any]] = [
    {"diff_seen": {1: 2}},
    {"diff_seen": {1: 2}, "progress_seen": {1: 3}},
    {"diff_seen": {1: 2}, "progress_seen": {1: 4}},
    {"diff_seen": {1: 1}},
    {"diff_seen": {1: 3}, "progress_seen": {1: 3}},
    {"diff_seen": {}},
    {"diff_seen": {1: 2}, "held": {1: {}}},
    {"diff_seen": {1: 2}, "filling": {1}},
    {"diff_seen": {1: 2}, "boards_hidden": True},
    {"diff_seen": {1: 2}, "pending": []},
]
FROM_ONE: list[dict[str, Any]] = [{"diff_seen": {}}, {"diff_seen": {1: 0}}, {"diff_seen": {1: 1}},
                                  {"diff_seen": {}, "progress_seen": {1: 2}}]


async def _served(state: dict[str, Any], start: int, general: bool,
                  monkeypatch: pytest.MonkeyPatch) -> tuple[Any, ...]:
    """What a spectator in ``state`` is sent for a tick of moves ``start`` and
    ``start + 1`` (gap fills from the log included), and its state after."""
    if general:  # every spectator through the general tests, as a tick of two seats is
        real = spectator_ticks._Tick.__init__

        def no_single(self: Any, *args: Any) -> None:
            real(self, *args)
            self.single = None

        monkeypatch.setattr(spectator_ticks._Tick, "__init__", no_single)
    now = [START_MS]
    room, _, events = await _room(now, start + 1)
    state = {k: (dict(v) if isinstance(v, dict) else v) for k, v in state.items()}
    member = Member(BatchedPeer("w"), 0, **{"pending": None, **state})
    room.attach(member)
    room._ticks.moves = events[start - 1:start + 1]
    room._ticks.flush()
    _run_slices(room)
    await _settle(room)
    monkeypatch.undo()
    conn = member.conn
    return (conn.sent, conn.diffs(), member.diff_seen, member.progress_seen,  # type: ignore[attr-defined]
            member.pending, member.held)


@pytest.mark.parametrize("start, state",
                         [(3, s) for s in STATES] + [(1, s) for s in FROM_ONE])
async def test_a_one_seat_tick_serves_each_spectator_as_the_general_tests_would(
        start: int, state: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    fast = await _served(state, start, False, monkeypatch)
    general = await _served(state, start, True, monkeypatch)
    assert fast == general
