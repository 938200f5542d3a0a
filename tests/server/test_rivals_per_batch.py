"""A batch of moves reaches each rival in one write (docs/BENCHMARKS.md, "Rivals' frames
written once per batch"): the memory store delivers the moves the loop read in one pass
in one callback (``MemoryStore._deliver_now``) and calls what rooms asked of
``after_events`` at its end; the room writes its players then, each once, in order.
Real ``MemoryStore`` and ``Connection`` objects over websockets' own server protocol;
the frames are read back with websockets' own frame parser."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest

from protocol import decode_server
from protocol.messages import Progress
from server import events as ev
from server.config import ServerConfig
from server.connection import Connection
from server.metrics import Metrics
from server.room import Member, Room
from server.store.memory import MemoryStore
from server.store.records import LogEntry, RoomRecord, SeatRecord

from .test_buffers import START_MS, _moves
from .test_shared_frames import Transport, Ws, _parsed

CODE = "BTCH"


class CountingTransport(Transport):
    """A stand-in transport that also counts its writes (each one a system call)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, data: bytes) -> None:
        self.writes += 1
        super().write(data)

    def writelines(self, chunks: list[bytes]) -> None:
        self.writes += 1
        super().writelines(chunks)


def _rival() -> tuple[Connection, Ws]:
    ws = Ws()
    ws.transport = CountingTransport()
    server = SimpleNamespace(config=ServerConfig(), metrics=Metrics(), frame_hook=None)
    conn = Connection(server, ws)  # type: ignore[arg-type]
    return conn, ws


async def _subscribed_room(store: MemoryStore) -> Room:
    """A running Spanish room with seats 1 and 2, subscribed to ``store`` as a node's
    room is (its event handler called by the store's delivery)."""
    record = RoomRecord(code=CODE, settings={"v": "spanish", "o": {}, "sd": 0},
                        seed=7, salt="00", commitment="c", start_ms=START_MS)
    await store.create_room(record)
    await store.add_seat(CODE, SeatRecord(seat=0, name="a"), 2)
    await store.add_seat(CODE, SeatRecord(seat=0, name="b"), 2)
    await store.set_phase(CODE, "lobby", "running")
    host = SimpleNamespace(config=ServerConfig(clock=lambda: START_MS), store=store,
                           metrics=Metrics())
    room = Room(host, await store.get_room(CODE))  # type: ignore[arg-type]
    room.cards.racing, room.cards.down = {1, 2}, {1: 0, 2: 0}  # nothing face down (Spanish)
    await store.subscribe(CODE, room._event_now)
    return room


def _append(store: MemoryStore, count: int) -> list[tuple[int, int]]:
    """Seat 1's first ``count`` moves appended in one go, as the loop's reads of one
    pass append them; returns (seat, moves made) each rival should be told, in order."""
    told = []
    for seq, (move, state_hash, revealed) in enumerate(_moves(count), 1):
        event = ev.Moved(1, seq, move, state_hash, seq, list(revealed), seq, "playing")
        store.append_move_now(CODE, 1, 1, seq, LogEntry(move, seq), ev.encode_event(event),
                              {"moves": seq})
        told.append((1, seq))
    return told


async def test_a_batch_of_moves_reaches_a_rival_in_one_write_in_order() -> None:
    store = MemoryStore()
    room = await _subscribed_room(store)
    rival, ws = _rival()
    room.attach(Member(rival, 2, pending=None))
    told = _append(store, 5)
    store._deliver_now()  # the loop's callback for the batch, run here
    assert ws.transport.writes == 1  # five moves, one system call
    progress = [decode_server(f.data) for f in _parsed(ws.transport.data)]
    assert all(isinstance(p, Progress) for p in progress)
    assert [(p.seat, p.moves) for p in progress] == told
    assert rival.unflushed() == 0  # nothing left for the connection's own flush


async def test_a_move_outside_a_batch_is_written_at_once() -> None:
    store = MemoryStore()
    room = await _subscribed_room(store)
    rival, ws = _rival()
    room.attach(Member(rival, 2, pending=None))
    [(move, state_hash, revealed)] = _moves(1)
    event = ev.Moved(1, 1, move, state_hash, 1, list(revealed), 1, "playing")
    room._event_now(ev.encode_event(event))  # not from a store's batch (a bus message)
    assert ws.transport.writes == 1
    [frame] = _parsed(ws.transport.data)
    progress = decode_server(frame.data)
    assert isinstance(progress, Progress) and (progress.seat, progress.moves) == (1, 1)


async def test_after_events_runs_once_at_the_end_of_the_batch() -> None:
    store = MemoryStore()
    seen: list[Any] = []

    def handler(event: bytes) -> None:
        seen.append(event)
        if len(seen) == 1:  # asked twice within the batch: both run, once each, at its end
            assert store.after_events(lambda: seen.append("after 1"))
            assert store.after_events(lambda: seen.append("after 2"))

    await store.subscribe("R", handler)
    assert store.after_events(lambda: seen.append("never")) is False  # no batch now
    await store.create_room(RoomRecord(code="R", settings={}, seed=1, salt="", commitment=""))
    await store.add_seat("R", SeatRecord(seat=0, name="a"), 1)
    for seq in (1, 2, 3):
        store.append_move_now("R", 1, 1, seq, LogEntry("m", seq), b"e%d" % seq, {})
    store._deliver_now()
    assert seen == [b"e1", b"e2", b"e3", "after 1", "after 2"]
    assert store.after_events(lambda: seen.append("never")) is False  # the batch is over


async def test_a_failing_callback_is_logged_and_the_others_run(
        caplog: pytest.LogCaptureFixture) -> None:
    store = MemoryStore()
    ran: list[str] = []

    def broken() -> None:
        raise RuntimeError("boom")

    def handler(event: bytes) -> None:
        store.after_events(broken)
        store.after_events(lambda: ran.append("second"))

    await store.subscribe("R", handler)
    await store.create_room(RoomRecord(code="R", settings={}, seed=1, salt="", commitment=""))
    await store.add_seat("R", SeatRecord(seat=0, name="a"), 1)
    store.append_move_now("R", 1, 1, 1, LogEntry("m", 1), b"e", {})
    with caplog.at_level(logging.ERROR):
        store._deliver_now()
    assert ran == ["second"]
    assert "after delivering events failed" in caplog.text


async def test_a_batch_handed_to_a_task_runs_its_callbacks_before_returning() -> None:
    store = MemoryStore()
    seen: list[Any] = []

    async def later() -> None:
        seen.append("awaited")

    def handler(event: bytes) -> Any:
        seen.append(event)
        if event == b"e1":
            store.after_events(lambda: seen.append("after"))
            return later()  # the rest of the batch goes on in a task
        # in the task: no batch in place, the caller acts at once
        assert store.after_events(lambda: seen.append("never")) is False
        return None

    await store.subscribe("R", handler)
    await store.create_room(RoomRecord(code="R", settings={}, seed=1, salt="", commitment=""))
    await store.add_seat("R", SeatRecord(seat=0, name="a"), 1)
    for seq in (1, 2):
        store.append_move_now("R", 1, 1, seq, LogEntry("m", seq), b"e%d" % seq, {})
    store._deliver_now()
    assert seen == [b"e1", "after"]  # owed callbacks run when the in-place batch ends
    assert store._deliverer is not None
    await store._deliverer
    assert seen == [b"e1", "after", "awaited", b"e2"]
