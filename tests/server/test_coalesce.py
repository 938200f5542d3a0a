"""Spectators taking ``Diffs`` (hello.ds) get the moves of a tick in one frame, and end
with the same boards as the players: expected boards come from the engine replaying the
results' logs, not from the fan-out code. A spectator of an older client (no ``ds``) in
the same room still gets a ``P`` and a ``D`` per move; hidden rooms send neither kind
any diff while hidden (docs/SERVER.md, "Who sees what")."""

from __future__ import annotations

import asyncio
import random

import pytest

import engine
from protocol import messages as m
from server.app import Server

from .client import Board, TestClient, play_moves


async def _player(client: TestClient, rng: random.Random, budget: int) -> None:
    started = await client.expect(m.Started)
    board = Board(started.boards[0].view)
    await play_moves(client, board, budget, rng.choice)
    if board.legal() or engine.game_from_view(board.view).won:
        await client.send(m.Resign())


@pytest.mark.parametrize("variant", ["spanish", "brisbane"])
async def test_a_batched_spectator_ends_with_the_players_boards(server: Server,
                                                                variant: str) -> None:
    rng = random.Random(variant)
    players = [await TestClient.connect(server.url, f"p{i}") for i in range(3)]
    joined = await players[0].create(variant=variant, countdown_s=0, max_players=3)
    for p in players[1:]:
        await p.join(joined.code)
    new = await TestClient.connect(server.url, "new", batched=True)
    old = await TestClient.connect(server.url, "old")
    for watcher in (new, old):
        await watcher.join(joined.code, role="spectator")
    for p in players:
        await p.send(m.Ready())
    await asyncio.gather(*(_player(p, random.Random(rng.random()), 30) for p in players))
    results = await new.expect(m.Results)
    await old.expect(m.Results)
    assert sum(len(log.moves) for log in results.logs) > 30

    # The new client got its moves only in Diffs frames, the old one only as P and D.
    assert new.received(m.Diffs) and new.received(m.Diff) == []
    assert new.received(m.Progress) == [p for p in new.received(m.Progress)
                                        if p.status != "playing"]  # only status changes
    assert old.received(m.Diffs) == []
    expected: dict[int, engine.Game] = {}
    for log in results.logs:
        game = engine.new_game(variant, seed=results.seed, **results.options)
        for move in log.moves:
            game.play(move)
        expected[log.seat] = game
    for watcher in (new, old):
        started = watcher.received(m.Started)[0]
        if variant == "brisbane":
            # hidden while racing: no diff at all, then the final boards as snapshots
            assert started.hidden and watcher.diffs() == []
            assert all(not d.diffs for d in watcher.received(m.Diffs))
            snaps = [await watcher.expect(m.Snapshot) for _ in range(3)]
            boards = {s.board.seat: Board(s.board.view) for s in snaps}
        else:
            boards = {b.seat: Board(b.view) for b in started.boards}
        # each seat's diffs once, in order, each checked against its state hash
        for seat in boards:
            seqs = [d.seq for d in watcher.diffs() if d.seat == seat]
            assert seqs == list(range(1, len(seqs) + 1))
        for diff in watcher.diffs():
            boards[diff.seat].apply(diff.move, diff.revealed, diff.hash)
        assert {s: b.view for s, b in boards.items()} == {
            s: g.view() for s, g in expected.items()}
    # the tick's progress: the latest per seat, so the seats' last moves are known
    last = {p.seat: p.moves for d in new.received(m.Diffs) for p in d.progress}
    assert last == {log.seat: len(log.moves) for log in results.logs if log.moves}


async def test_a_batched_spectator_joining_mid_race_gets_every_later_move(
        server: Server) -> None:
    rng = random.Random(5)
    players = [await TestClient.connect(server.url, f"p{i}") for i in range(2)]
    joined = await players[0].create(variant="spanish", countdown_s=0, max_players=2)
    await players[1].join(joined.code)
    for p in players:
        await p.send(m.Ready())
    boards = [Board((await p.expect(m.Started)).boards[0].view) for p in players]
    await play_moves(players[0], boards[0], 8, rng.choice)
    late = await TestClient.connect(server.url, "late", batched=True)
    seen = await late.join(joined.code, role="spectator")
    mine = {b.seat: Board(b.view) for b in seen.boards}
    await asyncio.gather(play_moves(players[0], boards[0], 10, rng.choice),
                         play_moves(players[1], boards[1], 10, rng.choice))
    for p in players:
        await p.send(m.Resign())
    results = await late.expect(m.Results)
    for diff in late.diffs():
        mine[diff.seat].apply(diff.move, diff.revealed, diff.hash)
    for log in results.logs:
        game = engine.new_game("spanish", seed=results.seed, **results.options)
        for move in log.moves:
            game.play(move)
        assert mine[log.seat].view == game.view()
