"""Bot-like play flagged in the live ranking and the results, over real websockets.

A seat declared human plays as fast as the test client can (one move per ack); another
plays fewer than 20 moves; a declared bot plays fast too. The expected flags are computed
here from the clocks the results publish, by a plain sliding window written for the test
(not ``protocol.ranking.bot_like``)."""

from __future__ import annotations

import random

import msgspec

from protocol import messages as m
from protocol.verify import verify_results

from .client import Board, TestClient, play_moves
from .conftest import ServerFactory


def _window_flag(moves: list[str], clocks: list[int]) -> bool:
    kept = [c for mv, c in zip(moves, clocks, strict=True) if not mv.endswith(">f")]
    best = None
    for i in range(19, len(kept)):
        span = kept[i] - kept[i - 19]
        best = span if best is None else min(best, span)
    return best is not None and best < 2_000


async def test_a_fast_human_seat_is_marked_bot_like(server_factory: ServerFactory) -> None:
    # Spanish seed 1: random tableau-first play (Random(5)) has 40 moves there.
    server = await server_factory(seed_source=lambda: 1, rate_burst=100_000,
                                  rate_per_s=100_000.0)
    variant = "spanish"
    rng = random.Random(5)
    fast = await TestClient.connect(server.url, "fast")
    joined = await fast.create(variant=variant, countdown_s=0, max_players=3)
    slow = await TestClient.connect(server.url, "slow")
    bot = await TestClient.connect(server.url, "bot", bot=True)
    await slow.join(joined.code)
    await bot.join(joined.code)
    for p in (fast, slow, bot):
        await p.send(m.Ready())

    def tableau_first(legal: list[str]) -> str:
        return rng.choice([mv for mv in legal if not mv.endswith(">f")] or legal)

    counts = []
    for client, budget in ((fast, 40), (slow, 5), (bot, 40)):
        board = Board((await client.expect(m.Started)).boards[0].view)
        counts.append(await play_moves(client, board, budget, tableau_first))
    assert counts[1] == 5 and counts[0] >= 20
    live = await fast.expect(m.Ranking)
    while not any(e.bot_like for e in live.ranking):  # the mark comes with a ranking
        live = await fast.expect(m.Ranking)
    for client in (fast, slow, bot):
        await client.send(m.Resign())
    results = await fast.expect(m.Results)
    assert verify_results(results).problems == []
    by_seat = {e.seat: e for e in results.ranking}
    logs = {log.seat: log for log in results.logs}
    expected = {seat: _window_flag(log.moves, log.clocks) and not by_seat[seat].bot
                for seat, log in logs.items()}
    assert {seat: e.bot_like for seat, e in by_seat.items()} == expected
    assert expected == {1: True, 2: False, 3: False}
    assert {e.seat for e in live.ranking if e.bot_like} == {1}
    # verify recomputes the mark: a results message that hides it does not pass
    hidden = msgspec.structs.replace(results, ranking=[
        msgspec.structs.replace(e, bot_like=False) for e in results.ranking])
    problems = verify_results(hidden).problems
    assert problems == ["seat 1: bot-like reported False, the clocks give True"]
