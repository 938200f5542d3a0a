"""The lobby: listing rooms, the countdown, leaving before the start, hints."""

from __future__ import annotations

import redis.asyncio as aioredis

import engine
from engine.solver import Budget
from engine.solver import hint as solver_hint
from protocol import messages as m
from server.app import Server

from .client import TestClient
from .conftest import ServerFactory


async def test_list_shows_public_open_rooms(server: Server) -> None:
    one = await TestClient.connect(server.url, "one")
    shown = await one.create(variant="fortress", max_players=3)
    hidden = await TestClient.connect(server.url, "hidden")
    await hidden.create(variant="fortress", public=False)
    bot = await TestClient.connect(server.url, "bot", bot=True)
    await bot.join(shown.code)
    looker = await TestClient.connect(server.url, "looker")
    await looker.send(m.ListRooms())
    listing = await looker.expect(m.RoomList)
    assert [r.code for r in listing.rooms] == [shown.code]
    (room,) = listing.rooms
    assert (room.variant, room.players, room.bots, room.max_players, room.phase) == (
        "fortress", 2, 1, 3, "lobby")
    assert room.options == {"foundation_takeback": False}  # every option, resolved


async def test_countdown_then_start(server: Server) -> None:
    one = await TestClient.connect(server.url, "one")
    joined = await one.create(variant="spanish", countdown_s=1)
    await one.send(m.Ready())
    countdown = await one.expect(m.Countdown)
    assert countdown.start_ms - countdown.server_ms >= 900
    await one.send(m.Move(seq=1, move="1>2"))
    early = await one.expect(m.Rejected)
    assert early.code == "not_running"
    started = await one.expect(m.Started, wait=5)
    assert started.start_ms == countdown.start_ms
    assert joined.commitment and len(joined.commitment) == 64


async def test_leaving_the_lobby_frees_the_start(server: Server) -> None:
    one = await TestClient.connect(server.url, "one")
    two = await TestClient.connect(server.url, "two")
    joined = await one.create(variant="spanish", countdown_s=0)
    await two.join(joined.code)
    await one.send(m.Ready())
    await two.send(m.Leave())
    # Only connected seats need to be ready: the one who left no longer holds the start.
    started = await one.expect(m.Started)
    assert [b.seat for b in started.boards] == [1]
    await two.send(m.Ping(nonce=3))  # the connection is still usable outside the room
    assert (await two.expect(m.Pong)).nonce == 3
    # Leaving a lobby gives the seat up (seat squatting, issue 17): its token is void.
    back = await TestClient.connect(server.url, "two-back", hello=False)
    await back.send(m.Hello(version=1, name="two-back", token=two.token))
    await back.expect_error("bad_token")


async def test_a_full_lobby_reclaims_a_disconnected_seat(server: Server) -> None:
    one = await TestClient.connect(server.url, "one")
    joined = await one.create(variant="spanish", max_players=2)
    gone = await TestClient.connect(server.url, "gone")
    await gone.join(joined.code)
    await gone.close()
    while True:  # the creator is told when the server has seen the disconnect
        seats = await one.expect(m.Seats)
        if [s.connected for s in seats.seats] == [True, False]:
            break
    late = await TestClient.connect(server.url, "late")
    reply = await late.join(joined.code)
    assert reply.seat == 2 and [s.name for s in reply.seats] == ["one", "late"]


async def test_hints_when_the_room_gives_them(server: Server) -> None:
    one = await TestClient.connect(server.url, "one")
    await one.create(variant="portuguese", countdown_s=0, hints=True)
    await one.send(m.HintRequest())
    await one.expect_error("not_running")
    await one.send(m.Ready())
    await one.expect(m.Started)
    await one.send(m.HintRequest())
    hint = await one.expect(m.Hint)
    assert hint.move is not None
    reply = await one.move(hint.move)
    assert isinstance(reply, m.Accepted)


async def test_a_hint_is_the_solver_move_on_the_players_view(server_factory: ServerFactory) -> None:
    """Brisbane has face-down cards: the hint must be what the solver finds from the
    player's view alone (so it cannot depend on, or leak, the hidden cards)."""
    server = await server_factory(seed_source=lambda: 3)
    one = await TestClient.connect(server.url, "one")
    await one.create(variant="brisbane", countdown_s=0, hints=True)
    await one.send(m.Ready())
    view = (await one.expect(m.Started)).boards[0].view
    await one.send(m.HintRequest())
    hint = await one.expect(m.Hint)
    expected = solver_hint(engine.game_from_view(view), Budget(max_nodes=20_000, max_seconds=5))
    assert hint.move == str(expected)
    assert engine.new_game("brisbane", seed=3).why_illegal(engine.parse_move(hint.move)) is None


async def test_a_lobby_is_listed_and_expires_if_it_never_starts(
    server_factory: ServerFactory, redis_url: str
) -> None:
    """On Redis a new room's keys carry the lobby TTL from creation (a room nobody starts
    must not stay for ever) while the room stays listed."""
    server = await server_factory(store_url=redis_url, lobby_ttl_s=600)
    one = await TestClient.connect(server.url, "one")
    joined = await one.create(variant="fortress")
    await one.send(m.ListRooms())
    assert [r.code for r in (await one.expect(m.RoomList)).rooms] == [joined.code]
    client = aioredis.from_url(redis_url)
    try:
        for key in ("room", "seats"):
            ttl = await client.ttl(f"solrace:{{{joined.code}}}:{key}")
            assert 0 < ttl <= 600, (key, ttl)
    finally:
        await client.aclose()
