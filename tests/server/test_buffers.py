"""Every buffer a room keeps for its members is bounded (server/config.py), and what
happens at the bound loses nothing a client waits on (docs/SERVER.md, "Buffers"):

- a member's join buffer (events while its Joined is built): at the bound the member is
  closed with ``slow_consumer`` (it joins again and gets a fresh snapshot);
- a spectator's out-of-order diffs per seat: at the bound they are dropped and the gap is
  filled from the log, so it still gets every diff once, in order;
- the spectator delay buffer: at the bound a diff is not kept, and spectators fill it
  from the log once it is due; the buffer goes when the last spectator leaves.

A ``Room`` is driven directly with a real ``MemoryStore`` (a real race log), stand-in
connections that record what they are sent (frames decoded by the reference decoder),
and an injected clock; expected diffs come
from the engine playing the same moves.
"""

from __future__ import annotations

import asyncio
import random
from types import SimpleNamespace
from typing import Any

import engine
from protocol import Code, decode_server
from protocol.messages import Diff, Diffs, Progress
from server import events as ev
from server.config import ServerConfig
from server.metrics import Metrics
from server.room import Member, Room
from server.store.memory import MemoryStore
from server.store.records import LogEntry, RoomRecord, SeatRecord

from .client import lasting_move

START_MS = 1_800_000_000_000


class Peer:
    """A stand-in connection: keeps what it is sent."""

    def __init__(self, name: str) -> None:
        self.id, self.name, self.bot, self.address = id(self), name, False, "127.0.0.1"
        self.room: Any = None
        self.member: Any = None
        self.sent: list[Any] = []
        self.closed_with: list[Code] = []

    def send(self, message: Any) -> None:
        self.sent.append(message)

    def send_frame(self, frame: bytes) -> None:
        self.sent.append(decode_server(frame))

    def close_with(self, code: Code, message: str) -> None:
        self.closed_with.append(code)

    def count_room(self) -> None:
        pass

    def diffs(self) -> list[tuple[int, int, str, int]]:
        """Every diff it got, those inside ``Diffs`` frames included, in order."""
        out: list[Diff] = []
        for message in self.sent:
            if isinstance(message, Diff):
                out.append(message)
            elif isinstance(message, Diffs):
                out.extend(message.diffs)
        return [(d.seat, d.seq, d.move, d.hash) for d in out]


class BatchedPeer(Peer):
    """A stand-in connection whose hello set ``ds``: it takes ``Diffs`` frames."""

    batched = True


def _moves(count: int) -> list[tuple[str, int, list[tuple[int, str]]]]:
    """``count`` moves of a Spanish deal that keep the race going: (move, hash after,
    revealed), from the engine."""
    game = engine.new_game("spanish", seed=7)
    rng = random.Random(1)
    out = []
    for _ in range(count):
        diff = game.play(lasting_move(game, rng))
        out.append((diff.move, engine.view_hash(game.view()), [tuple(r) for r in diff.revealed]))
    return out  # type: ignore[return-value]


async def _room(now: list[int], moves: int, delay_s: int = 0, **config: Any
                ) -> tuple[Room, MemoryStore, list[ev.Moved]]:
    """A running Spanish room with seat 1's ``moves`` in the store (race clock = seq ms)
    and the Moved events that announced them."""
    store = MemoryStore()
    record = RoomRecord(code="BUFS", settings={"v": "spanish", "o": {}, "sd": delay_s},
                        seed=7, salt="00", commitment="c", start_ms=START_MS)
    await store.create_room(record)
    await store.add_seat("BUFS", SeatRecord(seat=0, name="p"), 2)
    await store.set_phase("BUFS", "lobby", "running")
    events = []
    for seq, (move, state_hash, revealed) in enumerate(_moves(moves), 1):
        await store.append_move("BUFS", 1, 1, seq, LogEntry(move, seq), moves=seq)
        events.append(ev.Moved(1, seq, move, state_hash, seq, list(revealed), 0, "playing"))
    host = SimpleNamespace(config=ServerConfig(clock=lambda: now[0], **config), store=store,
                           metrics=Metrics())
    room = Room(host, await store.get_room("BUFS"))  # type: ignore[arg-type]
    room.cards.racing, room.cards.down = {1}, {1: 0}  # nothing face down (Spanish)
    return room, store, events


async def _settle(room: Room) -> None:
    while room._tasks:
        await asyncio.gather(*list(room._tasks))


def _expected(events: list[ev.Moved], first: int, last: int) -> list[tuple[int, int, str, int]]:
    return [(1, e.seq, e.move, e.hash) for e in events if first <= e.seq <= last]


async def test_a_join_buffer_at_its_bound_closes_the_member() -> None:
    now = [START_MS]
    room, _, events = await _room(now, 5, member_pending_max=3)
    peer = Peer("joining")
    member = Member(peer, 0)
    room.attach(member)  # pending: its Joined is being built
    for event in events[:3]:
        await room._on_event(ev.encode_event(event))
    assert peer.closed_with == [] and len(member.pending or []) == 3
    await room._on_event(ev.encode_event(events[3]))
    assert peer.closed_with == [Code.SLOW_CONSUMER]
    await room._on_event(ev.encode_event(events[4]))
    assert peer.closed_with == [Code.SLOW_CONSUMER], "closed once"
    assert member.pending == [], "nothing more kept for it"
    room.ready(member)
    assert peer.sent == [], "a member being closed gets nothing after the overflow"


async def test_a_join_buffer_within_its_bound_delivers_everything_in_order() -> None:
    now = [START_MS]
    room, _, events = await _room(now, 3, member_pending_max=3)
    peer = Peer("joining")
    member = Member(peer, 0)
    room.attach(member)
    for event in events:
        await room._on_event(ev.encode_event(event))
    room.ready(member)
    await _settle(room)
    assert peer.closed_with == [] and peer.diffs() == _expected(events, 1, 3)


async def test_out_of_order_diffs_past_the_bound_are_filled_from_the_log() -> None:
    now = [START_MS]
    room, _, events = await _room(now, 60, member_held_max=4, checkpoint_every=16)
    peer = Peer("watcher")
    member = Member(peer, 0, pending=None)
    room.attach(member)
    # move 1's event is lost (its node crashed after storing it): 2..60 arrive
    for event in events[1:]:
        await room._on_event(ev.encode_event(event))
        assert len(member.held.get(1, {})) <= 4
    await _settle(room)
    assert peer.diffs() == _expected(events, 1, 60), "every diff once, in order"
    assert member.held.get(1, {}) == {}


async def test_the_delay_buffer_at_its_bound_loses_nothing_and_goes_with_the_spectators(
) -> None:
    now = [START_MS]
    room, _, events = await _room(now, 30, delay_s=5, delay_buffer_max=8)
    peer = Peer("watcher")
    member = Member(peer, 0, pending=None)
    room.attach(member)
    for event in events:  # race clock 1..30 ms: due at START + 5,001 .. 5,030
        await room._on_event(ev.encode_event(event))
    assert len(room._delay.buffer) == 8
    now[0] = START_MS + 5_010
    room._delay.fire()
    await _settle(room)
    assert peer.diffs() == _expected(events, 1, 8), "the kept ones that are due"
    now[0] = START_MS + 5_030
    room._delay.fire()
    await _settle(room)
    assert peer.diffs() == _expected(events, 1, 30), "the rest from the log, once due"
    for event in events:  # the same moves again (another node's copy): kept, then...
        await room._on_event(ev.encode_event(event))
    assert room._delay.buffer and room._delay.timer is not None
    # ...the last spectator leaves: the buffer and its timer go
    room.detach(peer)  # type: ignore[arg-type]
    assert len(room._delay.buffer) == 0 and room._delay.timer is None


async def test_no_delay_buffer_without_a_spectator() -> None:
    now = [START_MS]
    room, _, events = await _room(now, 10, delay_s=5)
    for event in events:
        await room._on_event(ev.encode_event(event))
    assert len(room._delay.buffer) == 0 and room._delay.timer is None


def _count_encodes(monkeypatch: Any) -> list[Any]:
    """The messages the room module, its spectators' tick and its spectators' diffs
    encode from now on."""
    from server import room as room_module
    from server import spectator_diffs, spectator_ticks

    encoded: list[Any] = []
    real = room_module.encode

    def counting(message: Any) -> bytes:
        encoded.append(message)
        return real(message)

    monkeypatch.setattr(room_module, "encode", counting)
    monkeypatch.setattr(spectator_ticks, "encode", counting)
    monkeypatch.setattr(spectator_diffs, "encode", counting)
    return encoded


async def test_a_move_is_encoded_once_for_all_spectators(monkeypatch: Any) -> None:
    now = [START_MS]
    room, _, events = await _room(now, 2)
    encoded = _count_encodes(monkeypatch)
    peers = [Peer(f"w{i}") for i in range(5)]
    for peer in peers:
        room.attach(Member(peer, 0, pending=None))
    for event in events:
        await room._on_event(ev.encode_event(event))
    assert all(peer.diffs() == _expected(events, 1, 2) for peer in peers)
    # per move one Progress and one Diff, whatever the number of spectators
    assert [type(m) for m in encoded] == [Progress, Diff, Progress, Diff]


async def test_the_same_move_twice_in_the_delay_buffer_goes_out_once() -> None:
    """Two copies of a move (its event and a joiner's window from the log, or two
    joiners' windows) wait side by side; the spectator gets it once."""
    now = [START_MS]
    room, _, events = await _room(now, 4, delay_s=5)
    peer = Peer("watcher")
    room.attach(Member(peer, 0, pending=None))
    for event in events + events:
        await room._on_event(ev.encode_event(event))
    assert len(room._delay.buffer) == 8
    now[0] = START_MS + 6_000
    room._delay.fire()
    assert peer.diffs() == _expected(events, 1, 4)


async def test_a_tick_is_one_frame_encoded_once_for_every_spectator_in_step(
        monkeypatch: Any) -> None:
    now = [START_MS]
    room, _, events = await _room(now, 3)
    encoded = _count_encodes(monkeypatch)
    peers = [BatchedPeer(f"w{i}") for i in range(5)]
    for peer in peers:
        room.attach(Member(peer, 0, pending=None))
    for event in events:
        await room._on_event(ev.encode_event(event))
    assert all(peer.sent == [] for peer in peers)  # nothing before the tick
    room._ticks.flush()
    for peer in peers:
        assert [type(x) for x in peer.sent] == [Diffs]
        assert peer.diffs() == _expected(events, 1, 3)
        # the latest progress of the seat only (moves = its last sequence)
        assert [(p.seat, p.moves) for p in peer.sent[0].progress] == [(1, 3)]
    assert [type(x) for x in encoded] == [Diffs]


async def test_a_spectator_out_of_step_gets_its_own_filtered_frame() -> None:
    now = [START_MS]
    room, _, events = await _room(now, 3)
    in_step, ahead = BatchedPeer("in step"), BatchedPeer("ahead")
    room.attach(Member(in_step, 0, pending=None))
    room.attach(Member(ahead, 0, pending=None, diff_seen={1: 2}, progress_seen={1: 2}))
    for event in events:
        await room._on_event(ev.encode_event(event))
    room._ticks.flush()
    assert in_step.diffs() == _expected(events, 1, 3)
    assert ahead.diffs() == _expected(events, 3, 3)  # no duplicate of what it had


async def test_a_withheld_spectator_gets_progress_and_no_diff() -> None:
    now = [START_MS]
    room, _, events = await _room(now, 3)
    room.cards.down = {1: 5}  # a face-down card on the racing seat: the room hides boards
    hidden = BatchedPeer("hidden")
    room.attach(Member(hidden, 0, pending=None, boards_hidden=True))
    for event in events:
        await room._on_event(ev.encode_event(event))
    room._ticks.flush()
    assert hidden.diffs() == []
    assert [(p.seat, p.moves) for f in hidden.sent for p in f.progress] == [(1, 3)]


async def test_a_joining_spectator_has_the_tick_buffered_then_gets_it_in_order() -> None:
    now = [START_MS]
    room, _, events = await _room(now, 4)
    joining = BatchedPeer("joining")
    member = Member(joining, 0)  # pending: its Joined is being built
    room.attach(member)
    for event in events:
        await room._on_event(ev.encode_event(event))
    room._ticks.flush()
    assert joining.sent == []
    member.diff_seen[1] = 1  # its snapshot covered move 1
    room.ready(member)
    assert joining.diffs() == _expected(events, 2, 4)


async def test_delayed_diffs_falling_due_together_go_out_in_one_frame() -> None:
    now = [START_MS]
    room, _, events = await _room(now, 4, delay_s=5)
    peer = BatchedPeer("watcher")
    room.attach(Member(peer, 0, pending=None))
    for event in events:
        await room._on_event(ev.encode_event(event))
    room._ticks.flush()
    assert peer.diffs() == []  # live progress, no diff before its time
    assert [(p.seat, p.moves) for f in peer.sent for p in f.progress] == [(1, 4)]
    now[0] = START_MS + 6_000
    room._delay.fire()
    room._ticks.flush()
    assert [len(f.diffs) for f in peer.sent] == [0, 4]
    assert peer.diffs() == _expected(events, 1, 4)
