"""Full races over real websockets: every variant, both rank modes, three players (one
a bot) and a spectator, to verified results."""

from __future__ import annotations

import asyncio
import random

import pytest

import engine
from protocol import messages as m
from protocol.verify import verify_results
from server.app import Server

from .client import Board, TestClient, play_moves


async def _player(client: TestClient, rng: random.Random, budget: int) -> int:
    started = await client.expect(m.Started)
    board = Board(started.boards[0].view)
    played = await play_moves(client, board, budget, rng.choice)
    if not board.legal() and not engine.game_from_view(board.view).won:
        pass  # stuck: the server marks it; nothing to resign
    else:
        await client.send(m.Resign())
    return played


@pytest.mark.parametrize("rank_by", ["time", "progress"])
@pytest.mark.parametrize("variant", sorted(engine.VARIANTS))
async def test_full_race(server: Server, variant: str, rank_by: str) -> None:
    rng = random.Random(f"{variant}-{rank_by}")
    host = await TestClient.connect(server.url, "host")
    joined = await host.create(variant=variant, rank_by=rank_by, countdown_s=0, max_players=3)
    bot = await TestClient.connect(server.url, "bot", bot=True)
    third = await TestClient.connect(server.url, "third")
    watcher = await TestClient.connect(server.url, "watcher")
    await bot.join(joined.code)
    await third.join(joined.code)
    watched = await watcher.join(joined.code, role="spectator")
    assert watched.seat == 0 and watched.token is None
    for client in (host, bot, third):
        await client.send(m.Ready())
    budgets = [25, 40, 10]
    played = await asyncio.gather(*(
        _player(c, random.Random(rng.random()), b)
        for c, b in zip((host, bot, third), budgets, strict=True)
    ))
    results = await watcher.expect(m.Results)
    for client in (host, bot, third):
        assert await client.expect(m.Results) == results
    assert results.rank_by == rank_by and results.variant == variant
    assert [len(log.moves) for log in results.logs] == played
    assert verify_results(results).problems == []
    assert [e.bot for e in sorted(results.ranking, key=lambda e: e.seat)] == [False, True, False]
    started = watcher.received(m.Started)[0]
    if variant == "brisbane":
        # Face-down cards on racing boards (each seat stopped short of turning them all):
        # the spectator got no board and no diff while racing, then the final boards
        # (right after the results, which ended the hiding).
        assert started.hidden and started.boards == [] and watcher.received(m.Diff) == []
        snaps = [await watcher.expect(m.Snapshot) for _ in range(3)]
        assert sorted(s.board.seat for s in snaps) == [1, 2, 3]
        boards = {s.board.seat: Board(s.board.view) for s in snaps}
    else:
        # The spectator saw every board from the start and every move as a diff.
        assert not started.hidden
        boards = {b.seat: Board(b.view) for b in started.boards}
    assert sorted(boards) == [1, 2, 3]
    for diff in watcher.received(m.Diff):
        boards[diff.seat].apply(diff.move, diff.revealed, diff.hash)
    for log in results.logs:
        game = engine.new_game(variant, seed=results.seed, **results.options)
        for move in log.moves:
            game.play(move)
        assert boards[log.seat].view == game.view()
    # Rivals saw progress, never a board.
    assert host.received(m.Diff) == []
    assert {p.seat for p in host.received(m.Progress) if p.status == "playing"} <= {2, 3}
