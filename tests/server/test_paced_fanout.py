"""A paced room's fan-out (docs/BENCHMARKS.md, "The paced fan-out against a floor"):
the spectators' tick written as one burst of the shared bytes to the transports that
can take them (``Outbound.shared_transport``), the others sent their frame the usual
way (queued behind a backlog, or cut as slow consumers at the documented cap), and a
move's rivals written at once, before a slice of the spectators' tick queued ahead of
them in the loop. Real ``Connection`` objects over websockets' own server protocol; the
frames are read back with websockets' own frame parser."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from protocol import Code, decode_server
from protocol.messages import Diffs, Progress
from server import events as ev
from server.config import ServerConfig
from server.connection import Connection
from server.metrics import Metrics
from server.outbound import wire_frame
from server.room import Member
from server.spectator_ticks import TICK_WRITE_SLICE

from .test_buffers import START_MS, BatchedPeer, _room
from .test_shared_frames import Ws, _parsed


def _conn(frames: list[tuple[Any, bytes]], batched: bool = True,
          **config: Any) -> tuple[Connection, Ws]:
    """A real ``Connection`` over a stand-in transport; every frame it is sent or
    queued goes to ``frames`` too (the server's ``frame_hook``, as the leak tests)."""
    ws = Ws()
    server = SimpleNamespace(config=ServerConfig(**config), metrics=Metrics(),
                             frame_hook=lambda conn, frame: frames.append((conn, frame)))
    conn = Connection(server, ws)  # type: ignore[arg-type]
    conn.batched = batched
    return conn, ws


def _run_tick(room: Any) -> None:
    room._ticks.flush()
    while room._ticks.writes:  # the loop's later callbacks, run here one by one
        room._ticks.write_slice()


async def test_a_tick_goes_as_shared_bytes_where_it_can_else_queued_or_cut() -> None:
    now = [START_MS]
    room, _, events = await _room(now, 3)
    frames: list[tuple[Any, bytes]] = []
    clear, clear_ws = _conn(frames)
    backed, backed_ws = _conn(frames)
    backed_ws.transport.buffered = Connection.DIRECT_WRITE_LIMIT  # the peer reads slowly
    full, full_ws = _conn(frames, max_outbound_bytes=10_000)
    full_ws.transport.buffered = 9_990  # under the direct-write limit, at the byte cap
    for conn in (clear, backed, full):
        room.attach(Member(conn, 0, pending=None))
    for event in events:
        await room._on_event(ev.encode_event(event))
    _run_tick(room)
    [frame] = _parsed(clear_ws.transport.data)  # one frame: the tick's shared bytes
    assert bytes(clear_ws.transport.data) == wire_frame(frame.data)
    tick = decode_server(frame.data)
    assert isinstance(tick, Diffs)
    assert [(d.seat, d.seq, d.move) for d in tick.diffs] == [
        (1, e.seq, e.move) for e in events]
    assert [(p.seat, p.moves) for p in tick.progress] == [(1, 3)]
    # backed up: the same payload waits behind its backlog, nothing written past it
    assert backed_ws.transport.data == b"" and list(backed._queue or []) == [frame.data]
    # at the cap: cut as a slow consumer, nothing of the tick written
    assert full._closing is not None and full._closing[0] is Code.SLOW_CONSUMER
    assert full_ws.transport.data == b""
    # every frame was seen by the hook, each spectator's once; the shared write counted
    assert sorted(id(c) for c, _ in frames) == sorted(id(c) for c in (clear, backed))
    assert room.server.metrics.frames_out._value.get() == 1
    for conn in (backed, full):
        if conn._writer_task is not None:
            conn._writer_task.cancel()


async def test_a_connection_with_frames_of_its_own_this_tick_takes_the_usual_path() -> None:
    frames: list[tuple[Any, bytes]] = []
    conn, ws = _conn(frames)
    own = b"\x81\xa1k\xa1P"  # any payload framed for it this loop tick, not yet written
    conn.send_frame(own)
    assert conn.unflushed() == 1
    assert conn.shared_transport(b"tick", 6) is None  # would overtake its own frame
    conn.flush()
    assert conn.shared_transport(b"tick", 6) is ws.transport
    conn.close_with(Code.SHUTTING_DOWN, "bye")
    assert conn.shared_transport(b"tick", 6) is None  # closing: nothing more
    if conn._writer_task is not None:
        conn._writer_task.cancel()


async def test_a_withheld_spectator_gets_progress_and_no_board_from_the_tick() -> None:
    now = [START_MS]
    room, _, events = await _room(now, 2)
    frames: list[tuple[Any, bytes]] = []
    shown, _ = _conn(frames)
    hidden, hidden_ws = _conn(frames)
    room.attach(Member(shown, 0, pending=None))
    room.attach(Member(hidden, 0, pending=None, boards_hidden=True))
    for event in events:
        await room._on_event(ev.encode_event(event))
    _run_tick(room)
    [frame] = _parsed(hidden_ws.transport.data)
    withheld = decode_server(frame.data)
    assert isinstance(withheld, Diffs) and withheld.diffs == []
    assert [(p.seat, p.moves) for p in withheld.progress] == [(1, 2)]
    for conn, payload in frames:  # scanned: no move of the race reached it
        if conn is hidden:
            assert all(e.move.encode() not in payload for e in events)


async def test_a_rival_is_written_before_a_slice_of_the_tick_queued_ahead_of_it() -> None:
    now = [START_MS]
    room, _, events = await _room(now, 2)
    frames: list[tuple[Any, bytes]] = []
    rival, rival_ws = _conn(frames, batched=False)
    room.attach(Member(rival, 2, pending=None))
    for i in range(TICK_WRITE_SLICE + 5):
        room.attach(Member(BatchedPeer(f"w{i}"), 0, pending=None))
    await room._on_event(ev.encode_event(events[0]))
    room._ticks.flush()  # the first slice now, the rest queued for a later callback
    assert room._ticks.writes and room._ticks.write_handle is not None
    rival.flush()
    rival_ws.transport.data.clear()
    await room._on_event(ev.encode_event(events[1]))
    # no loop callback has run: the rival's Progress is on its transport already
    assert room._ticks.writes  # the tick's queued slice has not gone yet
    [frame] = _parsed(rival_ws.transport.data)
    progress = decode_server(frame.data)
    assert isinstance(progress, Progress) and (progress.seat, progress.moves) == (1, 2)
    assert rival.unflushed() == 0
