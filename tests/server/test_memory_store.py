"""MemoryStore specifics (the shared contract tests live in tests/store/)."""

from __future__ import annotations

import asyncio

import pytest

from server.store import LogEntry, RoomRecord, SeatRecord, SeqConflict, StaleEpoch
from server.store.memory import MemoryStore


def _room(code: str = "ABCD") -> RoomRecord:
    return RoomRecord(code=code, settings={"v": "brisbane"}, seed=1, salt="00", commitment="x")


async def test_fencing_and_atomic_seat_fields() -> None:
    store = MemoryStore()
    assert await store.create_room(_room())
    assert not await store.create_room(_room())
    seat = await store.add_seat("ABCD", SeatRecord(seat=0, name="a"), 2)
    assert seat == 1
    epoch = await store.take_seat("ABCD", 1)
    assert epoch == 2
    with pytest.raises(StaleEpoch):
        await store.append_move("ABCD", 1, 1, 1, LogEntry("1>f", 5))
    with pytest.raises(SeqConflict) as exc:
        await store.append_move("ABCD", 1, 2, 2, LogEntry("1>f", 5))
    assert exc.value.expected == 1
    await store.append_move("ABCD", 1, 2, 1, LogEntry("1>f", 5), progress=1, moves=1)
    record = await store.get_seat("ABCD", 1)
    assert record is not None and record.progress == 1 and record.moves == 1
    assert await store.read_log("ABCD", 1) == [LogEntry("1>f", 5)]
    assert await store.read_log("ABCD", 1, after=1) == []


async def test_records_are_copies() -> None:
    store = MemoryStore()
    await store.create_room(_room())
    room = await store.get_room("ABCD")
    assert room is not None
    room.phase = "finished"
    room.settings["v"] = "spanish"
    again = await store.get_room("ABCD")
    assert again is not None and again.phase == "lobby" and again.settings["v"] == "brisbane"


async def test_phase_cas_and_full_room() -> None:
    store = MemoryStore()
    await store.create_room(_room())
    assert await store.add_seat("ABCD", SeatRecord(seat=0, name="a"), 1) == 1
    assert await store.add_seat("ABCD", SeatRecord(seat=0, name="b"), 1) is None
    assert await store.set_phase("ABCD", "lobby", "countdown", start_ms=10)
    assert not await store.set_phase("ABCD", "lobby", "countdown", start_ms=20)
    room = await store.get_room("ABCD")
    assert room is not None and room.start_ms == 10
    assert await store.add_seat("ABCD", SeatRecord(seat=0, name="c"), 4) is None
    assert [r.code for r in await store.list_rooms()] == ["ABCD"]
    assert await store.set_phase("ABCD", "countdown", "finished")
    assert await store.list_rooms() == []


async def test_publish_and_expiry() -> None:
    store = MemoryStore()
    await store.create_room(_room())
    got: list[bytes] = []
    done = asyncio.Event()

    async def handler(event: bytes) -> None:
        got.append(event)
        done.set()

    await store.subscribe("ABCD", handler)
    await store.publish("ABCD", b"one")
    await asyncio.wait_for(done.wait(), 1)
    await store.unsubscribe("ABCD", handler)
    await store.publish("ABCD", b"two")
    assert got == [b"one"]
    await store.expire_room("ABCD", 0)
    assert await store.get_room("ABCD") is None
