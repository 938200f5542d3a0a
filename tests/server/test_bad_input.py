"""Bad input: every case gets its documented code, changes nothing, and the server (and,
where sensible, the connection) stays usable."""

from __future__ import annotations

import socket

import msgpack
import pytest
from websockets.exceptions import ConnectionClosed

from protocol import messages as m
from protocol.verify import verify_results
from server import lobby
from server.app import Server
from server.store import SeatRecord, StoreUnavailable
from server.store.memory import MemoryStore

from ..clocks import HandClock
from .client import Board, TestClient
from .conftest import ServerFactory


async def _pong(client: TestClient, nonce: int = 7) -> None:
    await client.send(m.Ping(nonce=nonce))
    pong = await client.expect(m.Pong)
    assert pong.nonce == nonce


async def _started(server: Server, **settings: object) -> tuple[TestClient, TestClient, str]:
    one = await TestClient.connect(server.url, "one")
    two = await TestClient.connect(server.url, "two")
    joined = await one.create(**{"variant": "brisbane", "countdown_s": 0, **settings})
    await two.join(joined.code)
    await one.send(m.Ready())
    await two.send(m.Ready())
    await one.expect(m.Started)
    await two.expect(m.Started)
    return one, two, joined.code


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        (msgpack.packb({"t": "nope"}), "unknown_type"),
        (msgpack.packb({"x": 1}), "unknown_type"),
        (msgpack.packb({"t": "M", "s": "one", "m": "1>2"}), "bad_field"),
        (msgpack.packb({"t": "M", "s": 0, "m": "1>2"}), "bad_field"),
        (msgpack.packb({"t": "join", "c": "A" * 100}), "bad_field"),
        (msgpack.packb([1, 2, 3]), "bad_frame"),
        (b"\xc1\xff not msgpack", "bad_frame"),
        ("a text frame", "bad_frame"),
        (msgpack.packb({"t": "ping", "pad": "x" * 5000}), "frame_too_large"),
    ],
)
async def test_malformed_frames(server: Server, frame: bytes | str, code: str) -> None:
    client = await TestClient.connect(server.url, "c")
    await client.send_raw(frame)
    error = await client.expect_error(code)
    assert not error.fatal and error.message
    await _pong(client)


async def test_frames_beyond_the_websocket_limit_close_the_connection(server: Server) -> None:
    client = await TestClient.connect(server.url, "c")
    await client.send_raw(b"\x00" * (server.config.ws_max_size + 1))
    with pytest.raises(ConnectionClosed) as exc:
        await client.recv()
    assert exc.value.rcvd is not None and exc.value.rcvd.code == 1009
    await _pong(await TestClient.connect(server.url, "next"))  # the server is fine


async def test_session_order(server: Server) -> None:
    client = await TestClient.connect(server.url, "c", hello=False)
    await client.send(m.Join(code="ABCDEF"))
    await client.expect_error("hello_first")
    await client.send(m.Move(seq=1, move="1>2"))
    await client.expect_error("hello_first")
    await client.send(m.Hello(version=1, name="c"))
    await client.expect(m.Welcome)
    await client.send(m.Hello(version=1, name="c"))
    await client.expect_error("already_hello")
    for message, code in [(m.Ready(), "not_in_room"), (m.Resign(), "not_in_room"),
                          (m.Move(seq=1, move="1>2"), "not_in_room"), (m.Leave(), "not_in_room"),
                          (m.Join(code="NOROOM"), "no_such_room")]:
        await client.send(message)
        await client.expect_error(code)
    await _pong(client)


async def test_version_mismatch_is_fatal(server: Server) -> None:
    client = await TestClient.connect(server.url, "c", hello=False)
    await client.send(m.Hello(version=99, name="c"))
    error = await client.expect_error("version_mismatch")
    assert error.fatal
    assert (await client.expect(m.Closing)).code == "version_mismatch"
    assert await client.closed()


@pytest.mark.parametrize(
    ("settings", "needle"),
    [
        ({"variant": "klondike"}, "klondike"),
        ({"variant": "brisbane", "options": {"empty_pile": "queen"}}, "empty_pile"),
        ({"variant": "portuguese", "options": {"redeals": 2}}, "redeals"),
        ({"variant": "fortress", "spectators": False, "spectator_delay_s": 5}, "spectator"),
    ],
)
async def test_bad_settings_carry_the_engines_message(server: Server, settings: dict[str, object],
                                                      needle: str) -> None:
    client = await TestClient.connect(server.url, "c")
    await client.send(m.CreateRoom(settings=m.RoomSettings(**settings)))  # type: ignore[arg-type]
    error = await client.expect_error("bad_settings")
    assert needle in error.message
    assert await server.store.list_rooms() == []
    await _pong(client)


async def test_winnable_deals_come_with_a_par(server: Server) -> None:
    """deal=winnable: the solver proves the deal winnable before the room exists; the
    results say so and give the solution's length as par."""
    client = await TestClient.connect(server.url, "c")
    await client.send(m.CreateRoom(settings=m.RoomSettings(
        variant="portuguese", deal="winnable", countdown_s=0)))
    joined = await client.expect(m.Joined, wait=30)  # the search may take a few seconds
    await client.send(m.Ready())
    await client.expect(m.Started)
    await client.send(m.Resign())
    results = await client.expect(m.Results)
    assert results.winnable is True and results.par and results.par > 0
    assert verify_results(results).problems == []
    assert joined.commitment == results.commitment


async def test_room_rules(server: Server) -> None:
    one = await TestClient.connect(server.url, "one")
    joined = await one.create(variant="spanish", max_players=1, spectators=False,
                              countdown_s=0)
    other = await TestClient.connect(server.url, "other")
    await other.send(m.Join(code=joined.code))
    await other.expect_error("room_full")
    await other.send(m.Join(code=joined.code, role="spectator"))
    await other.expect_error("spectators_off")
    await one.send(m.Join(code=joined.code))
    await one.expect_error("already_in_room")
    await one.send(m.HintRequest())
    await one.expect_error("hints_off")
    await one.send(m.Move(seq=1, move="1>2"))
    before = await one.expect(m.Rejected)
    assert before.code == "not_running" and before.expected == 1
    await one.send(m.Resign())
    await one.expect_error("not_running")
    seats = await server.store.get_seats(joined.code)
    assert [s.moves for s in seats] == [0]


async def test_not_creator_and_closed_rooms(server: Server) -> None:
    one = await TestClient.connect(server.url, "one")
    two = await TestClient.connect(server.url, "two")
    joined = await one.create(variant="spanish", countdown_s=0)
    await two.join(joined.code)
    await two.send(m.StartNow())
    await two.expect_error("not_creator")
    await one.send(m.StartNow())
    await one.expect(m.Started)
    late = await TestClient.connect(server.url, "late")
    await late.send(m.Join(code=joined.code))
    await late.expect_error("room_closed")
    await one.send(m.Ready())
    await one.expect_error("room_closed")
    await one.send(m.Resign())
    await two.send(m.Resign())
    results = await one.expect(m.Results)
    await one.send(m.Move(seq=1, move="1>2"))
    after = await one.expect(m.Rejected)
    assert after.code == "finished"
    await one.send(m.Resign())
    await one.expect_error("finished")
    await late.send(m.Join(code=joined.code))
    await late.expect_error("room_closed")
    watcher = await late.join(joined.code, role="spectator")
    assert watcher.phase == "finished" and len(watcher.boards) == 2
    assert await late.expect(m.Results) == results


async def test_moves_are_judged_and_sequenced(server: Server) -> None:
    one, _two, code = await _started(server)
    for move, rejected in [("9>9", "illegal_move"), ("1>1", "illegal_move"),
                           ("x", "bad_notation"), ("1:1>2", "bad_notation")]:
        reply = await one.move(move)
        assert isinstance(reply, m.Rejected) and reply.code == rejected, reply
        assert reply.reason and reply.expected == 1
    reply = await one.move("1>f", seq=5)
    assert isinstance(reply, m.Rejected) and reply.code == "out_of_order" and reply.expected == 1
    assert await server.store.read_log(code, 1) == []


async def test_a_move_names_no_seat(server: Server) -> None:
    """The seat comes from the connection (bound at join/resume): there is no seat field
    in a move, and an extra one is ignored like any unknown key."""
    one, _two, code = await _started(server)
    board = Board(one.received(m.Started)[0].boards[0].view)
    move = board.legal()[0]
    await one.send_raw(msgpack.packb({"t": "M", "s": 1, "m": move, "p": 2}))
    ack = await one.expect(m.Accepted)
    assert ack.seq == 1
    assert [e.move for e in await server.store.read_log(code, 1)] == [move]
    assert await server.store.read_log(code, 2) == []


async def test_spectators_cannot_play(server: Server) -> None:
    _one, _two, code = await _started(server)
    watcher = await TestClient.connect(server.url, "w")
    await watcher.join(code, role="spectator")
    reply = await watcher.move("1>f")
    assert isinstance(reply, m.Rejected) and reply.code == "not_a_player"
    await watcher.send(m.Ready())
    await watcher.expect_error("not_a_player")


async def test_a_flood_is_rate_limited_and_the_connection_recovers(
    server_factory: ServerFactory,
) -> None:
    clock = HandClock()
    server = await server_factory(rate_burst=5, rate_per_s=16.0, monotonic=clock)
    client = await TestClient.connect(server.url, "flood")  # hello: 1 of the 5 credits
    for nonce in range(40):
        await client.send(m.Ping(nonce=nonce))
    replies = [await client.recv() for _ in range(40)]
    # Time stands still: 4 credits left after hello, so exactly the first 4 pings are
    # answered, in order, and the other 36 are refused (and refused retryably).
    assert [r.nonce for r in replies[:4] if isinstance(r, m.Pong)] == [0, 1, 2, 3]
    refused = replies[4:]
    assert all(isinstance(r, m.Error) and r.code == "rate_limited" and r.retryable
               for r in refused), refused
    clock.now += 0.0625  # 16 credits/s for 1/16 s: exactly one credit comes back
    await client.send(m.Ping(nonce=1000))
    await client.send(m.Ping(nonce=1001))
    first, second = await client.recv(), await client.recv()
    assert isinstance(first, m.Pong) and first.nonce == 1000
    assert isinstance(second, m.Error) and second.code == "rate_limited"
    clock.now += 3600  # an hour idle refills to the burst (5), never beyond it
    for nonce in range(6):
        await client.send(m.Ping(nonce=2000 + nonce))
    after_idle = [await client.recv() for _ in range(6)]
    assert [isinstance(r, m.Pong) for r in after_idle] == [True] * 5 + [False]


async def test_internal_errors_are_reported_not_leaked(server: Server,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(_server: Server) -> m.RoomList:
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(lobby, "list_rooms", broken)
    client = await TestClient.connect(server.url, "c")
    await client.send(m.ListRooms())
    error = await client.expect_error("internal")
    assert "secret" not in error.message and error.retryable
    await _pong(client)


class FlakyStore(MemoryStore):
    """A memory store whose appends fail while ``down`` is set, and whose seat reads
    fail while ``seats_down`` is (after ``seat_reads_left`` more reads succeed)."""

    down = False
    seats_down = False
    seat_reads_left = 0

    async def append_move(self, *args: object, **kwargs: object) -> None:
        if self.down:
            raise StoreUnavailable("down")
        await super().append_move(*args, **kwargs)  # type: ignore[arg-type]

    async def get_seats(self, code: str) -> list[SeatRecord]:
        if self.seats_down:
            self.seat_reads_left -= 1
            if self.seat_reads_left < 0:
                raise StoreUnavailable("down")
        return await super().get_seats(code)


async def test_a_join_that_fails_midway_leaves_no_phantom_seat() -> None:
    from server.config import ONE_HOST, ServerConfig

    store = FlakyStore()
    server = Server(ServerConfig(port=0, rate_burst=1000, **ONE_HOST), store=store)
    await server.start()
    try:
        one = await TestClient.connect(server.url, "one")
        joined = await one.create(variant="spanish", countdown_s=0)
        two = await TestClient.connect(server.url, "two")
        store.seats_down = True
        store.seat_reads_left = 1  # the join's name check reads the seats before adding one
        await two.send(m.Join(code=joined.code))
        error = await two.expect_error("store_unavailable")
        assert error.retryable
        store.seats_down = False
        seats = await store.get_seats(joined.code)
        assert [s.connected for s in seats] == [True, False]
        await one.send(m.Ready())  # the half-joined seat does not hold up the start
        await one.expect(m.Started)
    finally:
        await server.stop()


async def test_store_unavailable_rejects_and_changes_nothing() -> None:
    from server.config import ONE_HOST, ServerConfig

    store = FlakyStore()
    server = Server(ServerConfig(port=0, rate_burst=1000, **ONE_HOST), store=store)
    await server.start()
    try:
        one, _two, code = await _started(server)
        board = Board(one.received(m.Started)[0].boards[0].view)
        move = board.legal()[0]
        store.down = True
        reply = await one.move(move)
        assert isinstance(reply, m.Rejected) and reply.code == "store_unavailable"
        assert reply.retryable and reply.expected == 1
        store.down = False
        assert await store.read_log(code, 1) == []
        again = await one.move(move)  # the same move again: the cached game did not advance
        assert isinstance(again, m.Accepted) and again.seq == 1
        board.apply(move, again.revealed, again.hash)
    finally:
        await server.stop()


async def test_slow_consumers_are_cut_off(server_factory: ServerFactory) -> None:
    server = await server_factory(outbound_queue=8)
    client = await TestClient.connect(server.url, "slow")
    (conn,) = server.connections
    # A client that stops reading: frames go straight to the transport until it backs
    # up (the kernel's buffers full, small on purpose here), then wait in the queue,
    # which holds 8.
    client.ws.transport.pause_reading()
    server_socket = conn.ws.transport.get_extra_info("socket")
    server_socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    sent = 0
    while not conn.closing and sent < 10_000:  # bounded: 10 MB if nothing ever backs up
        conn.send(m.Error(code="x", message="y" * 1000))
        sent += 1
    assert conn.closing
    client.ws.transport.resume_reading()
    closing = await client.expect(m.Closing)
    assert closing.code == "slow_consumer"
    assert await client.closed()
    assert len(client.received(m.Error)) < sent


async def test_idle_connections_are_closed(server_factory: ServerFactory) -> None:
    server = await server_factory(idle_timeout_s=0.2, hello_timeout_s=0.2)
    quiet = await TestClient.connect(server.url, "quiet")
    silent = await TestClient.connect(server.url, "silent", hello=False)
    for client in (quiet, silent):
        closing = await client.expect(m.Closing)
        assert closing.code == "idle_timeout"
        assert await client.closed()


async def test_room_requests_cost_more_credits(server_factory: ServerFactory) -> None:
    server = await server_factory(rate_burst=10, rate_per_s=0.001, rate_cost_heavy=5)
    client = await TestClient.connect(server.url, "c")  # hello: 1 credit, 9 left
    await client.send(m.ListRooms())  # 5, 4 left
    await client.expect(m.RoomList)
    await client.send(m.ListRooms())
    error = await client.expect_error("rate_limited")
    assert error.retryable
    await _pong(client)  # a cheap message still goes through (3 left)
