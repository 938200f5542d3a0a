"""Testing a bot without a server: ``play_offline`` deals a seed with the engine in this
process and plays the bot on it through the same interface a race uses.

The bot sees exactly what it would see online: ``choose_move(view, legal_moves)`` with the
masked view (face-down cards as counts) and the legal moves computed from that view
(``engine.game_from_view``), ``on_start`` once before the first move, ``None`` to resign.
The deal for (variant, options, seed) is the one a server with that seed deals, so a
seed revealed after a race can be replayed here move for move.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import engine

from .bot import Bot


@dataclass
class OfflineOutcome:
    """How an offline game went: ``status`` is ``won``, ``stuck``, ``resigned`` (the bot
    returned None, or played ``max_moves``), or ``refused`` (the bot chose a move that
    was not legal); ``moves`` the moves played, in order."""

    variant: str
    seed: int
    options: dict[str, Any]
    status: str
    progress: int
    moves: list[str] = field(default_factory=list)
    refused: str | None = None  # the illegal choice that ended the game, if any


def play_offline(
    bot: Bot,
    variant: str,
    seed: int,
    options: dict[str, Any] | None = None,
    *,
    max_moves: int = 3000,
) -> OfflineOutcome:
    """Deal ``variant`` (with ``options``) from ``seed`` and let ``bot`` play it to the
    end; raises ``engine.EngineError`` for an unknown variant or a bad option."""
    opts = dict(options or {})
    game = engine.new_game(variant, seed=seed, **opts)
    outcome = OfflineOutcome(variant, seed, opts, "playing", game.progress)
    bot.on_start(None)
    while True:
        if game.won or game.stuck:
            outcome.status = "won" if game.won else "stuck"
            break
        if len(outcome.moves) >= max_moves:
            outcome.status = "resigned"
            break
        view = game.view()
        legal = [str(m) for m in engine.game_from_view(view).legal_moves()]
        choice = bot.choose_move(copy.deepcopy(view), legal)
        if choice is None:
            outcome.status = "resigned"
            break
        try:
            move = engine.normalise_move(choice)
            if move not in legal:
                raise engine.IllegalMove(f"{choice!r} is not one of the legal moves")
            game.play(move)
        except engine.EngineError:
            outcome.status, outcome.refused = "refused", choice
            break
        outcome.moves.append(move)
    outcome.progress = game.progress
    return outcome
