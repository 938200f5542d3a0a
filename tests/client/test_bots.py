"""Bot strategies on engine games (no server): they play legal moves, end, and greedy
wins deals a random walk does not."""

from __future__ import annotations

from typing import Any

import pytest

import engine
from client_cli.bots import STRATEGIES, GreedyBot, RandomBot, make_bot


def playout(bot, variant: str, seed: int, limit: int = 3000, must_stop: bool = True) -> engine.Game:  # type: ignore[no-untyped-def]
    """Play ``bot`` on a masked view of the deal, as a client would; the bot must stop
    (no legal move, or it resigns) within ``limit`` moves."""
    game = engine.new_game(variant, seed=seed)
    bot.on_start(None)
    for _ in range(limit + 1):
        if _ == limit:
            assert not must_stop, "the bot did not stop"
            break
        legal = [str(m) for m in engine.game_from_view(game.view()).legal_moves()]
        if not legal:
            break
        move = bot.choose_move(game.view(), legal)
        if move is None:
            break
        assert move in legal
        game.play(move)
    return game


def _level(view: dict[str, Any]) -> tuple[int, int]:
    """(cards on the foundations, face-down cards), read straight off a view."""
    return sum(view["foundations"].values()), sum(p["down"] for p in view["tableau"])


@pytest.mark.parametrize("variant", engine.VARIANTS)
def test_greedy_plays_legal_moves_and_stops_only_for_a_reason(variant: str) -> None:
    bot = GreedyBot(0)
    game = engine.new_game(variant, seed=3)
    bot.on_start(None)
    seen = {game.state_hash()}
    since_progress, best = 0, _level(game.view())
    for _ in range(3000):
        legal = [str(m) for m in engine.game_from_view(game.view()).legal_moves()]
        move = bot.choose_move(game.view(), legal) if legal else None
        if move is None:
            break
        assert move in legal
        game.play(move)
        seen.add(game.state_hash())
        level = _level(game.view())
        if level[0] > best[0] or level[1] < best[1]:
            since_progress, best = 0, (max(level[0], best[0]), min(level[1], best[1]))
        else:
            since_progress += 1
    else:
        pytest.fail("the bot did not stop within 3000 moves")
    # It stopped: the deal is won, or no move is left, or every move returns to a position
    # already played, or it made no progress (a card home or a card turned up) for longer
    # than its documented patience.
    children = []
    for mv in legal:
        child = game.copy()
        child.play(mv)
        children.append(child.state_hash())
    assert (game.won or not legal or all(h in seen for h in children)
            or since_progress >= GreedyBot.patience), (variant, since_progress, legal)


def test_greedy_wins_brisbane_deals() -> None:
    wins = sum(playout(GreedyBot(0), "brisbane", seed).won for seed in range(1, 6))
    assert wins >= 4


def test_greedy_beats_random_on_average() -> None:
    greedy = sum(playout(GreedyBot(0), "brisbane", s).progress for s in range(1, 4))
    rand = sum(
        playout(RandomBot(0), "brisbane", s, limit=200, must_stop=False).progress
        for s in range(1, 4)
    )
    assert greedy > rand


def test_greedy_never_returns_to_a_position() -> None:
    bot = GreedyBot(0)
    game = engine.new_game("spanish", seed=5)
    bot.on_start(None)
    seen = set()
    for _ in range(300):
        seen.add(game.state_hash())
        legal = [str(m) for m in game.legal_moves()]
        move = bot.choose_move(game.view(), legal) if legal else None
        if move is None:
            break
        game.play(move)
        assert game.state_hash() not in seen


def test_solver_strategy_is_listed_exactly_when_the_solver_is_installed() -> None:
    import importlib

    try:
        solver = importlib.import_module("engine.solver")
        installed = hasattr(solver, "solve")
    except ImportError:
        installed = False
    assert ("solver" in STRATEGIES) == installed
    if installed:
        game = playout(make_bot("solver", 0), "spanish", seed=1, limit=400)
        assert game.won


def test_strategies_registry() -> None:
    assert {"random", "greedy"} <= set(STRATEGIES)
    assert make_bot("random", 1).name == "random"
    with pytest.raises(ValueError, match="unknown strategy"):
        make_bot("nope")
