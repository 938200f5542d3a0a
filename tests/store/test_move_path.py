"""One move, one store call (docs/SERVER.md "One move"): ``append_move`` with an event
stores the move and publishes its event in one atomic step; on a standalone Redis the
appends of one loop tick go out as one pipelined round trip (group commit), each
answered on its own.

The contract part runs on every backend; the counting part on a private Redis of its
own, counted by Redis itself (``MONITOR``: which commands a client sent, as opposed to
those a script ran; ``INFO stats``: how many reads it served), never by our code."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from redis.asyncio import Redis

from server.store import LogEntry, SeqConflict, StaleEpoch, Store
from server.store.redis import RedisStore
from tests.conftest import RedisProcess

from .test_contract import EVENT_TIMEOUT_S, room_with_seats


async def _events(store: Store, code: str) -> asyncio.Queue[bytes]:
    got: asyncio.Queue[bytes] = asyncio.Queue()
    await store.subscribe(code, got.put_nowait)
    return got


async def test_an_appended_move_publishes_its_event_once_and_in_order(
        store_pair: tuple[Store, Store]) -> None:
    node_a, node_b = store_pair
    code = await room_with_seats(node_a, seats=2)
    got = await _events(node_b, code)
    for seq in (1, 2, 3):
        await node_a.append_move(code, 1, 1, seq, LogEntry(f"{seq}>f", seq),
                                 event=f"move {seq}".encode(), moves=seq)
    await node_a.publish(code, b"after the moves")
    with pytest.raises(SeqConflict):  # refused: nothing stored, nothing published
        await node_a.append_move(code, 1, 1, 9, LogEntry("9>f", 9), event=b"never")
    await node_a.take_seat(code, 2)
    with pytest.raises(StaleEpoch):
        await node_a.append_move(code, 2, 1, 1, LogEntry("1>f", 1), event=b"never either")
    await node_a.publish(code, b"last")
    received = [await asyncio.wait_for(got.get(), EVENT_TIMEOUT_S) for _ in range(5)]
    assert received == [b"move 1", b"move 2", b"move 3", b"after the moves", b"last"]
    assert (await node_a.get_seat(code, 1)).moves == 3  # type: ignore[union-attr]


async def test_the_memory_store_delivers_a_moves_event_after_the_call_returns() -> None:
    from server.store.memory import MemoryStore

    store = MemoryStore()
    code = await room_with_seats(store)
    seen: list[bytes] = []
    await store.subscribe(code, seen.append)
    await store.append_move(code, 1, 1, 1, LogEntry("1>f", 1), event=b"moved")
    assert seen == []  # ack first: the caller runs before any subscriber
    await store.publish(code, b"next")  # delivered after the move's event, in order
    assert seen == [b"moved", b"next"]


async def test_the_memory_store_waits_for_an_async_handler_before_the_next_event() -> None:
    """Moves' events are delivered from a loop callback with synchronous handlers called
    in place; a handler that returns an awaitable makes the rest wait for it: the
    event's later handlers, the later events and a ``publish`` all come after it."""
    from server.store.memory import MemoryStore

    store = MemoryStore()
    code = await room_with_seats(store)
    seen: list[str] = []
    entered, release = asyncio.Event(), asyncio.Event()

    async def waiting(event: bytes) -> None:
        seen.append(f"async {event.decode()} in")
        entered.set()
        await release.wait()  # the test lets it finish
        seen.append(f"async {event.decode()} out")

    def slow_first(event: bytes) -> Any:
        return waiting(event) if event == b"1" else seen.append(f"async {event.decode()}")

    await store.subscribe(code, lambda event: seen.append(f"first {event.decode()}"))
    await store.subscribe(code, slow_first)
    await store.subscribe(code, lambda event: seen.append(f"last {event.decode()}"))
    for seq in (1, 2):
        await store.append_move(code, 1, 1, seq, LogEntry(f"{seq}>f", seq),
                                event=str(seq).encode(), moves=seq)
    published = asyncio.ensure_future(store.publish(code, b"3"))
    await asyncio.wait_for(entered.wait(), EVENT_TIMEOUT_S)
    # What is under test is loop turns, not time: the deliveries of event 2 and of the
    # publish are already scheduled, so a store that did not wait for the handler would
    # run them in the next turns. Five turns give them every chance; none may happen.
    for _ in range(5):
        await asyncio.sleep(0)
    assert seen == ["first 1", "async 1 in"] and not published.done()
    release.set()
    await asyncio.wait_for(published, EVENT_TIMEOUT_S)
    assert seen == ["first 1", "async 1 in", "async 1 out", "last 1",
                    "first 2", "async 2", "last 2", "first 3", "async 3", "last 3"]


# ---------------------------------------------------------------------------- counted by Redis
class Monitor:
    """Redis ``MONITOR`` on a connection of its own: the commands clients sent (``tcp``)
    and those scripts ran (``lua``), up to a marker command."""

    def __init__(self, url: str) -> None:
        self.client = Redis.from_url(url)
        self.marker = Redis.from_url(url)

    async def __aenter__(self) -> Monitor:
        self.monitor = self.client.monitor()
        await self.monitor.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.monitor.__aexit__(*exc)
        await self.client.aclose()
        await self.marker.aclose()

    async def commands(self) -> list[tuple[str, str]]:
        """(client type, command name) of everything run since entering, in order."""
        await self.marker.echo("end-of-test-marker")
        out: list[tuple[str, str]] = []
        async with asyncio.timeout(EVENT_TIMEOUT_S):
            while True:
                seen = await self.monitor.next_command()
                words = seen["command"].split()
                if words[:2] == ["ECHO", "end-of-test-marker"]:
                    return out
                if words[0].upper() not in ("HELLO", "CLIENT", "INFO"):  # set-up, counting
                    out.append((seen["client_type"], words[0].upper()))


def _reads(redis: RedisProcess) -> int:
    """Read events Redis has served (one per request burst a client sent)."""
    for line in redis.command("INFO", "stats").decode().splitlines():
        if line.startswith("total_reads_processed:"):
            return int(line.split(":")[1])
    raise AssertionError("no total_reads_processed in INFO stats")


async def test_one_move_is_one_command_that_appends_and_publishes(
        redis_server: Callable[..., RedisProcess]) -> None:
    redis = redis_server()
    store = RedisStore.from_url(redis.url)
    try:
        code = await room_with_seats(store)
        await store.append_move(code, 1, 1, 1, LogEntry("1>f", 1), event=b"warm", moves=1)
        async with Monitor(redis.url) as monitor:
            await store.append_move(code, 1, 1, 2, LogEntry("2>f", 2), event=b"e", moves=2,
                                    progress=2, status="playing")
            ran = await monitor.commands()
        sent = [name for kind, name in ran if kind != "lua"]
        in_script = [name for kind, name in ran if kind == "lua"]
        assert sent == ["EVALSHA"], "one command from the node for one move"
        assert "RPUSH" in in_script and "PUBLISH" in in_script and "HSET" in in_script
        assert "HGETALL" not in in_script  # nothing read back for the ranking
    finally:
        await store.close()


async def test_moves_of_one_tick_share_one_round_trip_and_fail_one_by_one(
        redis_server: Callable[..., RedisProcess]) -> None:
    redis = redis_server()
    store = RedisStore.from_url(redis.url)
    try:
        codes = [await room_with_seats(store) for _ in range(6)]
        for code in codes:  # warm: the script loaded, the pooled connection open
            await store.append_move(code, 1, 1, 1, LogEntry("1>f", 1), moves=1)
        await store.take_seat(codes[2], 1)  # taken over: its writer is stale
        async with Monitor(redis.url) as monitor:
            first = _reads(redis)
            before = _reads(redis)
            own = before - first  # what one INFO of ours adds to the count
            results = await asyncio.gather(*(
                store.append_move(code, 1, 1, 3 if i == 4 else 2, LogEntry("2>f", 2),
                                  event=b"e", moves=2)
                for i, code in enumerate(codes)), return_exceptions=True)
            reads = _reads(redis) - before - own
            ran = await monitor.commands()
        assert isinstance(results[2], StaleEpoch)
        assert isinstance(results[4], SeqConflict) and results[4].expected == 2
        assert [r for i, r in enumerate(results) if i not in (2, 4)] == [None] * 4
        for i, code in enumerate(codes):
            moves = [e.move for e in await store.read_log(code, 1)]
            assert moves == (["1>f"] if i in (2, 4) else ["1>f", "2>f"])
        assert [name for kind, name in ran if kind != "lua"] == ["EVALSHA"] * 6
        assert [name for kind, name in ran if kind == "lua"].count("PUBLISH") == 4
        # the six moves reached Redis in one request burst (one per move would be 6)
        assert reads == 1, reads
    finally:
        await store.close()
