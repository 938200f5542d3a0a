"""A move on a standalone Redis is judged as its frame arrives (server/connection.py,
``Connection.take``) and acknowledged from the store's reply (``_answered``, called by
the group commit's ``data_received``), with no task; the frames behind it wait, in
order, until it is answered; a failed append is answered ``store_unavailable`` and
changes nothing.

Each test has a private ``redis-server`` of its own. Redis is held still with SIGSTOP
(and let go with SIGCONT), so an append is really on the wire and unanswered."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

from protocol import decode_server
from protocol import messages as m
from server.app import Server
from server.config import ONE_HOST, ServerConfig
from server.connection import Connection
from tests.conftest import RedisProcess

from .test_push_dispatch import _server_side, _solo, acks_in_task, race_acks_in_task
from .test_ranking import WIN_SEED_7


@pytest.fixture
def redis(redis_server: Callable[..., RedisProcess]) -> Iterator[RedisProcess]:
    """A private Redis, never left stopped (SIGCONT at the end)."""
    process = redis_server()
    try:
        yield process
    finally:
        if process.pid is not None:
            os.kill(process.pid, signal.SIGCONT)


@pytest.fixture
async def node(redis: RedisProcess) -> AsyncIterator[Server]:
    server = Server(ServerConfig(port=0, host="127.0.0.1", store_url=redis.url,
                                 seed_source=lambda: 7, rate_burst=100_000,
                                 rate_per_s=100_000.0, **ONE_HOST))
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


def _pause(redis: RedisProcess) -> None:
    assert redis.pid is not None
    os.kill(redis.pid, signal.SIGSTOP)


def _resume(redis: RedisProcess) -> None:
    assert redis.pid is not None
    os.kill(redis.pid, signal.SIGCONT)


def _count_frames(monkeypatch: pytest.MonkeyPatch, want: int) -> asyncio.Event:
    """An event set once the server's connection was handed ``want`` complete frames
    (``take``, or ``queued`` for those websockets' assembler keeps)."""
    seen = 0
    done = asyncio.Event()
    take, queued = Connection.take, Connection.queued

    def counted() -> None:
        nonlocal seen
        seen += 1
        if seen == want:
            done.set()

    def counting_take(self: Connection, frame: bytes) -> bool:
        taken = take(self, frame)
        if taken:
            counted()
        return taken

    def counting_queued(self: Connection) -> None:
        queued(self)
        counted()

    monkeypatch.setattr(Connection, "take", counting_take)
    monkeypatch.setattr(Connection, "queued", counting_queued)
    return done


def _answers(sent: list[Any]) -> list[Any]:
    return [a for a in sent if isinstance(a, m.Accepted | m.Rejected | m.Error | m.Pong)]


async def test_a_move_on_redis_is_acknowledged_outside_any_task(node: Server) -> None:
    """Every ack of a pipelined race on Redis is written from the store's reply, with
    no task current (before, the connection's run task awaited the append and wrote
    each ack), in order, the store timer of ``append_move`` still counting each; the
    move that wins the race still reaches the core (the seat is won in the store)."""
    client = await _solo(node)
    assert await race_acks_in_task(node, client) == [False] * len(WIN_SEED_7)
    timed = node.metrics.store_latency.labels("append_move")
    assert sum(timed.counts) == len(WIN_SEED_7)
    code = client.joined.code if client.joined else ""
    assert [e.move for e in await node.store.read_log(code, 1)] == WIN_SEED_7
    seats = await node.store.get_seats(code)
    assert [(s.status, s.progress) for s in seats] == [("won", 52)]


async def test_frames_behind_a_move_waiting_on_redis_keep_their_order(
        node: Server, redis: RedisProcess, monkeypatch: pytest.MonkeyPatch) -> None:
    """Redis holds move 1's append; moves 2 and 3, a bad frame, a ping and 20 more moves
    (past ``held_frames``: the rest wait in websockets' assembler) arrive meanwhile:
    nothing is answered until Redis answers, then every frame in the order it was sent,
    and the next move is acknowledged outside any task again."""
    client = await _solo(node)
    conn = _server_side(node)
    assert node.config.held_frames < 20
    later = WIN_SEED_7[3:23]
    arrived = _count_frames(monkeypatch, 5 + len(later))
    sent: list[Any] = []
    node.frame_hook = lambda c, frame: sent.append(decode_server(frame))
    _pause(redis)
    await client.send(m.Move(seq=1, move=WIN_SEED_7[0]))
    await client.send(m.Move(seq=2, move=WIN_SEED_7[1]))
    await client.send_raw(b"\xc1 not msgpack")
    await client.send(m.Ping(nonce=77))
    await client.send(m.Move(seq=3, move=WIN_SEED_7[2]))
    for seq, move in enumerate(later, 4):
        await client.send(m.Move(seq=seq, move=move))
    await asyncio.wait_for(arrived.wait(), 5)
    assert _answers(sent) == []  # everything waits behind move 1
    assert len(conn._held) == node.config.held_frames  # then websockets' assembler
    assert conn.ws.recv_messages.frames.queue
    _resume(redis)
    answers: list[Any] = []
    while len(answers) < 5 + len(later):  # the answers, among the room's own messages
        message = await client.recv()
        if isinstance(message, m.Accepted | m.Rejected | m.Error | m.Pong):
            answers.append(message)
    assert [type(a).__name__ for a in answers] == [
        "Accepted", "Accepted", "Error", "Pong", "Accepted"] + ["Accepted"] * len(later)
    assert [a.seq for a in answers if isinstance(a, m.Accepted)] == list(range(1, 24))
    assert answers[2].code == "bad_frame" and answers[3].nonce == 77
    in_task = acks_in_task(node)
    assert isinstance(await client.move(WIN_SEED_7[23], seq=24), m.Accepted)
    assert in_task == [False]


async def test_a_failed_append_on_redis_is_refused_and_changes_nothing(
        node: Server, redis: RedisProcess, monkeypatch: pytest.MonkeyPatch) -> None:
    """Redis does not answer move 1 within the batch's deadline (shortened here): the
    move is refused ``store_unavailable`` (retryable), the move behind it waits for
    that answer and is then judged against the unchanged seat (its seq is now out of
    order), and the same move sent again once Redis is back is stored once."""
    client = await _solo(node)
    code = client.joined.code if client.joined else ""
    committer = node.store.wrapped._committer  # type: ignore[attr-defined]
    monkeypatch.setattr(committer, "_timeout_s", 0.2)
    _pause(redis)
    await client.send(m.Move(seq=1, move=WIN_SEED_7[0]))
    await client.send(m.Move(seq=2, move=WIN_SEED_7[1]))
    first = await client.expect(m.Rejected)
    assert (first.seq, first.code, first.retryable) == (1, "store_unavailable", True)
    second = await client.expect(m.Rejected)  # judged after move 1's answer: seat unchanged
    assert (second.seq, second.code, second.expected) == (2, "out_of_order", 1)
    conn = _server_side(node)
    assert conn.member is not None and conn.member.seq == 0
    _resume(redis)
    assert isinstance(await client.move(WIN_SEED_7[0], seq=1), m.Accepted)
    assert [e.move for e in await node.store.read_log(code, 1)] == WIN_SEED_7[:1]


async def test_a_connection_that_closes_while_redis_holds_its_move_ends_cleanly(
        node: Server, redis: RedisProcess, monkeypatch: pytest.MonkeyPatch) -> None:
    """The client goes while Redis holds its move: the move and the one held behind it
    are stored once Redis answers, the seat is let go, and the node keeps no
    connection."""
    client = await _solo(node)
    code = client.joined.code if client.joined else ""
    arrived = _count_frames(monkeypatch, 2)
    _pause(redis)
    await client.send(m.Move(seq=1, move=WIN_SEED_7[0]))
    await client.send(m.Move(seq=2, move=WIN_SEED_7[1]))
    await asyncio.wait_for(arrived.wait(), 5)
    await client.close()
    conn = _server_side(node)
    handlers = list(node._handlers)  # the connection's handler task
    _resume(redis)
    await asyncio.wait_for(asyncio.gather(*handlers), 10)
    assert not node.connections and conn.closing
    log = await node.store.read_log(code, 1)
    assert [e.move for e in log] == WIN_SEED_7[:2]  # both were received before the close
    (seat,) = await node.store.get_seats(code)
    assert not seat.connected
