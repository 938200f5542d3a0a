"""A full spectators' tick that comes while the last one is still going out waits for
that one's last slice; it does not make the rest of the last one go out in one loop
callback (at saturation that held every player's frame for 10-15 ms, docs/BENCHMARKS.md).
A second full tick meanwhile is the bound: the two ahead of it go out at once.

Expected frames come from the events the test feeds (seat 1's moves by sequence), not
from the tick's code: each spectator gets every move once, in order, in frames of at most
``spectator_tick_max`` moves, and the ticks in the order their moves came.
"""

from __future__ import annotations

from protocol.messages import Diffs
from server import events as ev
from server.room import Member

from .test_tick_cohort import Watcher, _race

MAX = 2  # spectator_tick_max: a tick is full at two moves
SPECTATORS = 3


async def _room_with_a_tick_going_out() -> tuple[object, list[Watcher], list[ev.Moved]]:
    """A running room, three spectators taking ``Diffs``, one spectator per slice, and
    seat 1's first move's tick going out: served to the first spectator only."""
    room, events, _ = await _race(spectator_tick_max=MAX)
    ticks = room._ticks
    ticks.slice = 1
    peers = [Watcher(f"w{i}") for i in range(SPECTATORS)]
    for peer in peers:
        room.attach(Member(peer, 0, pending=None))
    await room._on_event(ev.encode_event(events[1][0]))
    ticks.flush()
    assert [len(p.sent) for p in peers] == [1, 0, 0]
    assert len(ticks.writes) == SPECTATORS - 1
    return room, peers, events[1]


def _ticks_seen(peer: Watcher) -> list[list[int]]:
    """The seat-1 sequences of each ``Diffs`` frame the spectator got, in order."""
    return [[d.seq for d in message.diffs if d.seat == 1]
            for message in peer.sent if isinstance(message, Diffs)]


async def test_a_full_tick_waits_for_the_last_slice_of_the_one_going_out() -> None:
    room, peers, moves = await _room_with_a_tick_going_out()
    ticks = room._ticks  # type: ignore[attr-defined]
    for moved in moves[1:3]:  # seq 2 and 3: a full tick while the first is going out
        await room._on_event(ev.encode_event(moved))  # type: ignore[attr-defined]
    # nothing written at once: the two spectators still owed the first tick wait for
    # their slices, the full tick waits behind them
    assert [len(p.sent) for p in peers] == [1, 0, 0]
    assert len(ticks.writes) == SPECTATORS - 1
    slices = 0
    while ticks.writes:
        assert ticks.write_handle is not None  # the rest is a loop callback's
        ticks.write_slice()
        slices += 1
    # 2 slices to finish the first tick, then the full one: its first slice went out at
    # the first tick's last, 2 more for the others
    assert slices == 2 + (SPECTATORS - 1)
    for peer in peers:
        assert _ticks_seen(peer) == [[1], [2, 3]]


async def test_a_second_full_tick_meanwhile_finishes_the_two_ahead_at_once() -> None:
    room, peers, moves = await _room_with_a_tick_going_out()
    ticks = room._ticks  # type: ignore[attr-defined]
    for moved in moves[1:5]:  # seq 2-5: two full ticks while the first is going out
        await room._on_event(ev.encode_event(moved))  # type: ignore[attr-defined]
    # the bound: at most two ticks' moves wait; the second full one finished the two
    # ahead of it at once, and goes out itself (its first slice now)
    assert ticks.sealed is None and not ticks.moves
    for peer in peers[1:]:
        assert _ticks_seen(peer) == [[1], [2, 3]]
    assert len(ticks.writes) == SPECTATORS - 1
    while ticks.writes:
        ticks.write_slice()
    for peer in peers:
        assert _ticks_seen(peer) == [[1], [2, 3], [4, 5]]


async def test_an_event_after_a_waiting_full_tick_follows_its_moves() -> None:
    room, peers, moves = await _room_with_a_tick_going_out()
    ticks = room._ticks  # type: ignore[attr-defined]
    for moved in moves[1:4]:  # seq 2 and 3 wait as a full tick, seq 4 after them
        await room._on_event(ev.encode_event(moved))  # type: ignore[attr-defined]
    assert ticks.sealed is not None and len(ticks.moves) == 1
    ticks.flush()  # what another event of the room does first (Room._send_event)
    while ticks.writes:
        ticks.write_slice()
    for peer in peers:
        assert _ticks_seen(peer) == [[1], [2, 3], [4]]
