"""Cheap answers of ``SinglePosition`` that stand in for dearer ones in the search, and
must give the very same: ``clears`` (whether foundation moves alone empty the tableau,
told at once from the pile shares when a card lies above a lower card of its own suit)
against the plain check ``search._clears``, which plays nothing and assumes nothing;
``tableau_heuristic`` (a tableau move's value without playing it) against playing it.
Both on boards whose shares were kept up to date move by move."""

from __future__ import annotations

import random

import pytest

from engine import new_game
from engine.moves import TABLEAU
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


@pytest.mark.parametrize(("variant", "options"), [
    ("portuguese", {}), ("spanish", {}),
    ("spanish", {"kings_to_bottom": False, "foundation_takeback": True}),
    ("fortress", {}), ("fortress", {"foundation_takeback": True}),
])
def test_tableau_heuristic_is_what_playing_the_move_gives(
    variant: str, options: dict[str, object]
) -> None:
    # The search values a tableau move that announces its key (no safe move follows)
    # with tableau_heuristic instead of play, heuristic, undo: on random walks through
    # deals, under every heuristic of the restart schedule, the two must agree.
    rng = random.Random(5)
    checked = 0
    for seed in range(12):
        pos = position_for(new_game(variant, seed, **options))
        assert isinstance(pos, SinglePosition)
        pos.start()
        for step in range(80):
            pos.weigh(step % (1 + len(pos.restart_weights)))
            moves = pos.moves()
            if not moves:
                break
            for mv, k in moves:
                if k >= 0 and mv[0] == TABLEAU:
                    quick = pos.tableau_heuristic(mv[1], mv[2])
                    u = pos.play(mv)
                    assert pos.key == k
                    assert quick == pos.heuristic(), (variant, seed, mv)
                    pos.undo(u)
                    checked += 1
            pos.play(rng.choice(moves)[0])
    assert checked > 50  # measured: 94 in Fortress, thousands elsewhere
