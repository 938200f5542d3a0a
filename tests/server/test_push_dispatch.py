"""Frames are handled as they arrive (server/connection.py, ``Connection.take``): a move
on the memory store is judged, stored and acknowledged in the protocol callback its
frame came in, with no task; anything that waits is the connection's run task's, and
the frames behind it wait their turn, in order, in websockets' bounded assembler with
reading paused past its high-water mark.

The store here is a real ``MemoryStore`` whose ``append_move`` can be held at a gate
(an ``asyncio.Event``): a move then suspends in the middle of its handling, as a move
on Redis does."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pytest
from websockets.server import ServerProtocol

from protocol import decode_server, encode
from protocol import messages as m
from server.app import Server
from server.config import ONE_HOST, ServerConfig
from server.connection import Connection
from server.guard import GuardedConnection
from server.store.memory import MemoryStore

from .client import TestClient
from .test_ranking import WIN_SEED_7

# websockets' default ``max_queue`` (the server passes none): frames held in its
# assembler before it pauses reading (websockets/asyncio/connection.py).
MAX_QUEUE_HIGH = 16


class GatedStore(MemoryStore):
    """A memory store whose ``append_move`` waits for ``gate`` while it is set (and says
    so on ``held``): a handling that suspends midway."""

    def __init__(self) -> None:
        super().__init__()
        self.gate: asyncio.Event | None = None
        self.held = asyncio.Event()

    async def append_move(self, *args: Any, **kwargs: Any) -> None:
        gate = self.gate
        if gate is not None:
            self.held.set()
            await gate.wait()
        await super().append_move(*args, **kwargs)


async def _solo(server: Server) -> TestClient:
    """One player alone in a running race on Portuguese seed 7 (WIN_SEED_7 wins it)."""
    client = await TestClient.connect(server.url, "solo")
    await client.create(variant="portuguese", countdown_s=0)
    await client.send(m.Ready())
    await client.expect(m.Started)
    return client


def acks_in_task(server: Server) -> list[bool]:
    """From now on, for each ack the server writes, whether a task was current when it
    wrote it (``frame_hook`` runs where the frame is written): the list fills as acks go."""
    in_task: list[bool] = []

    def hook(conn: Any, frame: bytes) -> None:
        if type(decode_server(frame)) is m.Accepted:
            in_task.append(asyncio.current_task() is not None)

    server.frame_hook = hook
    return in_task


async def race_acks_in_task(server: Server, client: TestClient) -> list[bool]:
    """Send the whole winning race of seed 7 at once (pipelined), check its acks come
    back in order, and return for each ack whether a task was current when the server
    wrote it (``frame_hook`` runs where the frame is written)."""
    in_task = acks_in_task(server)
    for seq, move in enumerate(WIN_SEED_7, 1):
        await client.send(m.Move(seq=seq, move=move))
    acks = [await client.expect(m.Accepted) for _ in WIN_SEED_7]
    assert [a.seq for a in acks] == list(range(1, len(WIN_SEED_7) + 1))
    return in_task


def _server_side(server: Server) -> Connection:
    (conn,) = server.connections
    assert isinstance(conn, Connection)
    return conn


@pytest.fixture
async def gated() -> Any:
    store = GatedStore()
    server = Server(ServerConfig(port=0, host="127.0.0.1", seed_source=lambda: 7,
                                 rate_burst=100_000, rate_per_s=100_000.0, **ONE_HOST),
                    store=store)
    await server.start()
    try:
        yield server, store
    finally:
        await server.stop()


async def test_a_move_on_memory_is_acknowledged_outside_any_task(gated: Any) -> None:
    """Every ack of a pipelined race goes out from the callback its move arrived in:
    no task was running (the run task's ``recv()`` loop, before, sent each from a
    task), and the seat ends as the engine says."""
    server, _ = gated
    client = await _solo(server)
    assert await race_acks_in_task(server, client) == [False] * len(WIN_SEED_7)
    # the last move won the race: the seat's status, judged by the core in the
    # callback too (a handling that may suspend), reached the store
    seats = await server.store.get_seats(client.joined.code if client.joined else "")
    assert [(s.status, s.progress) for s in seats] == [("won", 52)]


async def test_frames_behind_a_suspended_move_wait_and_keep_their_order(
        gated: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Move 1 suspends in the store; moves 2 and 3, a bad frame and a ping arrive
    meanwhile: nothing is answered until the store goes on, then every answer comes
    in the order its frame was sent."""
    server, store = gated
    client = await _solo(server)
    conn = _server_side(server)
    queued = 0
    all_queued = asyncio.Event()
    original = Connection.queued

    def counting(self: Connection) -> None:
        nonlocal queued
        original(self)
        queued += 1
        if queued == 4:
            all_queued.set()

    monkeypatch.setattr(Connection, "queued", counting)
    sent: list[Any] = []
    server.frame_hook = lambda c, frame: sent.append(decode_server(frame))
    store.gate = asyncio.Event()
    await client.send(m.Move(seq=1, move=WIN_SEED_7[0]))
    await asyncio.wait_for(store.held.wait(), 5)
    await client.send(m.Move(seq=2, move=WIN_SEED_7[1]))
    await client.send_raw(b"\xc1 not msgpack")
    await client.send(m.Ping(nonce=77))
    await client.send(m.Move(seq=3, move=WIN_SEED_7[2]))
    await asyncio.wait_for(all_queued.wait(), 5)
    assert sent == []  # all four wait behind move 1
    assert conn.ws.recv_messages.frames.queue  # in websockets' assembler
    gate, store.gate = store.gate, None
    gate.set()
    answers: list[Any] = []
    while len(answers) < 5:  # the answers, among the room's own messages
        message = await client.recv()
        if isinstance(message, m.Accepted | m.Rejected | m.Error | m.Pong):
            answers.append(message)
    assert [type(a).__name__ for a in answers] == [
        "Accepted", "Accepted", "Error", "Pong", "Accepted"]
    assert [answers[0].seq, answers[1].seq, answers[4].seq] == [1, 2, 3]
    assert answers[2].code == "bad_frame" and answers[3].nonce == 77
    # idle again: the next move is acknowledged as it arrives
    in_task = acks_in_task(server)
    assert isinstance(await client.move(WIN_SEED_7[3], seq=4), m.Accepted)
    assert in_task == [False]


async def test_a_backlog_pauses_reading_and_drains_in_order(
        gated: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Behind a suspended move, frames fill websockets' assembler up to its high-water
    mark: reading pauses (the rest stay in the socket), and once the store goes on
    every move is acknowledged in order and reading resumes."""
    server, store = gated
    client = await _solo(server)
    conn = _server_side(server)
    over = asyncio.Event()
    original = Connection.queued

    def watching(self: Connection) -> None:
        original(self)
        if self.ws.recv_messages.paused:
            over.set()

    monkeypatch.setattr(Connection, "queued", watching)
    moves = WIN_SEED_7[:40]
    store.gate = asyncio.Event()
    await client.send(m.Move(seq=1, move=moves[0]))
    await asyncio.wait_for(store.held.wait(), 5)
    for seq, move in enumerate(moves[1:], 2):
        await client.send(m.Move(seq=seq, move=move))
    await asyncio.wait_for(over.wait(), 5)
    transport = conn.ws.transport
    assert not transport.is_reading()
    assert len(conn.ws.recv_messages.frames.queue) > MAX_QUEUE_HIGH
    gate, store.gate = store.gate, None
    gate.set()
    acks = [await client.expect(m.Accepted) for _ in moves]
    assert [a.seq for a in acks] == list(range(1, len(moves) + 1))
    assert transport.is_reading() and not conn.ws.recv_messages.paused


async def test_a_connection_that_closes_during_a_suspended_move_ends_cleanly(
        gated: Any) -> None:
    """The client goes while its move waits in the store: the move completes (it was
    stored), the connection's seat is let go, and the node keeps no connection."""
    server, store = gated
    client = await _solo(server)
    code = client.joined.code if client.joined else ""
    store.gate = asyncio.Event()
    await client.send(m.Move(seq=1, move=WIN_SEED_7[0]))
    await asyncio.wait_for(store.held.wait(), 5)
    await client.send(m.Move(seq=2, move=WIN_SEED_7[1]))
    await client.close()
    conn = _server_side(server)
    handlers = list(server._handlers)  # the connection's handler task
    gate, store.gate = store.gate, None
    gate.set()
    await asyncio.wait_for(asyncio.gather(*handlers), 5)
    assert not server.connections and conn.closing
    log = await store.read_log(code, 1)
    assert [e.move for e in log] == WIN_SEED_7[:2]  # both were received before the close
    (seat,) = await store.get_seats(code)
    assert not seat.connected


async def test_the_memory_store_appends_synchronously_each_move_once() -> None:
    """On the plain memory store a move takes ``append_move_now``, no coroutine: the
    store's timer of ``append_move`` (``solrace_store_op_seconds``, which times its
    coroutine) never ran, and the log holds every move once, in order."""
    server = Server(ServerConfig(port=0, host="127.0.0.1", seed_source=lambda: 7,
                                 rate_burst=100_000, rate_per_s=100_000.0, **ONE_HOST))
    await server.start()
    try:
        client = await _solo(server)
        moves = WIN_SEED_7[:30]
        for seq, move in enumerate(moves, 1):
            await client.send(m.Move(seq=seq, move=move))
        acks = [await client.expect(m.Accepted) for _ in moves]
        assert [a.seq for a in acks] == list(range(1, len(moves) + 1))
        timed = server.metrics.store_latency.labels("append_move")
        assert sum(timed.counts) == 0
        code = client.joined.code if client.joined else ""
        assert [e.move for e in await server.store.read_log(code, 1)] == moves
    finally:
        await server.stop()


def _client_frame(opcode: int, payload: bytes, fin: bool = True) -> bytes:
    """A client's masked frame (RFC 6455 5.2), built here, not by websockets."""
    mask = os.urandom(4)
    first = (0x80 if fin else 0) | opcode
    n = len(payload)
    if n < 126:
        head = bytes((first, 0x80 | n))
    elif n < 65536:
        head = bytes((first, 0x80 | 126)) + n.to_bytes(2, "big")
    else:
        head = bytes((first, 0x80 | 127)) + n.to_bytes(8, "big")
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


async def test_whole_binary_frames_skip_websockets_parser_and_the_rest_keeps_its_order(
        gated: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Moves written together as whole frames are read by the guard itself (websockets'
    parser is not fed at all); a write that mixes them with a ping, a fragmented
    message and a move split over two writes is answered in the order sent, every
    move once."""
    server, _ = gated
    client = await _solo(server)
    fed: list[int] = []
    original = ServerProtocol.receive_data

    def counting(self: ServerProtocol, data: bytes) -> None:
        fed.append(len(data))
        original(self, data)

    monkeypatch.setattr(ServerProtocol, "receive_data", counting)
    moves = [encode(m.Move(seq=seq, move=move)) for seq, move in enumerate(WIN_SEED_7, 1)]
    transport = client.ws.transport
    transport.write(b"".join(_client_frame(0x2, frame) for frame in moves[:10]))
    acks = [await client.expect(m.Accepted) for _ in range(10)]
    assert [a.seq for a in acks] == list(range(1, 11))
    assert fed == []  # websockets' parser never saw them
    split = _client_frame(0x2, moves[13])
    transport.write(
        _client_frame(0x2, moves[10])
        + _client_frame(0x9, b"are you there")  # a ping: websockets answers it
        + _client_frame(0x2, moves[11][:3], fin=False) + _client_frame(0x0, moves[11][3:])
        + _client_frame(0x2, moves[12])
        + split[:5])  # half a header: the parser holds it
    transport.write(split[5:] + _client_frame(0x2, moves[14]))
    acks = [await client.expect(m.Accepted) for _ in range(5)]
    assert [a.seq for a in acks] == list(range(11, 16))
    assert fed  # the ping, the fragments and the split move went through websockets
    fed.clear()
    transport.write(b"".join(_client_frame(0x2, frame) for frame in moves[15:20]))
    acks = [await client.expect(m.Accepted) for _ in range(5)]
    assert [a.seq for a in acks] == list(range(16, 21))
    assert fed == []  # back between frames: read by the guard again


async def test_a_frame_over_the_size_limit_still_closes_with_1009(
        server_factory: Any) -> None:
    """A binary frame longer than ``ws_max_size`` is left to websockets, which fails
    the connection as before (close code 1009), whether it comes whole or not."""
    server = await server_factory(ws_max_size=1024)
    client = await TestClient.connect(server.url, "big")
    client.ws.transport.write(_client_frame(0x2, b"\x00" * 2048))
    assert await client.closed()
    assert client.ws.close_code == 1009


async def test_acks_are_written_before_the_callback_that_read_their_moves_returns(
        gated: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The acks of the moves read in one ``data_received`` leave at its end (one write),
    not from a flush callback later in the loop tick: nothing is left unwritten when it
    returns."""
    server, _ = gated
    client = await _solo(server)
    left: list[int] = []
    original = GuardedConnection.data_received

    def watching(self: GuardedConnection, data: bytes) -> None:
        original(self, data)
        sink = self.sink
        if isinstance(sink, Connection):
            left.append(sink.unflushed())

    monkeypatch.setattr(GuardedConnection, "data_received", watching)
    for seq, move in enumerate(WIN_SEED_7[:20], 1):
        await client.send(m.Move(seq=seq, move=move))
    acks = [await client.expect(m.Accepted) for _ in range(20)]
    assert [a.seq for a in acks] == list(range(1, 21))
    assert left and set(left) == {0}
