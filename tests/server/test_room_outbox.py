"""The room's outbox (server/room_outbox.py): events leave in order, a full queue drops
its oldest waiting event and never the one behind an event in flight, and only the very
bytes this node encoded are taken back without decoding."""

from __future__ import annotations

import asyncio
from typing import Any

from server import events as ev
from server.room_outbox import OWN_EVENTS_MAX, RoomOutbox


class _GatedChannel:
    """The store's ``publish`` as the outbox sees it: records each call and answers
    only once the test opens the gate (a publish in flight for as long as it likes)."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.gate = asyncio.Event()
        self.called = asyncio.Event()

    async def publish(self, code: str, data: bytes) -> None:
        self.sent.append(data)
        self.called.set()
        await self.gate.wait()


def _event(n: int) -> ev.Broadcast:
    return ev.Broadcast(frame=bytes([n]))


async def test_a_full_outbox_drops_the_oldest_waiting_event_and_keeps_the_order() -> None:
    channel = _GatedChannel()
    store: Any = channel
    outbox = RoomOutbox(store, "ROOM", 2, lambda: False)
    outbox.publish(_event(1))
    await channel.called.wait()  # event 1 is in flight
    for n in (2, 3, 4):  # limit 2: 3 drops 1 from the queue (it is sent), 4 drops 2
        outbox.publish(_event(n))
    channel.gate.set()
    await outbox.flush()
    assert [ev.decode_event(d) for d in channel.sent] == [_event(1), _event(3), _event(4)]


async def test_only_the_same_bytes_come_back_as_the_event_and_only_once() -> None:
    store: Any = _GatedChannel()
    outbox = RoomOutbox(store, "ROOM", 8, lambda: False)
    moved = ev.Moved(seat=1, seq=1, move="t1-2", hash=7, clock_ms=5, revealed=[], progress=1,
                     status="playing", down=20)
    data = outbox.encode_own(moved)
    assert outbox.own_event(bytes(bytearray(data))) is None  # equal, not the same object
    assert outbox.own_event(data) is moved
    assert outbox.own_event(data) is None  # handed back once
    first = outbox.encode_own(moved)
    for _ in range(OWN_EVENTS_MAX):
        outbox.encode_own(moved)
    assert outbox.own_event(first) is None  # the oldest forgotten past the bound
