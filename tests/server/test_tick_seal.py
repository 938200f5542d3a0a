"""A full spectators' tick that comes while the last one is still going out waits for
that one's last slice; it does not make the rest of the last one go out in one loop
callback (at saturation that held every player's frame for 10-15 ms, docs/BENCHMARKS.md).
While full ticks wait, each slice serves one slice more per waiting tick; one full tick
past ``spectator_ticks_waiting`` is the bound: the ticks ahead of it go out at once.

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


async def _room_with_a_tick_going_out(waiting: int = 4
                                      ) -> tuple[object, list[Watcher], list[ev.Moved]]:
    """A running room, three spectators taking ``Diffs``, one spectator per slice, and
    seat 1's first move's tick going out: served to the first spectator only.
    ``waiting``: ``spectator_ticks_waiting``."""
    room, events, _ = await _race(spectator_tick_max=MAX, spectator_ticks_waiting=waiting)
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
    # the first tick's next slice serves two spectators (one more per waiting tick):
    # it is out, and the full one goes out at once (its first slice)
    assert ticks.write_handle is not None  # the rest is a loop callback's
    ticks.write_slice()
    assert not ticks.waiting
    assert [_ticks_seen(p) for p in peers] == [[[1], [2, 3]], [[1]], [[1]]]
    slices = 0
    while ticks.writes:
        assert ticks.write_handle is not None
        ticks.write_slice()
        slices += 1
    assert slices == SPECTATORS - 1  # nothing waits now: one spectator a slice again
    for peer in peers:
        assert _ticks_seen(peer) == [[1], [2, 3]]


async def test_a_full_tick_past_the_bound_sends_the_ticks_ahead_at_once() -> None:
    room, peers, moves = await _room_with_a_tick_going_out(waiting=1)
    ticks = room._ticks  # type: ignore[attr-defined]
    for moved in moves[1:5]:  # seq 2-5: two full ticks while the first is going out
        await room._on_event(ev.encode_event(moved))  # type: ignore[attr-defined]
    # the bound: one full tick waits; the second finished the two ahead of it at once,
    # and goes out itself (its first slice now)
    assert not ticks.waiting and not ticks.moves
    for peer in peers[1:]:
        assert _ticks_seen(peer) == [[1], [2, 3]]
    assert len(ticks.writes) == SPECTATORS - 1
    while ticks.writes:
        ticks.write_slice()
    for peer in peers:
        assert _ticks_seen(peer) == [[1], [2, 3], [4, 5]]


async def test_full_ticks_wait_in_order_within_the_bound() -> None:
    room, peers, moves = await _room_with_a_tick_going_out(waiting=4)
    ticks = room._ticks  # type: ignore[attr-defined]
    for moved in moves[1:9]:  # seq 2-9: four full ticks while the first is going out
        await room._on_event(ev.encode_event(moved))  # type: ignore[attr-defined]
    assert len(ticks.waiting) == 4 and [len(p.sent) for p in peers] == [1, 0, 0]
    while ticks.writes:
        ticks.write_slice()
    for peer in peers:
        assert _ticks_seen(peer) == [[1], [2, 3], [4, 5], [6, 7], [8, 9]]


async def test_an_event_after_a_waiting_full_tick_follows_its_moves() -> None:
    room, peers, moves = await _room_with_a_tick_going_out()
    ticks = room._ticks  # type: ignore[attr-defined]
    for moved in moves[1:4]:  # seq 2 and 3 wait as a full tick, seq 4 after them
        await room._on_event(ev.encode_event(moved))  # type: ignore[attr-defined]
    assert len(ticks.waiting) == 1 and len(ticks.moves) == 1
    ticks.flush()  # what another event of the room does first (Room._send_event)
    while ticks.writes:
        ticks.write_slice()
    for peer in peers:
        assert _ticks_seen(peer) == [[1], [2, 3], [4]]
