"""The spectators' tick framed once and written to every transport as the same bytes
(``Outbound.shared_transport``, ``SpectatorTicks``): the bytes are the
frame a websockets client parses (checked by websockets' own client protocol, not by
our framing code), a connection's frames stay in order, the bounds still close a slow
consumer, a backed-up or compressed connection takes the usual path, and a room writes
a tick ``TICK_WRITE_SLICE`` spectators per loop callback."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from websockets.extensions.permessage_deflate import PerMessageDeflate
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.server import ServerProtocol
from websockets.streams import StreamReader

from protocol import Code, decode_server, encode
from protocol.messages import Diffs, Pong
from server import events as ev
from server.config import ServerConfig
from server.connection import Connection
from server.metrics import Metrics
from server.outbound import wire_frame
from server.room import Member
from server.spectator_ticks import TICK_WRITE_SLICE

from .test_buffers import START_MS, BatchedPeer, Peer, _room


class Transport:
    """A transport that keeps what is written; ``buffered`` is its write buffer."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.buffered = 0

    def write(self, data: bytes) -> None:
        self.data += data

    def writelines(self, chunks: list[bytes]) -> None:
        for chunk in chunks:
            self.data += chunk

    def get_write_buffer_size(self) -> int:
        return self.buffered

    def can_write_eof(self) -> bool:
        return False


class Ws:
    """The parts of a websockets ``ServerConnection`` a ``Connection`` uses, over a real
    websockets server protocol (which frames what goes through it)."""

    def __init__(self) -> None:
        self.protocol = ServerProtocol()
        self.protocol.state = State.OPEN
        self.transport = Transport()
        self.send_in_progress = None
        self.sent: list[bytes] = []  # what the writer task sent (the queued path)

    async def send(self, frame: bytes) -> None:
        self.sent.append(frame)

    async def close(self, code: int, reason: str) -> None:
        self.protocol.state = State.CLOSED


def _connection(**config: Any) -> tuple[Connection, Ws]:
    ws = Ws()
    server = SimpleNamespace(config=ServerConfig(**config), metrics=Metrics(), frame_hook=None)
    return Connection(server, ws), ws  # type: ignore[arg-type]


def _parsed(data: bytes) -> list[Frame]:
    """The frames a websockets client reads from ``data`` (its own frame parser, as a
    client reads a server's unmasked frames); all of ``data`` must be whole frames."""
    reader = StreamReader()
    reader.feed_data(bytes(data))
    reader.feed_eof()
    frames = []
    while reader.buffer:
        parser = Frame.parse(reader.read_exact, mask=False)
        try:
            next(parser)
        except StopIteration as done:
            frames.append(done.value)
        else:  # pragma: no cover - it wanted more bytes: a partial frame
            raise AssertionError("a partial frame")
    return frames


def _payload(n: int) -> bytes:
    return encode(Pong(server_ms=n, nonce=n))


def test_the_shared_bytes_are_the_frame_websockets_makes_for_one_connection() -> None:
    for size in (10, 125, 126, 4000, 70_000):  # each length encoding of the header
        payload = bytes(range(256)) * (size // 256) + bytes(size % 256)
        framed = ServerProtocol()
        framed.state = State.OPEN
        framed.send_binary(payload)
        assert wire_frame(payload) == b"".join(framed.data_to_send())
        [frame] = _parsed(wire_frame(payload))
        assert (frame.opcode, frame.fin, frame.data) == (Opcode.BINARY, True, payload)


def _shared(conn: Connection, payload: bytes) -> bool:
    """The tick's path for one connection: the shared bytes written to the transport
    ``shared_transport`` hands out (True), else the payload sent the usual way."""
    wire = wire_frame(payload)
    transport = conn.shared_transport(payload, len(wire))
    if transport is None:
        conn.send_frame(payload)
        return False
    transport.write(wire)
    return True


async def test_a_frame_sent_after_the_shared_bytes_follows_them() -> None:
    conn, ws = _connection()
    a, b = _payload(1), _payload(2)
    assert _shared(conn, a)
    conn.send_frame(b)
    conn._flush()  # the end of the loop tick (call_soon)
    assert [f.data for f in _parsed(ws.transport.data)] == [a, b]
    assert decode_server(_parsed(ws.transport.data)[0].data) == Pong(server_ms=1, nonce=1)


async def test_a_frame_of_its_own_this_loop_tick_is_not_overtaken() -> None:
    conn, ws = _connection()
    a, b = _payload(4), _payload(5)
    conn.send_frame(a)  # framed, written at the end of the loop tick
    assert not _shared(conn, b)  # sent the usual way, after it
    conn._flush()
    assert [f.data for f in _parsed(ws.transport.data)] == [a, b]


async def test_a_closing_connection_gets_no_shared_bytes() -> None:
    conn, ws = _connection()
    conn.close_with(Code.SHUTTING_DOWN, "bye")
    assert not _shared(conn, _payload(6))
    writer = conn._writer_task
    assert writer is not None
    await writer
    assert ws.transport.data == b""
    assert [decode_server(x).code for x in ws.sent] == [Code.SHUTTING_DOWN]


async def test_a_frame_past_the_bounds_closes_a_slow_consumer_instead() -> None:
    conn, ws = _connection(max_outbound_bytes=10_000)
    ws.transport.buffered = 9_990  # under the direct-write limit, near the byte bound
    assert not _shared(conn, _payload(7))
    assert conn._closing is not None and conn._closing[0] is Code.SLOW_CONSUMER
    assert ws.transport.data == b""
    if conn._writer_task is not None:
        conn._writer_task.cancel()


async def test_a_backed_up_connection_queues_the_frame_behind_its_backlog() -> None:
    conn, ws = _connection()
    a = _payload(8)
    ws.transport.buffered = Connection.DIRECT_WRITE_LIMIT
    assert not _shared(conn, a)
    assert list(conn._queue or []) == [a] and ws.transport.data == b""
    writer = conn._writer_task
    assert writer is not None
    await writer
    assert ws.sent == [a]


async def test_a_connection_with_an_extension_is_sent_its_own_frame() -> None:
    conn, ws = _connection()
    ws.protocol.extensions = [PerMessageDeflate(False, False, 15, 15)]
    a = _payload(10)
    assert not _shared(conn, a)
    assert conn._unflushed_frames == 1  # framed by websockets
    conn._flush()
    data = bytes(ws.transport.data)
    assert data[0] & 0x40 and data != wire_frame(a)  # RSV1: compressed, for it alone


class SharingPeer(BatchedPeer):
    """A stand-in connection with the tick's shared path (``shared_transport``): the
    bytes written there are kept decoded, as ``send_frame`` keeps a frame."""

    def shared_transport(self, frame: bytes, size: int, more: Sequence[bytes] = ()) -> Any:
        return SimpleNamespace(write=self._write)

    def _write(self, wire: bytes) -> None:
        for frame in _parsed(wire):  # a tick of several frames: all of them, in order
            Peer.send_frame(self, frame.data)


def _run_slices(room: Any, max_slices: int = 50) -> list[int]:
    """Run the tick's remaining slices one at a time, as the loop would, each time
    checking that the rest was left to a callback of its own (``write_handle``) rather
    than written at once; the number of spectators done after each."""
    done = []
    for _ in range(max_slices):
        if not room._ticks.writes:
            return done
        assert room._ticks.write_handle is not None  # the rest waits for the next loop callback
        room._ticks.write_slice()  # that callback, run here rather than by the loop
        done.append(sum(1 for member in room.members.values() if member.conn.sent))
    raise AssertionError("the tick never finished going out")


async def test_a_room_writes_a_tick_one_slice_per_loop_callback() -> None:
    now = [START_MS]
    room, _, events = await _room(now, 3)
    peers = [SharingPeer(f"w{i}") for i in range(2 * TICK_WRITE_SLICE + 5)]
    for peer in peers:
        room.attach(Member(peer, 0, pending=None))
    for event in events:
        await room._on_event(ev.encode_event(event))
    room._ticks.flush()
    written = [sum(1 for p in peers if p.sent)]
    written += _run_slices(room)  # other callbacks (the players') run between slices
    assert written == [TICK_WRITE_SLICE, 2 * TICK_WRITE_SLICE, len(peers)]
    for peer in peers:
        assert [type(x) for x in peer.sent] == [Diffs]
        assert [(d.seat, d.seq) for d in peer.sent[0].diffs] == [(1, 1), (1, 2), (1, 3)]
    assert room.server.metrics.frames_out._value.get() == len(peers)


async def test_the_next_tick_finishes_the_last_one_first() -> None:
    now = [START_MS]
    room, _, events = await _room(now, 4)
    peers = [SharingPeer(f"w{i}") for i in range(TICK_WRITE_SLICE + 3)]
    for peer in peers:
        room.attach(Member(peer, 0, pending=None))
    for event in events[:2]:
        await room._on_event(ev.encode_event(event))
    room._ticks.flush()
    assert room._ticks.writes  # some still hold the first tick
    for event in events[2:]:
        await room._on_event(ev.encode_event(event))
    room._ticks.flush()
    _run_slices(room)
    for peer in peers:
        assert [[d.seq for d in f.diffs] for f in peer.sent] == [[1, 2], [3, 4]]


async def test_the_next_tick_waits_for_the_last_one_to_be_out() -> None:
    now = [START_MS]
    room, _, events = await _room(now, 3, spectator_tick_ms=50)
    peers = [SharingPeer(f"w{i}") for i in range(TICK_WRITE_SLICE + 3)]
    for peer in peers:
        room.attach(Member(peer, 0, pending=None))
    await room._on_event(ev.encode_event(events[0]))
    room._ticks.flush()
    assert room._ticks.writes  # the first tick is still going out
    await room._on_event(ev.encode_event(events[1]))
    assert room._ticks.timer is None  # no tick is scheduled while one is being written
    _run_slices(room)
    timer = room._ticks.timer
    assert timer is not None  # the last slice scheduled it: move 2 is waiting
    # due a whole interval after the last write (the loop's clock, not the wall's)
    assert abs(timer.when() - (room._ticks.last + 0.050)) < 1e-3  # type: ignore[attr-defined]
    assert all([[d.seq for d in f.diffs] for f in p.sent] == [[1]] for p in peers)
    room._ticks.flush()
    _run_slices(room)
    assert all([[d.seq for d in f.diffs] for f in p.sent] == [[1], [2]] for p in peers)
