"""What only the Redis store has: TTLs, idempotent retries of ambiguous writes, outages
(StoreUnavailable, fast; recovery when Redis is back) and Redis Cluster placement."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest
from redis.asyncio.cluster import RedisCluster
from redis.crc import key_slot

from server.store import Checkpoint, LogEntry, SeatRecord, SeqConflict, StoreUnavailable
from server.store.redis import RedisStore
from server.store.redis_bus import HISTORY_LEN
from server.store.redis_keys import RoomKeys as _Keys
from server.store.redis_scripts import HISTORY_TRIM_EVERY
from tests.conftest import RedisClusterProcesses, RedisProcess

from .test_contract import make_room, new_code, room_with_seats

# A liveness guard, not a timing assert: the store's own socket timeouts decide how soon an
# outage is reported (seconds); this only turns a call that hangs forever into a failure.
HANG_GUARD_S = 60


def _int_reply(raw: bytes) -> int:
    assert raw.startswith(b":"), raw
    return int(raw[1:].strip())


async def test_expire_room_sets_ttls_that_later_keys_inherit(
    shared_redis: RedisProcess, redis_url: str
) -> None:
    store = RedisStore.from_url(redis_url)
    try:
        code = await room_with_seats(store, seats=2)
        await store.append_move(code, 1, 1, 1, LogEntry("1>f", 1))
        await store.expire_room(code, 100)
        # created after expire_room: must not outlive the room
        await store.append_move(code, 2, 1, 1, LogEntry("2>f", 2))
        await store.put_results(code, b"results")
        await store.put_checkpoint(code, 2, Checkpoint(seq=1, clock_ms=2, round=1, layout=b"",
                                                       reached=[]))
        keys = _Keys(code)
        for key in (keys.room, keys.seats, keys.log(1), keys.log(2), keys.results,
                    *keys.checkpoints(2)):
            ttl = _int_reply(shared_redis.command("TTL", key))
            assert 90 <= ttl <= 100, (key, ttl)
        assert await store.get_room(code) is not None, "still there until the TTL runs out"
    finally:
        await store.close()


async def test_ambiguous_writes_can_be_retried(redis_url: str) -> None:
    store = RedisStore.from_url(redis_url)
    try:
        code = await room_with_seats(store)
        entry = LogEntry("1>f", 10)
        await store.append_move(code, 1, 1, 1, entry, moves=1)
        # the same append again (its reply was lost): success, stored once
        await store.append_move(code, 1, 1, 1, LogEntry("1>f", 11), moves=1)
        assert await store.read_log(code, 1) == [entry]
        with pytest.raises(SeqConflict) as conflict:  # a different move is a real conflict
            await store.append_move(code, 1, 1, 1, LogEntry("2>f", 11))
        assert conflict.value.expected == 2

        # the scripts recognise their own earlier success by the call's token
        room = _Keys(code).room
        lua_args = ["tok", b"\xa5lobby", b"\xa9countdown", "start_ms", b"\x05"]
        assert await store._script("SET_PHASE", [room], lua_args) == 1
        assert await store._script("SET_PHASE", [room], lua_args) == 1
        assert await store._script("SET_PHASE", [room], ["other", *lua_args[1:]]) == 0
        other = new_code()
        create_args = ["tok2", "code", b"\xa1x"]
        assert await store._script("CREATE_ROOM", [_Keys(other).room], create_args) == 1
        assert await store._script("CREATE_ROOM", [_Keys(other).room], create_args) == 1
        assert await store._script("CREATE_ROOM", [_Keys(other).room], ["tok3"]) == 0
    finally:
        await store.close()


async def test_add_seat_retry_returns_the_same_seat(redis_url: str) -> None:
    store = RedisStore.from_url(redis_url)
    try:
        code = new_code()
        assert await store.create_room(make_room(code))
        keys = _Keys(code)
        args = ["seat-token", b"\xa5lobby", 4, 1, "name", b"\xa1a"]
        assert await store._script("ADD_SEAT", [keys.room, keys.seats], args) == 1
        assert await store._script("ADD_SEAT", [keys.room, keys.seats], args) == 1
        assert len(await store.get_seats(code)) == 1
        assert await store.add_seat(code, SeatRecord(seat=0, name="b"), 4) == 2
    finally:
        await store.close()


async def test_outage_is_reported_fast_and_heals(redis_server: Callable[..., RedisProcess]) -> None:
    server = redis_server()
    store = RedisStore.from_url(server.url)
    listener = RedisStore.from_url(server.url)
    got: asyncio.Queue[bytes] = asyncio.Queue()
    try:
        code = await room_with_seats(store)
        await listener.subscribe(code, got.put_nowait)
        assert await store.healthy()

        server.stop()
        for call in (
            store.get_room(code),
            store.append_move(code, 1, 1, 1, LogEntry("1>f", 1)),
            store.create_room(make_room(new_code())),
            store.publish(code, b"lost"),
        ):
            with pytest.raises(StoreUnavailable):  # not a hang (TimeoutError), not raw
                await asyncio.wait_for(call, HANG_GUARD_S)
        assert not await store.healthy()

        server.start()  # same port, empty (no persistence in tests)
        assert await store.healthy()
        fresh = await room_with_seats(store)
        await store.append_move(fresh, 1, 1, 1, LogEntry("1>f", 1))
        assert await store.read_log(fresh, 1) == [LogEntry("1>f", 1)]
        # the listener resubscribes by itself; publish until it hears (bounded)
        deadline = time.monotonic() + 10
        while True:
            assert time.monotonic() < deadline, "the subscriber did not come back"
            await store.publish(code, b"probe")
            try:
                assert await asyncio.wait_for(got.get(), 0.2) == b"probe"
                break
            except TimeoutError:
                continue  # not resubscribed yet: publish again
    finally:
        await store.close()
        await listener.close()


async def test_subscribe_during_outage_fails_cleanly(
    redis_server: Callable[..., RedisProcess],
) -> None:
    server = redis_server()
    store = RedisStore.from_url(server.url)
    try:
        server.stop()
        with pytest.raises(StoreUnavailable):
            await store.subscribe("ROOM", lambda event: None)
        server.start()
        got: asyncio.Queue[bytes] = asyncio.Queue()
        await store.subscribe("ROOM", got.put_nowait)
        await store.publish("ROOM", b"x")
        assert await asyncio.wait_for(got.get(), 5) == b"x"
    finally:
        await store.close()


async def test_cluster_spreads_rooms_and_keeps_each_in_one_slot(
    redis_cluster: RedisClusterProcesses,
) -> None:
    store = RedisStore.from_url(redis_cluster.url)
    assert isinstance(store._client, RedisCluster)
    try:
        # 8 rooms in each third of the slots (one master each)
        codes = []
        for third in range(3):
            for _ in range(8):
                while True:
                    code = new_code()
                    if key_slot(_Keys(code).room.encode()) * 3 // 16384 == third:
                        break
                assert await store.create_room(make_room(code))
                for n in (1, 2):
                    seat = SeatRecord(seat=0, name=f"p{n}")
                    assert await store.add_seat(code, seat, 2) == n
                codes.append(code)
        for code in codes[:3]:
            await store.append_move(code, 2, 1, 1, LogEntry("1>f", 1))
            await store.put_results(code, b"r")
            keys = _Keys(code)
            node = redis_cluster.nodes[0]
            slots = {
                _int_reply(node.command("CLUSTER", "KEYSLOT", key))
                for key in (keys.room, keys.seats, keys.log(2), keys.results, keys.events,
                            *keys.checkpoints(2))
            }
            assert len(slots) == 1, "every key of a room shares its slot"
        sizes = [_int_reply(n.command("DBSIZE")) for n in redis_cluster.nodes]
        assert sum(1 for s in sizes if s > 0) == 3, f"rooms on every master: {sizes}"
        assert len(await store.list_rooms()) == 24
    finally:
        await store.close()


def test_from_url_options() -> None:
    standalone = RedisStore.from_url("redis://127.0.0.1:1/0?socket_timeout=0.25")
    assert not standalone._cluster
    kwargs = standalone._client.connection_pool.connection_kwargs
    assert kwargs["socket_timeout"] == 0.25 and kwargs["socket_connect_timeout"] == 1.0
    clustered = RedisStore.from_url("redis://u:p%40ss@127.0.0.1:1/0?cluster=1")
    assert clustered._cluster and isinstance(clustered._client, RedisCluster)
    # the per-master subscriber connections authenticate like the cluster client
    options = clustered._bus._node_options
    assert (options["username"], options["password"], options["ssl"]) == ("u", "p@ss", False)


async def test_a_missed_event_is_caught_up_in_order(
    redis_url: str, shared_redis: RedisProcess
) -> None:
    node_a, node_b = RedisStore.from_url(redis_url), RedisStore.from_url(redis_url)
    got: asyncio.Queue[bytes] = asyncio.Queue()
    try:
        code = await room_with_seats(node_a)
        await node_a.subscribe(code, got.put_nowait)
        await node_b.publish(code, b"one")
        # an event that reached the history but whose message never arrived (as when a
        # subscriber's connection drops for a moment)
        keys = _Keys(code)
        shared_redis.command("HINCRBY", keys.event_counter, "n", "1")
        numbering = shared_redis.command("HGET", keys.event_counter, "e").split(b"\r\n")[1]
        shared_redis.command("RPUSH", keys.event_history, numbering.decode() + ":2:two")
        await node_b.publish(code, b"three")
        received = [await asyncio.wait_for(got.get(), 5) for _ in range(3)]
        assert received == [b"one", b"two", b"three"]
        await node_b.publish(code, b"four")
        assert await asyncio.wait_for(got.get(), 5) == b"four"
        assert got.empty(), "nothing twice"
    finally:
        await node_a.close()
        await node_b.close()


async def test_the_event_history_is_trimmed_in_steps_within_its_bound(
    redis_url: str, shared_redis: RedisProcess
) -> None:
    # The history keeps at least HISTORY_LEN events and at most HISTORY_LEN +
    # HISTORY_TRIM_EVERY - 1 (the LTRIM runs once every HISTORY_TRIM_EVERY events), both
    # from moves' events and from other events: the numbering is shared.
    store = RedisStore.from_url(redis_url)
    try:
        code = await room_with_seats(store)
        keys = _Keys(code)
        most = HISTORY_LEN + HISTORY_TRIM_EVERY - 1
        total = HISTORY_LEN + 2 * HISTORY_TRIM_EVERY + 5
        lengths = []
        seq = 0
        for n in range(1, total + 1):
            if n % 2:
                seq += 1
                await store.append_move(code, 1, 1, seq, LogEntry("1>f", n),
                                        event=b"m%d" % n, moves=seq)
            else:
                await store.publish(code, b"p%d" % n)
            length = _int_reply(shared_redis.command("LLEN", keys.event_history))
            assert min(n, HISTORY_LEN) <= length <= most, (n, length)
            lengths.append(length)
        assert max(lengths) == most, "it grows past HISTORY_LEN between trims"
        numbering, counter, history = await store._event_history(keys.events)
        assert counter == total
        # the newest events, in order, none missing: what a catch-up relies on
        numbers = [number for _, number, _ in history]
        assert numbers == list(range(total - len(numbers) + 1, total + 1))
        assert HISTORY_LEN <= len(numbers) <= most
        assert history[-1] == (numbering, total, b"m%d" % total)
    finally:
        await store.close()


@pytest.mark.parametrize("persistent", [True, False])
async def test_events_published_while_a_subscriber_reconnects_arrive(
    redis_server: Callable[..., RedisProcess], persistent: bool
) -> None:
    extra = ("--appendonly", "yes", "--appendfsync", "always") if persistent else ()
    server = redis_server(*extra)
    node_a, node_b = RedisStore.from_url(server.url), RedisStore.from_url(server.url)
    got: asyncio.Queue[bytes] = asyncio.Queue()
    try:
        code = new_code()
        await node_a.subscribe(code, got.put_nowait)
        await node_b.publish(code, b"before")
        assert await asyncio.wait_for(got.get(), 5) == b"before"
        server.restart()  # SIGKILL, then the same port again
        # published as soon as Redis is back, before node_a's subscriber has reconnected
        events = [f"after{i}".encode() for i in range(5)]
        for event in events:
            await node_b.publish(code, event)
        received = [await asyncio.wait_for(got.get(), 5) for _ in events]
        assert received == events
        assert got.empty()
    finally:
        await node_a.close()
        await node_b.close()


async def test_cluster_failover_keeps_events_flowing(
    redis_cluster_with_replicas: RedisClusterProcesses,
) -> None:
    cluster = redis_cluster_with_replicas
    listener, publisher = RedisStore.from_url(cluster.url), RedisStore.from_url(cluster.url)
    got: asyncio.Queue[bytes] = asyncio.Queue()
    try:
        code = await room_with_seats(publisher)
        await listener.subscribe(code, got.put_nowait)
        await publisher.publish(code, b"before")
        assert await asyncio.wait_for(got.get(), 5) == b"before"
        # kill the master that owns the room (SIGKILL); its replica takes over
        slot = _int_reply(cluster.nodes[0].command("CLUSTER", "KEYSLOT", _Keys(code).room))
        owner = next(n for n in cluster.nodes if _owns(n, slot))
        owner.stop()
        survivors = [n for n in cluster.nodes if n is not owner]
        deadline = time.monotonic() + 30
        while not all(b"cluster_state:ok" in n.command("CLUSTER", "INFO") for n in survivors):
            assert time.monotonic() < deadline, "no failover"
            await asyncio.sleep(0.1)  # bounded polling of the cluster state
        while True:  # the publisher's client finds the new master by itself (bounded)
            try:
                await publisher.publish(code, b"after")
                break
            except StoreUnavailable:
                assert time.monotonic() < deadline, "cannot publish after the failover"
        assert await asyncio.wait_for(got.get(), 15) == b"after"
        assert await listener.get_room(code) is not None, "the room survived on the replica"
    finally:
        await listener.close()
        await publisher.close()


def _owns(node: RedisProcess, slot: int) -> bool:
    """Whether ``node`` is the master serving ``slot`` (from its own CLUSTER NODES)."""
    for line in node.command("CLUSTER", "NODES").decode().splitlines():
        fields = line.split()
        if len(fields) > 8 and "myself" in fields[2] and "master" in fields[2]:
            for span in fields[8:]:
                low, _, high = span.partition("-")
                if low.isdigit() and int(low) <= slot <= int(high or low):
                    return True
    return False


async def test_cluster_subscriber_handles_many_rooms_unsubscribes_and_reconnects(
    redis_cluster: RedisClusterProcesses, caplog: pytest.LogCaptureFixture
) -> None:
    url = redis_cluster.url
    listener, publisher = RedisStore.from_url(url), RedisStore.from_url(url)
    codes = [new_code() for _ in range(12)]  # spread over the three masters
    queues: dict[str, asyncio.Queue[bytes]] = {c: asyncio.Queue() for c in codes}
    try:
        for code in codes:
            await listener.subscribe(code, queues[code].put_nowait)
        for code in codes[:4]:
            await listener.unsubscribe(code, queues[code].put_nowait)
        await publisher.publish(codes[4], b"probe")
        assert await asyncio.wait_for(queues[codes[4]].get(), 5) == b"probe"
        assert "lost its connection" not in caplog.text, "unsubscribing disturbed a listener"
        for node in redis_cluster.nodes:  # drop every subscriber connection
            node.command("CLIENT", "KILL", "TYPE", "pubsub")
        for code in codes[4:]:
            await publisher.publish(code, code.encode())
        for code in codes[4:]:  # each master's listener resubscribed all its rooms
            assert await asyncio.wait_for(queues[code].get(), 10) == code.encode()
        assert all(queues[c].empty() for c in codes)
    finally:
        await listener.close()
        await publisher.close()
