"""The solver against independent answers on random positions of every variant and
option: a brute-force search over the engine's own moves (small positions), the same
search with the safe foundation moves turned off (full deals), and the engine replaying
every solution returned."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import new_game
from engine.solver import Budget, solve
from engine.solver.keys import FACE_DOWN, order_free_key, ordered_key, redeals_key
from engine.solver.positions import position_for
from engine.solver.runs import RunsPosition
from engine.solver.search import search
from engine.solver.single import SinglePosition
from engine.solver.yukon import YukonPosition

from .solver_testkit import brute_force, reduced_position

# (variant, options, fewest and most cards left on the tableau): small enough for the
# brute force, which knows no shortcut (Spanish and Fortress empty piles take any card)
SMALL = [
    ("portuguese", {}, 8, 12),
    ("portuguese", {"kings_to_bottom": True}, 8, 12),
    ("spanish", {}, 4, 6),
    ("brisbane", {}, 6, 10),
    ("brisbane", {"empty_pile": "any"}, 5, 7),
    ("fortress", {}, 5, 7),
    ("perseverance", {}, 10, 20),
    ("perseverance", {"redeal_when": "any_time"}, 10, 16),
    ("perseverance", {"redeals": 0}, 10, 16),
    ("perseverance", {"redeals": 3, "redeal_when": "any_time", "kings_to_bottom": False}, 8, 14),
]


@pytest.mark.parametrize(("variant", "options", "low", "high"), SMALL,
                         ids=[f"{v}-{o}" for v, o, _, _ in SMALL])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32))
def test_verdicts_match_a_brute_force_search(
    variant: str, options: dict[str, Any], low: int, high: int, seed: int
) -> None:
    game = reduced_position(variant, seed, options, low + seed % (high - low + 1))
    expected = brute_force(game, max_states=30_000)
    result = solve(game, max_seconds=20)
    assert result.verdict != "unknown"
    if result.verdict == "won":
        g = game.copy()
        for mv in result.moves:
            g.play(mv)
        assert g.won
    if expected is not None:
        assert result.winnable is expected, game.to_layout()


FULL = [
    ("fortress", {}),
    ("perseverance", {}),
    ("perseverance", {"redeals": 0}),
]


@pytest.mark.parametrize(("variant", "options"), FULL, ids=[f"{v}-{o}" for v, o in FULL])
def test_safe_foundation_moves_lose_no_solution_on_full_deals(
    variant: str, options: dict[str, Any]
) -> None:
    budget = Budget(max_nodes=100_000, max_seconds=10)
    verdicts = set()
    for seed in range(12):
        game = new_game(variant, seed, **options)
        fast = search(position_for(game), budget).verdict
        slow = search(position_for(game, safe_moves=False), budget).verdict
        assert fast == slow, (variant, options, seed)
        verdicts.add(fast)
    assert verdicts <= {"won", "unwinnable"}


TAKEBACK = [
    ("spanish", {"kings_to_bottom": False, "foundation_takeback": True}),
    ("spanish", {"foundation_takeback": True}),
    ("fortress", {"foundation_takeback": True}),
]


@pytest.mark.parametrize(("variant", "options"), TAKEBACK, ids=[f"{v}-{o}" for v, o in TAKEBACK])
def test_solutions_with_foundation_takeback_replay_to_a_win(
    variant: str, options: dict[str, Any]
) -> None:
    won = 0
    for seed in range(8):
        game = new_game(variant, seed, **options)
        result = solve(game, max_seconds=5)
        assert result.verdict in ("won", "unwinnable")
        if result.verdict == "won":
            won += 1
            for mv in result.moves:
                game.play(mv)
            assert game.won
    assert won >= 1


CONFIGS = [(v, o) for v, o, _, _ in SMALL] + TAKEBACK


@pytest.mark.parametrize(("variant", "options"), CONFIGS, ids=[f"{v}-{o}" for v, o in CONFIGS])
def test_keys_known_before_a_move_are_the_keys_after_it(
    variant: str, options: dict[str, Any]
) -> None:
    """The search skips a move whose announced key it has seen: a wrong announcement
    could hide a solution. Random walks check every announced key, and that undo
    restores the board and its key."""
    rng = random.Random(7)
    for seed in range(3):
        pos = position_for(new_game(variant, seed, **options))
        pos.start()
        for _ in range(150):
            moves = pos.moves()
            if not moves:
                break
            before = (pos.snapshot(), pos.key, pos.left)
            for mv, announced in moves:
                undo = pos.play(mv)
                if announced >= 0:
                    assert pos.key == announced, (variant, seed, mv)
                pos.undo(undo)
                assert (pos.snapshot(), pos.key, pos.left) == before
            pos.play(rng.choice(moves)[0])
            assert pos.key == key_from_scratch(pos)


def key_from_scratch(pos: Any) -> int:
    """The key of the board computed afresh, not updated move by move."""
    if isinstance(pos, RunsPosition):
        return ordered_key(pos.piles) ^ redeals_key(pos.redeals_left)
    key = order_free_key(pos.piles)
    if isinstance(pos, YukonPosition):
        for p, d in zip(pos.piles, pos.down, strict=True):
            for c in p[:d]:
                key ^= FACE_DOWN[c]
    return key


def test_positions_told_lost_early_are_lost() -> None:
    # Portuguese: the search drops a position as soon as some card can never move again
    # while it covers a lower card of its suit (SinglePosition._is_dead). Each position
    # so told, among random small ones, must be lost for the brute force too.
    told = 0
    for seed in range(2000):
        game = reduced_position("portuguese", seed, {}, 8 + seed % 9)
        pos = position_for(game)
        pos.start()
        assert isinstance(pos, SinglePosition)
        if pos._is_dead():
            expected = brute_force(game, max_states=30_000)
            assert expected is not True, game.to_layout()
            told += expected is False
    assert told >= 3  # the check does fire on such positions (7 of seeds 0-2999)
