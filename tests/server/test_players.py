"""Issue 18's server side, against a real server: the creator can always start; one
error code per failure kind; unique names in a room; a resume replays only what the
client has not seen."""

from __future__ import annotations

import pytest

from protocol import messages as m
from protocol.verify import verify_results
from server.app import Server

from .client import TestClient, start_and_resign


async def test_a_watching_creator_can_start(server: Server) -> None:
    creator = await TestClient.connect(server.url, "host")
    joined = await creator.create(as_player=False, variant="spanish", countdown_s=5)
    assert joined.seat == 0
    player = await TestClient.connect(server.url, "ann")
    await player.join(joined.code)  # not ready
    other = await TestClient.connect(server.url, "eve")
    await other.join(joined.code, role="spectator")
    await other.send(m.StartNow())  # a spectator that did not create the room
    await other.expect_error("not_creator")
    await creator.send(m.StartNow())
    for client in (creator, player, other):
        await client.expect(m.Countdown)
    for client in (creator, player, other):
        await client.close()


@pytest.mark.parametrize(
    ("move", "code"),
    [("0>3", "illegal_move"), ("9>1", "illegal_move"), ("100>3", "illegal_move"),
     ("3>x", "bad_notation"), ("3:1>7", "bad_notation"), ("03>7", "bad_notation")],
)
async def test_one_code_per_failure_kind(server: Server, move: str, code: str) -> None:
    one = await TestClient.connect(server.url, "one")
    await one.create(variant="brisbane", countdown_s=0)
    await one.send(m.Ready())
    await one.expect(m.Started)
    rejected = await one.move(move)
    assert isinstance(rejected, m.Rejected) and rejected.code == code, rejected
    if code == "illegal_move":  # each names a source pile Brisbane (7 piles) lacks
        number = move.split(">")[0]
        assert rejected.reason == f"there is no pile {number}: piles are numbered 1 to 7"
    assert (await server.store.get_seats(one.joined.code))[0].moves == 0  # type: ignore[union-attr]
    await one.close()


async def test_names_are_unique_among_a_rooms_seats(server: Server) -> None:
    ann = await TestClient.connect(server.url, "ann")
    joined = await ann.create(variant="spanish")
    twin = await TestClient.connect(server.url, "Ann ")  # case and spaces do not count
    await twin.send(m.Join(code=joined.code))
    error = await twin.expect_error("name_taken")
    assert error.message == f"the name Ann is taken in room {joined.code}: pick another"
    assert not error.fatal and not error.retryable
    assert [s.name for s in await server.store.get_seats(joined.code)] == ["ann"]
    await twin.join(joined.code, role="spectator")  # watching needs no unique name
    bob = await TestClient.connect(server.url, "bob")
    await bob.join(joined.code)
    # a resume keeps the seat's name, whatever the hello says
    assert ann.joined is not None and ann.joined.token is not None
    await ann.close()
    back = await TestClient.connect(server.url, "bob", token=ann.joined.token)
    rejoined = await back.expect(m.Joined)
    assert {s.seat: s.name for s in rejoined.seats} == {1: "ann", 2: "bob"}
    for client in (twin, bob, back):
        await client.close()


async def test_perseverance_seats_start_at_four(server: Server) -> None:
    # Perseverance deals its four Aces onto the foundations (RULES.md): a seat that never
    # moves has progress 4 in the seats, the ranking and the results, and they verify.
    one = await TestClient.connect(server.url, "one")
    joined = await one.create(variant="perseverance", countdown_s=0)
    await start_and_resign([one])
    results = await one.expect(m.Results)
    assert [(e.progress, e.status, e.moves) for e in results.ranking] == [(4, "resigned", 0)]
    assert verify_results(results, joined.commitment).problems == []
    seats = await server.store.get_seats(joined.code)
    assert [s.progress for s in seats] == [4]
    await one.close()
