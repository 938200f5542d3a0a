"""The incremental state hash equals the full computation.

``Game.state_hash`` renders again only the piles changed since its last call. Over
random playouts of every variant with every option combination, with the hash asked at
random steps (so changes pile up between calls), with copies taken mid-game and played
on apart from the original, and through redeals and takebacks, the hash must equal a
second computation written here from the specification in ``engine/statehash.py``
(SHA-256 of the canonical text of the view), not from the engine's helpers.
"""

from __future__ import annotations

import hashlib
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


def spec_hash(view: dict[str, Any]) -> int:
    """The state hash by the letter of the specification, from a view."""
    piles = []
    for pile in view["tableau"]:
        down = pile["down"] if isinstance(pile["down"], int) else len(pile["down"])
        piles.append(f"{down}:{''.join(pile['up'])}")
    found = ",".join(str(view["foundations"][s]) for s in "SHDC")
    text = "|".join(piles) + f"|F{found}|R{view['redeals_left']}"
    return int.from_bytes(hashlib.sha256(text.encode("ascii")).digest()[:4], "big")


def pick(game: Game, rng: random.Random) -> engine.Move | None:
    """A random legal move, redeals and takebacks favoured when offered (they change
    many piles, or move a card back from a foundation)."""
    moves = game.legal_moves()
    if not moves:
        return None
    rare = [m for m in moves if str(m) == "redeal" or str(m).startswith("f")]
    if rare and rng.random() < 0.3:
        return rng.choice(rare)
    return rng.choice(moves)


@pytest.mark.parametrize(("variant", "options"), COMBOS, ids=COMBO_IDS)
@settings(max_examples=6, deadline=None)
@given(seed=SEEDS, walk=st.integers(min_value=0, max_value=2**32 - 1))
def test_incremental_hash_equals_full(variant: str, options: dict[str, Any], seed: int,
                                      walk: int) -> None:
    rng = random.Random(walk)
    games = [engine.new_game(variant, seed=seed, **options)]
    for _ in range(STEPS):
        game = rng.choice(games)
        move = pick(game, rng)
        if move is None:
            continue
        game.play(move)
        if rng.random() < 0.35:  # asked now and then: stale piles accumulate between
            assert game.state_hash() == spec_hash(game.view())
        if rng.random() < 0.05 and len(games) < 4:
            games.append(game.copy())  # copies share nothing: each goes its own way
    for game in games:
        assert game.state_hash() == spec_hash(game.view())
        fresh = Game.from_layout(game.to_layout())  # no cache at all
        assert fresh.state_hash() == game.state_hash()


def test_spec_hash_matches_the_documented_example() -> None:
    """The test's own reference agrees with the engine on a fresh deal before any cache
    exists (and both follow the text format of engine/statehash.py)."""
    game = engine.new_game("brisbane", seed=1)
    assert spec_hash(game.view()) == engine.view_hash(game.view())


@pytest.mark.parametrize(("variant", "options"), COMBOS, ids=COMBO_IDS)
@settings(max_examples=6, deadline=None)
@given(seed=SEEDS, walk=st.integers(min_value=0, max_value=2**32 - 1))
def test_copies_go_their_own_way(variant: str, options: dict[str, Any], seed: int,
                                 walk: int) -> None:
    """``copy`` shares the piles' lists until a move changes them (copy on write): a
    move played on a copy, or on the game it was copied from, or on a copy of a copy,
    never shows in another. Each game's board must equal its own moves replayed on a
    fresh deal, and its hash the specification's."""
    rng = random.Random(walk)
    games = [(engine.new_game(variant, seed=seed, **options), [])]
    for _ in range(STEPS):
        game, played = rng.choice(games)
        if rng.random() < 0.15 and len(games) < 6:
            games.append((game.copy(), list(played)))  # copied before any move too
            continue
        move = pick(game, rng)
        if move is None:
            continue
        game.play(move)
        played.append(str(move))
        if rng.random() < 0.2:
            assert game.state_hash() == spec_hash(game.view())
    for game, played in games:
        replayed = engine.new_game(variant, seed=seed, **options)
        for move in played:
            replayed.play(move)
        assert game.to_layout() == replayed.to_layout()
        assert game.state_hash() == spec_hash(game.view())
