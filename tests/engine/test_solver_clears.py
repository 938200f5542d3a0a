"""``SinglePosition.clears``: whether foundation moves alone empty the tableau, told at
once from the pile shares when a card lies above a lower card of its own suit. It must
agree with the plain check (``search._clears``, which plays nothing and assumes
nothing) on every position, including boards whose shares were kept up to date move by
move."""

from __future__ import annotations

import random

import pytest

from engine.solver.positions import position_for
from engine.solver.search import _clears
from engine.solver.single import SinglePosition

from .test_solver_deadends import tall_position


@pytest.mark.parametrize("block", range(3))
def test_clears_agrees_with_the_plain_check(block: int) -> None:
    told = {True: 0, False: 0}
    for seed in range(block * 300, block * 300 + 300):
        rng = random.Random(seed)
        game = tall_position(seed, rng.randint(3, 14))
        pos = position_for(game)
        assert isinstance(pos, SinglePosition)
        # and along a random line of play, where play/undo keep the shares
        for _ in range(12):
            expected = _clears(pos.piles, pos.found)
            assert pos.clears() == expected
            told[expected] += 1
            moves = pos.moves()
            if not moves:
                break
            pos.play(rng.choice(moves)[0])
    # both answers occur, so the test could fail either way
    assert told[True] > 20 and told[False] > 20
