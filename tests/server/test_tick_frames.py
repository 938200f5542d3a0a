"""Ticks of several frames (docs/SERVER.md, "The spectators' tick"): moves that come
while a tick is still going out wait for its last slice and then go out together, as
``Diffs`` frames of at most ``spectator_frame_max`` moves each (the protocol's bound),
each spectator of the cohort written all of them at once; at ``spectator_tick_max``
moves the tick going out is finished in one callback and the new one goes out. Real
``Connection`` objects over websockets' own server protocol; the frames are read back
with websockets' own frame parser."""

from __future__ import annotations

from typing import Any

from protocol import decode_server
from protocol.messages import Diffs
from server import events as ev
from server.connection import Connection
from server.room import Member

from .test_buffers import START_MS, _room
from .test_paced_fanout import _conn
from .test_rivals_per_batch import CountingTransport
from .test_shared_frames import _parsed

FRAME_MAX = 2  # moves a frame holds
TICK_MAX = 5  # moves a tick holds while the one before is going out


async def _watched(spectators: int) -> tuple[Any, list[ev.Moved], list[tuple[Connection, Any]]]:
    now = [START_MS]
    room, _, events = await _room(now, 12, spectator_frame_max=FRAME_MAX,
                                  spectator_tick_max=TICK_MAX)
    room._ticks.slice = 1  # one spectator per slice: a tick stays half out between steps
    frames: list[tuple[Any, bytes]] = []
    watchers = []
    for _ in range(spectators):
        conn, ws = _conn(frames)
        ws.transport = CountingTransport()
        conn._transport = ws.transport  # (bound at construction: the counting one now)
        room.attach(Member(conn, 0, pending=None))
        watchers.append((conn, ws))
    return room, events, watchers


def _received(ws: Any) -> list[list[int]]:
    """The seqs of seat 1's diffs in each ``Diffs`` frame the spectator read, in order."""
    out = []
    for frame in _parsed(ws.transport.data):
        message = decode_server(frame.data)
        assert isinstance(message, Diffs)
        assert len(message.diffs) <= FRAME_MAX  # the protocol's bound, every frame
        out.append([d.seq for d in message.diffs])
    return out


def _finish(room: Any) -> None:
    while room._ticks.writes:  # the loop's later callbacks, run here one by one
        room._ticks.write_slice()


async def test_moves_during_a_tick_go_out_after_it_as_frames_written_at_once() -> None:
    room, events, watchers = await _watched(3)
    ticks = room._ticks
    await room._on_event(ev.encode_event(events[0]))
    ticks.flush()
    _finish(room)  # move 1 out to all three; they share one seen-state from here
    assert len(ticks.cohort) == 3
    await room._on_event(ev.encode_event(events[1]))
    ticks.flush()  # move 2: the first slice out, two spectators still owed it
    assert len(ticks.writes) == 2
    for event in events[2:5]:  # moves 3-5: a full frame and more, while 2 goes out
        await room._on_event(ev.encode_event(event))
    assert [m.seq for m in ticks.moves] == [3, 4, 5]  # held: nothing finished at once
    assert len(ticks.writes) == 2
    _finish(room)  # move 2's last slice sends the held moves as one tick of two frames
    for _, ws in watchers:
        assert _received(ws) == [[1], [2], [3, 4], [5]]
        assert ws.transport.writes == 3  # the two frames of the last tick in one write
    assert room.server.metrics.frames_out._value.get() == 3 * 4


async def test_a_full_tick_during_one_going_out_finishes_it_at_once() -> None:
    room, events, watchers = await _watched(3)
    ticks = room._ticks
    await room._on_event(ev.encode_event(events[0]))
    ticks.flush()  # move 1: two spectators still owed it
    for event in events[1:5]:  # four held while it goes out
        await room._on_event(ev.encode_event(event))
    assert [m.seq for m in ticks.moves] == [2, 3, 4, 5] and len(ticks.writes) == 2
    await room._on_event(ev.encode_event(events[5]))  # the fifth: the tick's bound
    # move 1's tick was finished in that callback and moves 2-6 went out: the first
    # slice of them at once, the others still owed them
    assert ticks.moves == [] and len(ticks.writes) == 2
    for _, ws in watchers[1:]:
        assert _received(ws) == [[1]]
    _finish(room)
    for _, ws in watchers:
        assert _received(ws) == [[1], [2, 3], [4, 5], [6]]


async def test_a_full_frame_with_nothing_going_out_goes_at_once() -> None:
    room, events, watchers = await _watched(1)
    ticks = room._ticks
    await room._on_event(ev.encode_event(events[0]))
    ticks.flush()
    _finish(room)
    await room._on_event(ev.encode_event(events[1]))  # within the tick: waits for it
    assert [m.seq for m in ticks.moves] == [2]
    await room._on_event(ev.encode_event(events[2]))  # a full frame: out now, no timer
    assert ticks.moves == [] and ticks.timer is None
    assert _received(watchers[0][1]) == [[1], [2, 3]]
