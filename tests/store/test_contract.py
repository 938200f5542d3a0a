"""The Store contract (server/store/base.py), checked on every backend: memory, a private
standalone Redis, and a private 3-master Redis Cluster."""

from __future__ import annotations

import asyncio
import secrets

import pytest

from server.store import (
    Checkpoint,
    LogEntry,
    RoomRecord,
    SeatRecord,
    SeqConflict,
    StaleEpoch,
    Store,
)

EVENT_TIMEOUT_S = 5.0


def new_code() -> str:
    return secrets.token_hex(3).upper()


def make_room(code: str, **fields: object) -> RoomRecord:
    base: dict[str, object] = {
        "code": code,
        "settings": {"v": "brisbane", "o": {"kings_to_bottom": True}, "m": 4},
        "seed": 2**64 - 1,
        "salt": "ab" * 8,
        "commitment": "c0ffee",
        "created_ms": 1_700_000_000_000,
    }
    base.update(fields)
    return RoomRecord(**base)  # type: ignore[arg-type]


async def room_with_seats(store: Store, seats: int = 1, max_players: int = 4) -> str:
    code = new_code()
    assert await store.create_room(make_room(code))
    for i in range(seats):
        assert await store.add_seat(code, SeatRecord(seat=0, name=f"p{i}"), max_players) == i + 1
    return code


# ---------------------------------------------------------------------------- rooms


async def test_create_get_and_list_rooms(store: Store) -> None:
    code = new_code()
    room = make_room(code, creator=1, start_ms=None, winnable=True, par=77)
    assert await store.create_room(room)
    assert not await store.create_room(make_room(code, seed=5)), "a taken code is refused"
    assert await store.get_room(code) == room
    assert await store.get_room(new_code()) is None
    other = new_code()
    assert await store.create_room(make_room(other, created_ms=1_700_000_000_001))
    assert {r.code for r in await store.list_rooms()} >= {code, other}
    assert await store.set_phase(other, "lobby", "finished", end_reason="abandoned")
    listed = {r.code for r in await store.list_rooms()}
    assert code in listed and other not in listed, "finished rooms are not listed"


async def test_awkward_codes_are_kept_apart(store: Store) -> None:
    # braces would change a Redis Cluster hash tag; percent signs are the escape
    codes = ["{A}", "}B{", "%7B", "C%"]
    for code in codes:
        assert await store.create_room(make_room(code))
        assert await store.add_seat(code, SeatRecord(seat=0, name=code), 2) == 1
    for code in codes:
        room = await store.get_room(code)
        assert room is not None and room.code == code
        assert [s.name for s in await store.get_seats(code)] == [code]


async def test_set_phase_is_compare_and_set(store: Store) -> None:
    code = await room_with_seats(store)
    assert not await store.set_phase(code, "running", "finished"), "wrong expectation"
    assert not await store.set_phase(new_code(), "lobby", "countdown"), "no such room"
    assert await store.set_phase(code, "lobby", "countdown", start_ms=123)
    room = await store.get_room(code)
    assert room is not None and room.phase == "countdown" and room.start_ms == 123
    assert room.seed == 2**64 - 1, "other fields are untouched"
    with pytest.raises(TypeError):
        await store.set_phase(code, "countdown", "running", no_such_field=1)
    room = await store.get_room(code)
    assert room is not None and room.phase == "countdown", "a bad call changes nothing"


async def test_concurrent_set_phase_has_exactly_one_winner(store_pair: tuple[Store, Store]) -> None:
    first, second = store_pair
    for _ in range(10):
        code = new_code()
        assert await first.create_room(make_room(code))
        results = await asyncio.gather(
            first.set_phase(code, "lobby", "countdown", start_ms=1),
            second.set_phase(code, "lobby", "countdown", start_ms=2),
        )
        assert sorted(results) == [False, True]
        room = await second.get_room(code)
        assert room is not None and room.start_ms == (1 if results[0] else 2)


# ---------------------------------------------------------------------------- seats


async def test_concurrent_joins_get_distinct_seats(store_pair: tuple[Store, Store]) -> None:
    first, second = store_pair
    code = new_code()
    assert await first.create_room(make_room(code))
    joins = [
        (first if i % 2 else second).add_seat(code, SeatRecord(seat=0, name=f"n{i}"), 4)
        for i in range(12)
    ]
    numbers = await asyncio.gather(*joins)
    taken = [n for n in numbers if n is not None]
    assert sorted(taken) == [1, 2, 3, 4]
    seats = await first.get_seats(code)
    assert [s.seat for s in seats] == [1, 2, 3, 4]
    by_number = {n: f"n{i}" for i, n in enumerate(numbers) if n is not None}
    assert {s.seat: s.name for s in seats} == by_number


async def test_no_seats_outside_the_lobby(store: Store) -> None:
    assert await store.add_seat(new_code(), SeatRecord(seat=0, name="x"), 4) is None
    code = await room_with_seats(store, seats=1)
    assert await store.set_phase(code, "lobby", "countdown", start_ms=5)
    assert await store.add_seat(code, SeatRecord(seat=0, name="late"), 4) is None
    assert len(await store.get_seats(code)) == 1


async def test_seat_records_round_trip_and_update(store: Store) -> None:
    code = new_code()
    assert await store.create_room(make_room(code))
    seat = SeatRecord(seat=0, name="Ann", bot=True, token_hash="f" * 64, ready=True)
    assert await store.add_seat(code, seat, 2) == 1
    got = await store.get_seat(code, 1)
    assert got == SeatRecord(seat=1, name="Ann", bot=True, token_hash="f" * 64, ready=True)
    await store.update_seat(code, 1, connected=False, status="playing", progress_ms=None)
    got = await store.get_seat(code, 1)
    assert got is not None and not got.connected and got.status == "playing"
    assert got.name == "Ann" and got.epoch == 1
    assert await store.get_seat(code, 2) is None
    await store.update_seat(code, 2, ready=True)  # no such seat: nothing happens
    assert await store.get_seat(code, 2) is None
    with pytest.raises(TypeError):
        await store.update_seat(code, 1, epoch=9)
    assert (await store.get_seats(code))[0].epoch == 1


# ---------------------------------------------------------------------------- move logs


async def test_epoch_fencing_and_sequence(store_pair: tuple[Store, Store]) -> None:
    node_a, node_b = store_pair
    code = await room_with_seats(node_a)
    old = (await node_a.get_seat(code, 1)).epoch  # type: ignore[union-attr]
    await node_a.append_move(code, 1, old, 1, LogEntry("1>f", 10), progress=1, moves=1)
    new = await node_b.take_seat(code, 1)  # another node resumes the seat
    assert new == old + 1
    with pytest.raises(StaleEpoch):
        await node_a.append_move(code, 1, old, 2, LogEntry("2>f", 20), progress=2, moves=2)
    with pytest.raises(SeqConflict) as conflict:
        await node_b.append_move(code, 1, new, 5, LogEntry("2>f", 20))
    assert conflict.value.expected == 2
    await node_b.append_move(code, 1, new, 2, LogEntry("3>4", 30), moves=2, progress_ms=30)
    seat = await node_a.get_seat(code, 1)
    assert seat is not None and (seat.progress, seat.moves, seat.progress_ms) == (1, 2, 30)
    assert await node_a.read_log(code, 1) == [LogEntry("1>f", 10), LogEntry("3>4", 30)]
    assert await node_a.read_log(code, 1, after=1) == [LogEntry("3>4", 30)]
    assert await node_a.read_log(code, 1, after=2) == []
    with pytest.raises(KeyError):
        await node_a.take_seat(code, 3)
    with pytest.raises(StaleEpoch):
        await node_a.append_move(code, 3, 1, 1, LogEntry("1>f", 1))


async def test_concurrent_appends_store_each_sequence_once(store_pair: tuple[Store, Store]) -> None:
    node_a, node_b = store_pair
    code = await room_with_seats(node_a)
    appended = 0
    for seq in range(1, 21):
        tries = await asyncio.gather(
            node_a.append_move(code, 1, 1, seq, LogEntry(f"{seq}>f", seq)),
            node_b.append_move(code, 1, 1, seq, LogEntry(f"{seq}>f", seq)),
            return_exceptions=True,
        )
        won = [t for t in tries if t is None]
        lost = [t for t in tries if isinstance(t, SeqConflict)]
        # Redis treats the same move at the same seq and epoch as an idempotent retry
        assert len(won) + len(lost) == 2 and len(won) >= 1
        appended += 1
    log = await node_a.read_log(code, 1)
    assert [e.move for e in log] == [f"{s}>f" for s in range(1, appended + 1)]


async def test_read_log_pages(store: Store) -> None:
    code = await room_with_seats(store)
    # clocks that go up by a lot, stay put and (a wall clock stepped back) go down
    clocks = [0, 5, 5, 70_000, 3, 2**40, 2**40 + 1, *range(100, 400)]
    for seq, clock in enumerate(clocks, 1):
        await store.append_move(code, 1, 1, seq, LogEntry(f"{seq % 10}>f", clock))
    expected = [LogEntry(f"{seq % 10}>f", clock) for seq, clock in enumerate(clocks, 1)]
    assert await store.read_log(code, 1) == expected
    for after, limit in [(0, 1), (3, 4), (63, 2), (64, 64), (100, 1000), (307, 5), (5, 0)]:
        assert await store.read_log(code, 1, after=after, limit=limit) == \
            expected[after:after + limit], (after, limit)
    assert await store.read_log(code, 2) == []


def _checkpoint(seq: int, clock_ms: int, round_: int = 1) -> Checkpoint:
    return Checkpoint(seq=seq, clock_ms=clock_ms, round=round_, layout=bytes([seq % 256]) * 3,
                      reached=[(1, clock_ms), (2, clock_ms + 1)])


async def test_checkpoints_by_seq_and_by_clock(store_pair: tuple[Store, Store]) -> None:
    node_a, node_b = store_pair
    code = await room_with_seats(node_a, seats=2)
    assert await node_a.get_checkpoint(code, 1) is None
    for seq, clock in [(256, 1000), (512, 1000), (768, 5000), (1024, 9000)]:
        await node_a.put_checkpoint(code, 1, _checkpoint(seq, clock))
    await node_a.put_checkpoint(code, 2, _checkpoint(256, 1))
    assert await node_b.get_checkpoint(code, 1) == _checkpoint(1024, 9000)
    assert await node_b.get_checkpoint(code, 1, max_seq=1023) == _checkpoint(768, 5000)
    assert await node_b.get_checkpoint(code, 1, max_seq=768) == _checkpoint(768, 5000)
    assert await node_b.get_checkpoint(code, 1, max_seq=255) is None
    assert await node_b.get_checkpoint(code, 1, max_clock_ms=999) is None
    # two at the same clock: the later one
    assert await node_b.get_checkpoint(code, 1, max_clock_ms=4999) == _checkpoint(512, 1000)
    assert await node_b.get_checkpoint(code, 1, max_clock_ms=9000) == _checkpoint(1024, 9000)
    assert await node_b.get_checkpoint(code, 1, max_seq=600, max_clock_ms=8000) == \
        _checkpoint(512, 1000)
    assert await node_b.get_checkpoint(code, 1, max_seq=2000, max_clock_ms=5000) == \
        _checkpoint(768, 5000)
    assert await node_b.get_checkpoint(code, 2) == _checkpoint(256, 1), "seats apart"
    # written again (a resumed holder): replaced, not doubled
    await node_b.put_checkpoint(code, 1, _checkpoint(768, 5000, round_=2))
    assert await node_a.get_checkpoint(code, 1, max_seq=800) == _checkpoint(768, 5000, 2)
    assert await node_a.get_checkpoint(code, 1, max_clock_ms=6000) == _checkpoint(768, 5000, 2)
    # a seat that does not exist keeps none
    await node_a.put_checkpoint(code, 5, _checkpoint(256, 1))
    assert await node_a.get_checkpoint(code, 5) is None


async def test_results(store: Store) -> None:
    code = await room_with_seats(store)
    assert await store.get_results(code) is None
    await store.put_results(code, b"\x81\xa1t\xa7results")
    assert await store.get_results(code) == b"\x81\xa1t\xa7results"


async def test_a_room_with_a_ttl_stays_listed_until_it_expires(store: Store) -> None:
    code = await room_with_seats(store)
    await store.expire_room(code, 3600)  # e.g. a lobby that must not live forever
    assert await store.get_room(code) is not None
    assert code in {r.code for r in await store.list_rooms()}


async def test_expire_room_removes_everything(store: Store) -> None:
    code = await room_with_seats(store)
    await store.append_move(code, 1, 1, 1, LogEntry("1>f", 1))
    await store.put_checkpoint(code, 1, _checkpoint(1, 1))
    await store.put_results(code, b"r")
    keep = await room_with_seats(store)
    await store.expire_room(code, 0)
    assert await store.get_room(code) is None
    assert await store.get_seats(code) == []
    assert await store.read_log(code, 1) == []
    assert await store.get_checkpoint(code, 1) is None
    assert await store.get_results(code) is None
    assert code not in {r.code for r in await store.list_rooms()}
    assert await store.get_room(keep) is not None, "other rooms stay"


# ---------------------------------------------------------------------------- events


async def test_events_reach_every_node(store_pair: tuple[Store, Store]) -> None:
    node_a, node_b = store_pair
    code, other = new_code(), new_code()
    got_a: asyncio.Queue[bytes] = asyncio.Queue()
    got_b: asyncio.Queue[bytes] = asyncio.Queue()

    async def on_a(event: bytes) -> None:
        await got_a.put(event)

    def on_b(event: bytes) -> None:
        got_b.put_nowait(event)

    await node_a.subscribe(code, on_a)
    await node_b.subscribe(code, on_b)
    await node_b.subscribe(other, on_b)
    events = [f"e{i}".encode() for i in range(20)]
    for event in events:
        await node_b.publish(code, event)
    await node_a.publish(other, b"other-room")
    for queue in (got_a, got_b):
        received = [await asyncio.wait_for(queue.get(), EVENT_TIMEOUT_S) for _ in events]
        assert received == events, "every node gets every event, in order"
    assert await asyncio.wait_for(got_b.get(), EVENT_TIMEOUT_S) == b"other-room"
    assert got_a.empty(), "no events of rooms one did not subscribe to"

    await node_a.unsubscribe(code, on_a)
    await node_b.publish(code, b"after")
    assert await asyncio.wait_for(got_b.get(), EVENT_TIMEOUT_S) == b"after"
    # on a single node, the dispatch of "after" to b has run, so a's handler would have too
    if node_a is node_b:
        assert got_a.empty()


async def test_failing_handler_does_not_stop_delivery(store_pair: tuple[Store, Store]) -> None:
    node_a, node_b = store_pair
    code = new_code()
    got: asyncio.Queue[bytes] = asyncio.Queue()

    def broken(event: bytes) -> None:
        raise RuntimeError("handler bug")

    await node_a.subscribe(code, broken)
    await node_a.subscribe(code, got.put_nowait)
    await node_b.publish(code, b"one")
    await node_b.publish(code, b"two")
    assert await asyncio.wait_for(got.get(), EVENT_TIMEOUT_S) == b"one"
    assert await asyncio.wait_for(got.get(), EVENT_TIMEOUT_S) == b"two"


async def test_healthy(store: Store) -> None:
    assert await store.healthy()


async def test_first_results_win(store: Store) -> None:
    code = await room_with_seats(store)
    assert await store.put_results(code, b"first") == b"first"
    assert await store.put_results(code, b"second") == b"first"
    assert await store.get_results(code) == b"first"


async def test_deadlines_are_claimed_once_per_lease(store_pair: tuple[Store, Store]) -> None:
    one, two = store_pair
    await one.set_deadline("DLA", "start", 1_000)
    await one.set_deadline("DLB", "end", 500)
    await one.set_deadline("DLC", "end", 5_000)
    assert await one.claim_deadlines(400, lease_ms=100, limit=10) == []
    claimed = await one.claim_deadlines(1_000, lease_ms=100, limit=10)
    assert [(d.code, d.kind, d.at_ms, d.lease_ms) for d in claimed] == [
        ("DLB", "end", 500, 1_100), ("DLA", "start", 1_000, 1_100)]
    # the other node sees nothing due until the lease ends, then gets them again
    assert await two.claim_deadlines(1_099, lease_ms=100, limit=10) == []
    again = {d.code: d for d in await two.claim_deadlines(1_100, lease_ms=100, limit=10)}
    assert sorted((d.code, d.lease_ms) for d in again.values()) == [
        ("DLA", 1_200), ("DLB", 1_200)]
    # done with a stale claim (one's lease) does not remove what two holds now
    await one.done_deadline(claimed[0])
    assert await one.claim_deadlines(1_199, lease_ms=100, limit=10) == []
    await two.done_deadline(again["DLB"])
    # a deadline set again after the claim survives the claimer's done
    await one.set_deadline("DLA", "start", 9_000)
    await two.done_deadline(again["DLA"])
    await two.clear_deadline("DLC", "end")
    assert await one.claim_deadlines(8_999, lease_ms=100, limit=10) == []
    left = await one.claim_deadlines(9_000, lease_ms=100, limit=10)
    assert [(d.code, d.kind, d.at_ms) for d in left] == [("DLA", "start", 9_000)]
    await one.done_deadline(left[0])
    assert await one.claim_deadlines(10**12, lease_ms=100, limit=10) == []


async def test_list_public_pages_newest_first(store: Store) -> None:
    base = 9_000_000_000_000 + secrets.randbelow(10**9) * 100  # apart from other tests' rooms
    made: list[tuple[int, str]] = []
    for i, ms in enumerate([base + 1, base + 2, base + 3, base + 3, base + 5, base + 6]):
        code = f"L{i}{new_code()}"
        assert await store.create_room(make_room(code, created_ms=ms))
        made.append((ms, code))
    private = new_code()
    assert await store.create_room(make_room(private, created_ms=base + 4,
                                             settings={"v": "fortress", "pu": False}))
    finished = made.pop(1)  # base + 2
    assert await store.set_phase(finished[1], "lobby", "finished")
    await store.add_seat(made[0][1], SeatRecord(seat=0, name="a", bot=True), 4)
    # Expected by hand: public, not finished, by (created_ms, code) descending.
    expected = sorted(made, reverse=True)
    seen: list[tuple[int, str]] = []
    cursor: tuple[int, str] | None = (base + 7, "")
    while cursor is not None and len(seen) < len(expected):
        page, cursor = await store.list_public(cursor, 2)
        assert len(page) <= 2
        seen += [(r.created_ms, r.code) for r, _ in page]
    assert seen[:len(expected)] == expected
    seats = {r.code: s for r, s in (await store.list_public((base + 2, ""), 5))[0]}
    assert [(s.name, s.bot) for s in seats[made[0][1]]] == [("a", True)]
    await store.unlist_room(made[-1][1])
    page, _ = await store.list_public((base + 7, ""), 1)
    assert [r.code for r, _ in page] == [made[-2][1]]


async def test_remove_seat_frees_a_lobby_seat_only(store: Store) -> None:
    code = await room_with_seats(store, seats=2)
    assert not await store.remove_seat(code, 1, epoch=2), "another epoch holds it"
    assert await store.remove_seat(code, 1, epoch=1)
    assert not await store.remove_seat(code, 1, epoch=1), "already gone"
    assert [s.seat for s in await store.get_seats(code)] == [2]
    assert await store.get_seat(code, 1) is None
    assert await store.add_seat(code, SeatRecord(seat=0, name="new"), 4) == 1  # reused
    assert await store.set_phase(code, "lobby", "countdown")
    assert not await store.remove_seat(code, 2, epoch=1), "not in the lobby any more"
    assert [s.name for s in await store.get_seats(code)] == ["new", "p1"]


async def test_new_round_resets_a_finished_room_keeping_the_seats_asked(store: Store) -> None:
    code = await room_with_seats(store, 3)
    assert not await store.new_round(code, [1], round=2), "only a finished room"
    for seat in (1, 2, 3):
        await store.append_move(code, seat, 1, 1, LogEntry("1>2", 10), progress=1, moves=1,
                                status="won", progress_ms=10, finish_ms=10)
        await store.update_seat(code, seat, ready=True)
        await store.put_checkpoint(code, seat, _checkpoint(1, 10))
    assert await store.set_phase(code, "lobby", "finished", start_ms=5, end_reason="all_done")
    await store.put_results(code, b"results of round 1")
    epoch = await store.take_seat(code, 3)
    fields = {"seed": 7, "salt": "cd" * 8, "commitment": "beef", "round": 2, "start_ms": None,
              "end_reason": "", "created_ms": 1_700_000_000_500}
    assert await store.new_round(code, [1, 3], **fields)
    assert not await store.new_round(code, [1, 3], **fields), "once: it is in the lobby now"
    room = await store.get_room(code)
    assert room is not None and room.phase == "lobby" and room.round == 2
    assert (room.seed, room.commitment, room.start_ms, room.end_reason) == (7, "beef", None, "")
    assert await store.get_results(code) is None
    seats = await store.get_seats(code)
    assert [s.seat for s in seats] == [1, 3]
    for seat in seats:
        assert (seat.ready, seat.status, seat.progress, seat.moves) == (False, "lobby", 0, 0)
        assert (seat.progress_ms, seat.finish_ms, seat.name) == (None, None, f"p{seat.seat - 1}")
        assert await store.read_log(code, seat.seat) == []
        assert await store.get_checkpoint(code, seat.seat) is None, "the old round's board"
    assert seats[1].epoch == epoch, "epochs are kept: the holders are fenced as before"
    assert await store.get_seat(code, 2) is None and await store.read_log(code, 2) == []
    # the round races again: a move is stored from 1 on
    await store.append_move(code, 1, 1, 1, LogEntry("3>4", 20), moves=1)
    assert [e.move for e in await store.read_log(code, 1)] == ["3>4"]
    assert code in {r.code for r in await store.list_rooms()}, "listed again"
