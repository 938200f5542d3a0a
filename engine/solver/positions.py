"""The solver position for a game: which board class, which safe-move rule."""

from __future__ import annotations

from ..game import Game
from ..variants.base import EMPTY_ANY
from .runs import RunsPosition
from .safety import AutoRule
from .search import Position
from .single import SinglePosition
from .yukon import YukonPosition


def auto_rule(game: Game) -> AutoRule:
    """The safe foundation moves of this game's variant and options (``safety``).
    Perseverance decides its own, as it changes with the redeals left."""
    name, options = game.name, game.options
    if name == "brisbane":
        return AutoRule.BELOW_MIN
    if name == "portuguese":
        return AutoRule.OTHERS_PLUS_2
    if name == "spanish":
        return AutoRule.ACES if options["foundation_takeback"] else AutoRule.OTHERS_PLUS_2
    if name == "fortress":
        return AutoRule.NONE if options["foundation_takeback"] else AutoRule.ANY
    return AutoRule.ANY


def position_for(game: Game, safe_moves: bool = True) -> Position:
    """A fresh solver board holding a copy of ``game``'s position. ``safe_moves=False``
    turns the automatic safe foundation moves off (a slower search over every move,
    which the tests use to check that those moves lose no solution)."""
    rules = game.rules
    empty_any = rules.empty == EMPTY_ANY
    auto = auto_rule(game) if safe_moves else AutoRule.NONE
    if game.name == "brisbane":
        return YukonPosition(game.piles, game.down, game.found, rules.fits, empty_any, auto)
    if game.name == "perseverance":
        return RunsPosition(game.piles, game.found, game.redeals_left, rules.redeal_any_time,
                            safe_moves)
    return SinglePosition(game.piles, game.found, rules.fits, empty_any, rules.takeback, auto)
