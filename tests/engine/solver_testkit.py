"""Helpers for the solver tests: an independent brute-force search over the engine's own
``Game`` (no pruning, no safe moves, exact keys), and small random positions.

The brute force shares nothing with ``engine.solver`` but the rules engine, so where
both finish they must agree on whether a position can be won.
"""

from __future__ import annotations

import random
from typing import Any

from engine import Game, new_game
from engine.cards import rank, suit


def brute_force(game: Game, max_states: int = 200_000) -> bool | None:
    """Whether ``game`` can be won, by depth-first search over every legal move of the
    engine; None when more than ``max_states`` positions would be needed. Positions
    that differ only in pile order count as one, except in Perseverance (its redeal
    gathers the piles in order)."""
    ordered = game.name == "perseverance"

    def key(g: Game) -> tuple[Any, ...]:
        piles = [(tuple(p), d) for p, d in zip(g.piles, g.down, strict=True)]
        return (tuple(piles if ordered else sorted(piles)), tuple(g.found), g.redeals_left)

    if game.won:
        return True
    seen = {key(game)}
    stack = [game.copy()]
    while stack:
        g = stack.pop()
        for mv in g.legal_moves():
            child = g.copy()
            child.play(mv)
            if child.won:
                return True
            k = key(child)
            if k not in seen:
                if len(seen) >= max_states:
                    return None
                seen.add(k)
                stack.append(child)
    return False


def reduced_position(
    variant: str, seed: int, options: dict[str, Any], cards_left: int
) -> Game:
    """A random position of ``variant``: the deal of ``seed`` with foundations raised
    (at random, suit by suit) until about ``cards_left`` cards stay on the tableau, those
    keeping their deal order. Brisbane keeps face-down cards face down where a face-up
    card remains above them."""
    rng = random.Random(seed)
    game = new_game(variant, seed, **options)
    low = 1 if variant == "perseverance" else 0
    heights = [low] * 4
    while 52 - sum(heights) > cards_left:
        s = rng.randrange(4)
        if heights[s] < 13:
            heights[s] += 1
    piles: list[list[int]] = []
    down: list[int] = []
    for p, d in zip(game.piles, game.down, strict=True):
        keep = [(c, k < d) for k, c in enumerate(p) if rank(c) > heights[suit(c)]]
        while keep and keep[-1][1]:  # a face-down top would have been turned up
            keep[-1] = (keep[-1][0], False)
        piles.append([c for c, _ in keep])
        down.append(sum(1 for _, is_down in keep if is_down))
    return Game(game.variant, game.options, piles, down, heights, game.redeals_left)
