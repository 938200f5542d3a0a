"""The vertical slice over real websockets: hello → create → join → ready → start →
move → ack → results."""

from __future__ import annotations

import engine
from protocol import messages as m
from server.app import Server

from .client import Board, TestClient, play_moves


async def test_two_players_race_to_results(server: Server) -> None:
    alice = await TestClient.connect(server.url, "alice")
    bob = await TestClient.connect(server.url, "bob", bot=True)
    joined = await alice.create(variant="portuguese", countdown_s=0)
    assert joined.seat == 1 and joined.token and joined.phase == "lobby"
    assert joined.boards == []  # no board before the start
    bob_joined = await bob.join(joined.code)
    assert bob_joined.seat == 2
    await alice.send(m.Ready())
    await bob.send(m.Ready())
    started_a = await alice.expect(m.Started)
    started_b = await bob.expect(m.Started)
    assert [b.seat for b in started_a.boards] == [1]
    assert [b.seat for b in started_b.boards] == [2]
    assert started_a.boards[0].view == started_b.boards[0].view  # the same deal
    board = Board(started_a.boards[0].view)
    played = await play_moves(alice, board, 3, lambda legal: legal[0])
    assert played > 0
    progress = await bob.expect(m.Progress)
    assert progress.seat == 1 and progress.moves == 1
    bad = await alice.move("1>1")
    assert isinstance(bad, m.Rejected) and bad.code == "illegal_move"
    assert bad.expected == alice.seq + 1
    await alice.send(m.Resign())
    await bob.send(m.Resign())
    results = await alice.expect(m.Results)
    assert results == await bob.expect(m.Results)
    assert engine.verify_commitment(results.seed, results.salt, joined.commitment)
    assert [len(log.moves) for log in results.logs] == [played, 0]
    assert {e.seat for e in results.ranking} == {1, 2}


async def test_after_the_results_the_connection_can_race_again(server: Server) -> None:
    one = await TestClient.connect(server.url, "one")
    first = await one.create(variant="fortress", countdown_s=0)
    await one.send(m.Ready())
    await one.expect(m.Started)
    await one.send(m.Resign())
    await one.expect(m.Results)
    second = await one.create(variant="fortress", countdown_s=0)
    assert second.code != first.code and second.seat == 1
