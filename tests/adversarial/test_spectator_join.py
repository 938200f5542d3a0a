"""The attack kit's spectator join into a long room, against a real ``solrace serve``: a
bot logs thousands of moves (the kit's reversible move cycle), then spectators join again
and again; each gets the bot's board as it is, built from a checkpoint and the log's tail
(docs/SERVER.md, "Snapshots"). How long a join holds the event loop is measured by the
kit (docs/SECURITY.md), not asserted here.

The expected boards come from the deal as a spectator saw it before any move, played
forward by the engine: the cycle's two moves undo each other, so after an even number of
moves the board is the deal again, and after an odd number it is the deal after the
cycle's first move (Spanish: no face-down card, the view is the whole game)."""

from __future__ import annotations

import engine
from bench.attack.harness import Client, ServerProc, play_cycle, racing_player

MOVES = 3_000  # about a dozen checkpoints (one every 256 moves)


async def _watch(url: str, code: str) -> tuple[int, dict[str, object]]:
    watcher = await Client.open(url, "watcher")
    joined = await watcher.join(code, role="spectator")
    await watcher.close()
    (board,) = joined.boards
    assert board.hash == engine.view_hash(board.view)
    return board.seq, board.view


async def test_spectators_join_a_long_room_with_the_right_board(
        fast_server: ServerProc) -> None:
    bot, cycle = await racing_player(fast_server.url, name="builder", bot=True,
                                     spectators=True)
    seq, deal = await _watch(fast_server.url, bot.code)
    assert seq == 0
    after_one = engine.game_from_view(deal)
    after_one.play(cycle[0])
    assert await play_cycle(bot, cycle, MOVES, 120) == MOVES
    for _ in range(3):
        assert await _watch(fast_server.url, bot.code) == (MOVES, deal)
    assert await play_cycle(bot, cycle, 1, 10, first_seq=MOVES + 1) == 1
    assert await _watch(fast_server.url, bot.code) == (MOVES + 1, after_one.view())
    await bot.close()
