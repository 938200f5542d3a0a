"""Rematch, against a real server: after the results, ``ready`` asks for a new race in the
same room; when every connected player asked (or the creator says ``start``) the room
goes back to its lobby on a new secret deal, with the players who asked."""

from __future__ import annotations

from protocol import messages as m
from protocol.verify import verify_results
from server.app import Server

from .client import TestClient, start_and_resign


async def _finished_race(server: Server) -> tuple[TestClient, TestClient, m.Results]:
    """Ann (creator) and Bob race Spanish and both resign: the results are out."""
    ann = await TestClient.connect(server.url, "ann")
    joined = await ann.create(variant="spanish", countdown_s=0)
    bob = await TestClient.connect(server.url, "bob")
    await bob.join(joined.code)
    await start_and_resign([ann, bob])
    results = await ann.expect(m.Results)
    assert (await bob.expect(m.Results)) == results
    return ann, bob, results


async def test_everyone_asks_and_round_two_races_to_results_that_verify(server: Server) -> None:
    ann, bob, first = await _finished_race(server)
    assert first.round == 1
    spectator = await TestClient.connect(server.url, "eve")
    await spectator.join(first.code, role="spectator")
    await spectator.expect(m.Results)
    # Seat lists from round 1 (both ready) came before the results: drop them, so the
    # next one is the answer to Ann's request.
    bob.inbox = [msg for msg in bob.inbox if not isinstance(msg, m.Seats)]
    await ann.send(m.Ready())  # "I want a rematch"
    seats = await bob.expect(m.Seats)
    assert {s.seat: s.ready for s in seats.seats} == {1: True, 2: False}
    await bob.send(m.Ready())
    again = [await c.expect(m.Joined) for c in (ann, bob, spectator)]
    for joined, seat in zip(again, (1, 2, 0), strict=True):
        assert (joined.phase, joined.round, joined.seat) == ("lobby", 2, seat)
        assert joined.commitment != first.commitment and joined.boards == []
        assert joined.token is None  # each player's token stays good
        assert [(s.seat, s.name, s.ready, s.status, s.moves) for s in joined.seats] == [
            (1, "ann", False, "lobby", 0), (2, "bob", False, "lobby", 0)]
    commitment = again[0].commitment
    assert len({j.commitment for j in again}) == 1
    # round 2: the usual flow, on the new deal
    for client in (ann, bob):
        await client.send(m.Ready())
    for client in (ann, bob):
        await client.expect(m.Countdown)
        await client.expect(m.Started)
    await ann.send(m.Resign())
    await bob.send(m.Resign())
    second = await ann.expect(m.Results)
    assert second.round == 2 and second.commitment == commitment
    assert second.seed != first.seed
    assert verify_results(second, commitment).problems == []
    assert (await spectator.expect(m.Results)) == second
    for client in (ann, bob, spectator):
        await client.close()


async def test_the_creator_forces_it_and_who_did_not_ask_is_left_out(server: Server) -> None:
    ann, bob, first = await _finished_race(server)
    bob_token = bob.joined.token if bob.joined else None
    assert bob_token is not None
    await ann.send(m.Ready())
    await bob.expect(m.Seats)  # nothing else happens: bob has not asked
    await ann.send(m.StartNow())  # the creator forces the next round
    joined = await ann.expect(m.Joined)
    assert joined.round == 2 and [s.seat for s in joined.seats] == [1]
    assert joined.commitment != first.commitment
    # bob gets no new joined; he is out of the room, and his old token is refused
    await bob.send(m.Ping(nonce=3))
    assert (await bob.expect(m.Pong)).nonce == 3
    assert [j.round for j in bob.received(m.Joined)] == [1]
    await bob.send(m.Ready())
    await bob.expect_error("not_in_room")
    back = await TestClient.connect(server.url, "bob", token=bob_token)
    await back.expect_error("bad_token")
    # he may join the new round as a new player
    await bob.join(first.code)
    assert bob.joined is not None and bob.joined.round == 2 and bob.joined.seat == 2
    for client in (ann, bob, back):
        await client.close()


async def test_a_rematch_before_the_results_or_by_a_spectator_is_refused(server: Server) -> None:
    ann, bob, first = await _finished_race(server)
    eve = await TestClient.connect(server.url, "eve")
    await eve.join(first.code, role="spectator")
    await eve.send(m.Ready())
    await eve.expect_error("not_a_player")
    await eve.send(m.StartNow())
    await eve.expect_error("not_creator")
    await bob.send(m.StartNow())
    await bob.expect_error("not_creator")
    for client in (ann, bob, eve):
        await client.close()
