"""``Game.stuck`` stops at the first legal move it finds (``Game._has_move``) instead of
listing them all: it must say exactly what the full listing says.

Two sources of positions, for every variant with every option combination: random
playouts (every step compared, stuck ends included), and random boards built directly —
any split of the 52 cards between foundations and piles, random face-down counts, empty
piles, redeals left or not — which reach corners playouts rarely do (empty piles next to
Kings, a takeback as the only move)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine import Game

from .test_properties import COMBO_IDS, COMBOS

SEEDS = st.integers(min_value=0, max_value=2**64 - 1)
STEPS = 120  # moves per playout
BOARDS = 60  # random boards per example


def agree(g: Game) -> None:
    listed = g.legal_moves()
    assert g.stuck == (not g.won and not listed), (g.to_layout(), listed)
    if not g.won:
        assert g._has_move() == bool(listed), (g.to_layout(), listed)


@pytest.mark.parametrize(("variant", "options"), COMBOS, ids=COMBO_IDS)
@settings(max_examples=5, deadline=None)
@given(seed=SEEDS, walk=st.integers(min_value=0, max_value=2**32 - 1))
def test_stuck_equals_full_listing_over_playouts(variant: str, options: dict[str, Any],
                                                 seed: int, walk: int) -> None:
    rng = random.Random(walk)
    g = engine.new_game(variant, seed=seed, **options)
    for _ in range(STEPS):
        agree(g)
        moves = g.legal_moves()
        if not moves:
            break
        g.play(rng.choice(moves))


def random_board(template: Game, rng: random.Random) -> Game:
    """A board of ``template``'s variant and options: random foundation heights, the
    other cards shuffled into the piles, random face-down counts, 0 or some redeals left.
    Half the boards are crowded (low foundations, some piles empty), half are endgames
    (high foundations, few cards dealt round the piles so most are non-empty)."""
    endgame = rng.random() < 0.5
    if endgame:
        found = [rng.randint(6, 13) for _ in range(4)]
    else:
        found = [rng.choice([0, 0, rng.randint(0, 13), 13]) for _ in range(4)]
    rest = [c for c in range(52) if c % 13 >= found[c // 13]]
    rng.shuffle(rest)
    count = len(template.piles)
    piles: list[list[int]] = [[] for _ in range(count)]
    for i, card in enumerate(rest):
        piles[i % count if endgame else rng.randrange(count)].append(card)
    if rng.random() < 0.5:  # sort some runs the way play builds them
        for p in piles:
            if rng.random() < 0.5:
                p.sort(reverse=True)
    down = [rng.randint(0, max(0, len(p) - 1)) if rng.random() < 0.3 else 0 for p in piles]
    redeals = template.redeals_left if rng.random() < 0.2 else 0
    return Game(template.variant, template.options, piles, down, found, redeals)


@pytest.mark.parametrize(("variant", "options"), COMBOS, ids=COMBO_IDS)
@settings(max_examples=5, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_stuck_equals_full_listing_on_random_boards(variant: str, options: dict[str, Any],
                                                    seed: int) -> None:
    rng = random.Random(seed)
    template = engine.new_game(variant, seed=seed, **options)
    for _ in range(BOARDS):
        agree(random_board(template, rng))


def test_playouts_reach_stuck_boards() -> None:
    """Stuck boards are compared too, not only boards with moves: fixed-seed playouts
    of up to 400 moves end stuck in every variant whose random play gets stuck (random
    play in Brisbane loops; tests/engine/test_won_stuck.py has its stuck boards)."""
    stuck: set[str] = set()
    for variant, options in COMBOS:
        for seed in range(10):
            rng = random.Random(seed)
            g = engine.new_game(variant, seed=seed, **options)
            for _ in range(400):
                agree(g)
                moves = g.legal_moves()
                if not moves:
                    break
                g.play(rng.choice(moves))
            if g.stuck:
                stuck.add(variant)
    assert stuck == {"portuguese", "spanish", "fortress", "perseverance"}


def test_a_card_fitting_its_own_pile_is_no_move() -> None:
    """Brisbane moves groups from any face-up card: here 5S (bottom of pile 1) fits the
    6D on top of the same pile, which is no move; nothing else moves, so the board is
    stuck. (A hand-made board of only these cards: both checks read only the board.)"""
    template = engine.new_game("brisbane", seed=1)
    five_s, nine_h, six_d = 0 * 13 + 4, 1 * 13 + 8, 2 * 13 + 5
    piles = [[five_s, nine_h, six_d]] + [[] for _ in template.piles[1:]]
    g = Game(template.variant, template.options, piles, [0] * len(piles), [4, 8, 4, 13], 0)
    assert g.legal_moves() == []
    assert g.stuck and not g._has_move()
