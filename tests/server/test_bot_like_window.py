"""The live bot-like mark is set by the move that completes the window, not one later or
earlier: ``BOT_LIKE_MOVES`` deliberate moves whose clocks span less than
``BOT_LIKE_SPAN_MS`` (``race.play`` reads the window's first clock in place from the
seat's bounded deque). The race clock is the server's injected clock, moved by hand; the
expected mark is computed here by a plain window over the clocks the test chose."""

from __future__ import annotations

import pytest

from bench.players import SEED, VARIANT, find_cycle
from protocol import messages as m

from .client import TestClient
from .conftest import ServerFactory

MOVES = 20  # protocol.ranking.BOT_LIKE_MOVES, restated: the test's own expectation
SPAN_MS = 2_000  # protocol.ranking.BOT_LIKE_SPAN_MS


def expected_marks(clocks: list[int]) -> list[bool]:
    """After each move: has some window of MOVES consecutive moves spanned < SPAN_MS?"""
    marks, marked = [], False
    for i in range(len(clocks)):
        if i >= MOVES - 1 and clocks[i] - clocks[i - MOVES + 1] < SPAN_MS:
            marked = True
        marks.append(marked)
    return marks


@pytest.mark.parametrize("step_ms", [100, 105, 106, 0])  # 19 steps: 1,900 / 1,995 / 2,014 / 0
async def test_the_mark_comes_with_the_twentieth_fast_move(
        server_factory: ServerFactory, step_ms: int) -> None:
    now = [1_000_000]
    server = await server_factory(clock=lambda: now[0], seed_source=lambda: SEED,
                                  rate_burst=10_000, rate_per_s=10_000.0)
    player = await TestClient.connect(server.url, "quick")
    joined = await player.create(variant=VARIANT, countdown_s=0)
    await player.send(m.Ready())
    await player.expect(m.Started)
    member = next(iter(server.rooms[joined.code].members.values()))
    first, back = find_cycle()  # two tableau moves (the benchmark's): both deliberate
    clocks: list[int] = []
    marks: list[bool] = []
    for seq in range(1, 31):
        now[0] += step_ms
        await player.send(m.Move(seq=seq, move=first if seq % 2 else back))
        ack = await player.expect(m.Accepted)
        assert ack.seq == seq
        clocks.append(ack.clock_ms)
        marks.append(member.bot_like)
    assert marks == expected_marks(clocks)
    assert any(marks) == (step_ms * (MOVES - 1) < SPAN_MS)
