"""The group commit's own connection (``server/store/redis_commit.py``): commands packed
as redis-py packs them, batches pipelined without waiting for earlier replies, a batch
past its deadline failed and its connection dropped, a call lost with its connection
sent once more, a flushed script sent with its text, the URL's password and database
used.

Two kinds of Redis: a real private ``redis-server`` (counted by its own ``MONITOR``),
and, where a test needs Redis to hold its replies or drop the connection at a chosen
moment, a scripted server on a loopback socket that reads real RESP commands (parsed by
hiredis, not by the code under test) and answers only when the test says so."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import hiredis
import pytest
from redis.asyncio import ConnectionPool, Redis
from redis.asyncio.connection import Connection

from server.store import LogEntry, StoreUnavailable
from server.store import redis_scripts as lua
from server.store.redis import RedisStore
from server.store.redis_commit import GroupCommit, bulk, pack
from tests.conftest import RedisProcess

from .test_contract import EVENT_TIMEOUT_S, room_with_seats
from .test_move_path import Monitor

APPENDED = b"*2\r\n:0\r\n:1\r\n"  # APPEND_MOVE's reply {0, seq=1}: appended


class ScriptedRedis:
    """A loopback server that records every command of every connection, in order, and
    replies only with what the test hands to ``reply``."""

    def __init__(self) -> None:
        self.connections: list[asyncio.StreamWriter] = []
        self.commands: list[tuple[int, list[bytes]]] = []  # (connection index, command)
        self.changed = asyncio.Event()
        self.server: asyncio.Server | None = None
        self.port = 0

    async def __aenter__(self) -> ScriptedRedis:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        for writer in self.connections:
            writer.close()
        assert self.server is not None
        self.server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        index = len(self.connections)
        self.connections.append(writer)
        parser = hiredis.Reader()
        while data := await reader.read(65536):
            parser.feed(data)
            while (command := parser.gets()) is not False:
                self.commands.append((index, command))
                self.changed.set()

    async def until(self, count: int) -> None:
        """Wait (bounded) until ``count`` commands arrived in all."""
        async with asyncio.timeout(EVENT_TIMEOUT_S):
            while len(self.commands) < count:
                self.changed.clear()
                await self.changed.wait()

    def reply(self, connection: int, data: bytes) -> None:
        """Write ``data`` on connection number ``connection``."""
        self.connections[connection].write(data)

    def drop(self, connection: int) -> None:
        """Close connection number ``connection`` without a reply."""
        self.connections[connection].transport.abort()


@pytest.fixture
async def scripted() -> AsyncIterator[ScriptedRedis]:
    async with ScriptedRedis() as server:
        yield server


def committer(port: int, timeout_s: float = 3.0) -> GroupCommit:
    """A group commit on ``port`` (db 0, no password), the APPEND_MOVE script."""
    script = Redis(port=port).register_script(lua.APPEND_MOVE)  # (no I/O: computes the sha)
    return GroupCommit(ConnectionPool(host="127.0.0.1", port=port), script, 0, timeout_s, 500)


KEYS = ["k1", "k2", "k3", "k4", "k5"]


def test_commands_are_packed_as_redis_py_packs_them() -> None:
    args: tuple[Any, ...] = ("EVALSHA", "ab" * 20, 5, *KEYS, 7, b"\x00\xff\r\n", "é", -3, 2.5,
                             "", b"", 0, 2**70, -1.5)
    expected = b"".join(Connection().pack_command(*args))
    assert pack(args) == expected
    with pytest.raises(TypeError):  # redis-py refuses booleans too (DataError)
        pack(("SET", "k", True))


async def test_batches_are_pipelined_without_waiting_for_replies(
        scripted: ScriptedRedis) -> None:
    commit = committer(scripted.port)
    calls = []
    for i in range(4):  # four ticks, each its own batch, none answered yet
        calls.append(asyncio.ensure_future(commit.submit(KEYS, [1, "1", i + 1, b"e", "m"])))
        await scripted.until(i + 1)
    assert [(c, cmd[0]) for c, cmd in scripted.commands] == [(0, b"EVALSHA")] * 4
    assert [cmd[10] for _, cmd in scripted.commands] == [b"1", b"2", b"3", b"4"]
    scripted.reply(0, b"*2\r\n:0\r\n:1\r\n*2\r\n:-1\r\n:7\r\n*2\r\n:-2\r\n:3\r\n"
                      b"-BUSY Redis is busy running a script\r\n")
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert results[:3] == [[0, 1], [-1, 7], [-2, 3]]  # each call its own reply
    assert isinstance(results[3], StoreUnavailable) and "BUSY" in str(results[3])
    await commit.close()


async def test_a_batch_past_its_deadline_fails_and_the_next_has_a_new_connection(
        scripted: ScriptedRedis) -> None:
    commit = committer(scripted.port, timeout_s=0.05)
    with pytest.raises(StoreUnavailable, match="no reply within"):
        await commit.submit(KEYS, [1, "1", 1, b"e", "m"])  # never answered
    second = asyncio.ensure_future(commit.submit(KEYS, [1, "1", 1, b"e", "m"]))
    await scripted.until(2)
    assert [c for c, _ in scripted.commands] == [0, 1]  # not on the dropped connection
    scripted.reply(1, APPENDED)
    assert await second == [0, 1]
    await commit.close()


async def test_a_call_lost_with_its_connection_is_sent_once_more(
        scripted: ScriptedRedis) -> None:
    commit = committer(scripted.port)
    call = asyncio.ensure_future(commit.submit(KEYS, [1, "1", 1, b"e", "m"]))
    await scripted.until(1)
    scripted.drop(0)  # lost: did it run? the call goes again (APPEND_MOVE is idempotent)
    await scripted.until(2)
    assert scripted.commands[1] == (1, scripted.commands[0][1])  # the same command
    scripted.reply(1, APPENDED)
    assert await call == [0, 1]
    # Lost twice: failed, not sent a third time.
    call = asyncio.ensure_future(commit.submit(KEYS, [1, "1", 2, b"e", "m"]))
    await scripted.until(3)
    scripted.drop(1)
    await scripted.until(4)
    scripted.drop(2)
    with pytest.raises(StoreUnavailable, match="connection"):
        await call
    assert [c for c, _ in scripted.commands] == [0, 1, 1, 2]
    await commit.close()


async def test_calls_answered_by_callback_hear_their_own_reply_once_in_their_context(
        scripted: ScriptedRedis) -> None:
    """``submit_later``: no callback before the call returns; each call's callback runs
    once, from the reply (no task current), in the context the call was made in, with
    its own reply, a Redis error as ``StoreUnavailable``; a call lost with two
    connections is failed, once, too."""
    import contextvars

    commit = committer(scripted.port)
    who: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="none")
    heard: list[tuple[str, Any, bool]] = []
    all_heard = asyncio.Event()

    def callback(outcome: Any) -> None:
        heard.append((who.get(), outcome, asyncio.current_task() is not None))
        if len(heard) == 3:
            all_heard.set()

    def call(name: str, seq: int) -> None:
        who.set(name)
        commit.submit_later(KEYS, [1, "1", seq, b"e", "m"], bulk(KEYS), callback)

    for name, seq in (("a", 1), ("b", 2), ("c", 3)):
        contextvars.copy_context().run(call, name, seq)
    assert heard == []  # never before the call returned
    await scripted.until(3)
    assert [cmd[10] for _, cmd in scripted.commands] == [b"1", b"2", b"3"]
    scripted.reply(0, b"*2\r\n:0\r\n:1\r\n*2\r\n:-1\r\n:7\r\n-BUSY Redis is busy\r\n")
    await asyncio.wait_for(all_heard.wait(), EVENT_TIMEOUT_S)
    assert [(name, in_task) for name, _, in_task in heard] == [
        ("a", False), ("b", False), ("c", False)]
    assert [outcome for _, outcome, _ in heard[:2]] == [[0, 1], [-1, 7]]
    assert isinstance(heard[2][1], StoreUnavailable) and "BUSY" in str(heard[2][1])
    # lost with two connections: failed, once
    failed = asyncio.Event()
    lost: list[Any] = []
    commit.submit_later(KEYS, [1, "1", 4, b"e", "m"], bulk(KEYS),
                        lambda outcome: (lost.append(outcome), failed.set()))
    await scripted.until(4)
    scripted.drop(0)
    await scripted.until(5)
    scripted.drop(1)
    await asyncio.wait_for(failed.wait(), EVENT_TIMEOUT_S)
    await commit.close()
    assert len(lost) == 1 and isinstance(lost[0], StoreUnavailable)


async def test_callback_calls_of_one_tick_go_out_early_in_order_each_its_own_reply(
        scripted: ScriptedRedis) -> None:
    """With nothing on the wire the first callback call is written at once; then
    ``EARLY_WRITE`` callback calls queued in one loop tick are written at once (Redis
    starts on them while the node judges the rest of the tick's moves), the rest at the
    end of the tick: three batches on the wire before the tick ended (1, 8, then 2),
    every call sent once, in order, each answered with its own reply."""
    commit = committer(scripted.port)
    all_heard = asyncio.Event()
    connected = asyncio.Event()
    commit.submit_later(KEYS, [1, "1", 0, b"e", "m"], bulk(KEYS),
                        lambda outcome: connected.set())
    await scripted.until(1)
    scripted.reply(0, APPENDED)
    await asyncio.wait_for(connected.wait(), EVENT_TIMEOUT_S)  # (connected now)
    heard: list[Any] = []
    count = GroupCommit.EARLY_WRITE + 3

    def callback(outcome: Any) -> None:
        heard.append(outcome)
        if len(heard) == count:
            all_heard.set()

    for seq in range(1, count + 1):  # one tick: no await in between
        commit.submit_later(KEYS, [1, "1", seq, b"e", "m"], bulk(KEYS), callback)
    assert len(commit._on_wire) == 2  # the first alone, the next EARLY_WRITE already
    assert len(commit._queue) == count - 1 - GroupCommit.EARLY_WRITE  # for the tick's end
    await scripted.until(1 + count)
    assert [cmd[10] for _, cmd in scripted.commands[1:]] == [
        str(seq).encode() for seq in range(1, count + 1)]
    scripted.reply(0, b"".join(b"*2\r\n:0\r\n:%d\r\n" % seq for seq in range(1, count + 1)))
    await asyncio.wait_for(all_heard.wait(), EVENT_TIMEOUT_S)
    assert heard == [[0, seq] for seq in range(1, count + 1)]
    await commit.close()


async def test_a_flushed_script_is_sent_once_with_its_text(
        redis_server: Callable[..., RedisProcess]) -> None:
    redis = redis_server()
    store = RedisStore.from_url(redis.url)
    try:
        code = await room_with_seats(store)
        await store.append_move(code, 1, 1, 1, LogEntry("1>f", 1), moves=1)  # cached
        redis.command("SCRIPT", "FLUSH")  # as after a restart of Redis
        async with Monitor(redis.url) as monitor:
            await store.append_move(code, 1, 1, 2, LogEntry("2>f", 2), event=b"e", moves=2)
            ran = await monitor.commands()
        # one more round trip, not two (redis-py's way: SCRIPT LOAD, then EVALSHA again)
        assert [name for kind, name in ran if kind != "lua"] == ["EVALSHA", "EVAL"]
        assert [e.move for e in await store.read_log(code, 1)] == ["1>f", "2>f"]
        async with Monitor(redis.url) as monitor:  # cached again by EVAL
            await store.append_move(code, 1, 1, 3, LogEntry("3>f", 3), moves=3)
            ran = await monitor.commands()
        assert [name for kind, name in ran if kind != "lua"] == ["EVALSHA"]
    finally:
        await store.close()


async def test_the_urls_password_and_database_are_used(
        redis_server: Callable[..., RedisProcess]) -> None:
    redis = redis_server()
    redis.command("CONFIG", "SET", "requirepass", "s3cret")
    url = f"redis://:s3cret@127.0.0.1:{redis.port}/3"
    store = RedisStore.from_url(url)
    other_db = Redis(port=redis.port, password="s3cret", db=0)
    try:
        code = await room_with_seats(store)
        await store.append_move(code, 1, 1, 1, LogEntry("1>f", 1), moves=1)
        assert await store.read_log(code, 1) == [LogEntry("1>f", 1)]  # read through redis-py
        assert await other_db.keys("*log*") == []  # written to db 3, not db 0
        wrong = RedisStore.from_url(f"redis://:wrong@127.0.0.1:{redis.port}/3")
        with pytest.raises(StoreUnavailable):
            await wrong._committer.submit(KEYS, [1, "1", 1, b"e", "m"])  # type: ignore[union-attr]
        await wrong.close()
    finally:
        await other_db.aclose()
        await store.close()


async def test_the_subscriber_stops_reading_past_its_bound_and_loses_nothing(
        redis_server: Callable[..., RedisProcess], monkeypatch: pytest.MonkeyPatch) -> None:
    """Events the node has read but not handled are bounded (``MAX_PENDING_MESSAGES``):
    past it the subscriber stops reading (Redis holds the rest), below half it reads
    again; every event still arrives, once, in order."""
    from server.store import redis_bus

    monkeypatch.setattr(redis_bus, "MAX_PENDING_MESSAGES", 4)
    paused = asyncio.Event()  # observed after each read: the subscriber stopped reading
    original = redis_bus.Subscriber.data_received

    def observed(self: redis_bus.Subscriber, data: bytes) -> None:
        original(self, data)
        if self._paused:
            paused.set()

    monkeypatch.setattr(redis_bus.Subscriber, "data_received", observed)
    redis = redis_server()
    node, publisher = RedisStore.from_url(redis.url), RedisStore.from_url(redis.url)
    try:
        code = await room_with_seats(node)
        got: list[bytes] = []
        sent = [str(i).encode() for i in range(20)]
        first, release, done = asyncio.Event(), asyncio.Event(), asyncio.Event()

        def keep(event: bytes) -> None:
            got.append(event)
            if len(got) == len(sent):
                done.set()

        async def slow(event: bytes) -> None:  # the first event holds the listener up
            first.set()
            await release.wait()
            keep(event)

        await node.subscribe(code, lambda e: slow(e) if e == b"0" else keep(e))
        await publisher.publish(code, sent[0])
        await asyncio.wait_for(first.wait(), EVENT_TIMEOUT_S)
        for event in sent[1:]:
            await publisher.publish(code, event)
        subscriber = node._bus._listeners["main"]._pubsub
        assert subscriber is not None
        await asyncio.wait_for(paused.wait(), EVENT_TIMEOUT_S)
        release.set()
        await asyncio.wait_for(done.wait(), EVENT_TIMEOUT_S)
        assert got == sent
        assert not subscriber._paused  # reading again once handled
    finally:
        await node.close()
        await publisher.close()


async def test_a_unix_socket_url_carries_appends_and_events(
        redis_server: Callable[..., RedisProcess], tmp_path: Path) -> None:
    socket_path = tmp_path / "redis.sock"
    redis = redis_server("--unixsocket", str(socket_path), "--unixsocketperm", "700")
    store = RedisStore.from_url(f"unix://{socket_path}?db=2")
    try:
        code = await room_with_seats(store)
        got: asyncio.Queue[bytes] = asyncio.Queue()
        await store.subscribe(code, got.put_nowait)
        await store.append_move(code, 1, 1, 1, LogEntry("1>f", 1), event=b"moved", moves=1)
        assert await asyncio.wait_for(got.get(), EVENT_TIMEOUT_S) == b"moved"
        assert await store.read_log(code, 1) == [LogEntry("1>f", 1)]
        clients = redis.command("CLIENT", "LIST").decode().splitlines()
        # the subscriber and the appends' own connection (a fresh Redis: the script went
        # as EVAL after NOSCRIPT), both on the URL's database
        assert any("db=2 sub=1" in c for c in clients)
        assert any("db=2 " in c and " cmd=eval " in c for c in clients)
    finally:
        await store.close()


async def test_a_call_with_nothing_on_the_wire_is_written_before_the_loop_goes_on(
        scripted: ScriptedRedis) -> None:
    """A callback call that finds Redis idle (nothing on the wire) is written in the
    call itself, not a loop callback later (where a slice of a spectators' tick may be
    queued ahead of it); one that comes while a batch is on the wire waits for the end of
    the tick, with the others of that tick."""
    commit = committer(scripted.port)
    connected = asyncio.Event()
    commit.submit_later(KEYS, [1, "1", 0, b"e", "m"], bulk(KEYS),
                        lambda outcome: connected.set())
    await scripted.until(1)
    scripted.reply(0, APPENDED)
    await asyncio.wait_for(connected.wait(), EVENT_TIMEOUT_S)
    assert not commit._on_wire  # the reply is in: Redis is idle
    heard: list[Any] = []
    two = asyncio.Event()

    def callback(outcome: Any) -> None:
        heard.append(outcome)
        if len(heard) == 2:
            two.set()

    commit.submit_later(KEYS, [1, "1", 1, b"e", "m"], bulk(KEYS), callback)
    assert len(commit._on_wire) == 1 and not commit._queue  # written in the call
    commit.submit_later(KEYS, [1, "1", 2, b"e", "m"], bulk(KEYS), callback)
    assert len(commit._on_wire) == 1 and len(commit._queue) == 1  # waits for the tick
    await scripted.until(3)
    assert [cmd[10] for _, cmd in scripted.commands[1:]] == [b"1", b"2"]
    scripted.reply(0, b"*2\r\n:0\r\n:1\r\n*2\r\n:0\r\n:2\r\n")
    await asyncio.wait_for(two.wait(), EVENT_TIMEOUT_S)
    assert heard == [[0, 1], [0, 2]]
    await commit.close()
