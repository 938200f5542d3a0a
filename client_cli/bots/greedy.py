"""The greedy bot: looks one move ahead and plays the move that scores best.

Scoring, in order of weight: a card to a foundation; a face-down card turned up; a pile
emptied where an empty pile is useful; then how many cards become playable to the
foundations and how many moves the position offers (mobility). It never returns to a
position it has been in (no back-and-forth loops) and never moves a whole pile into an
empty one (pointless). When every move leads back, or after ``patience`` moves without
progress, it resigns rather than loop."""

from __future__ import annotations

import random
from typing import Any

import engine
from client_cli.sdk import Bot
from engine.moves import REDEAL, TABLEAU, TAKEBACK, TO_FOUNDATION, parse_move

LOOP = -1_000_000.0


def score_move(game: engine.Game, move: str, seen: set[int]) -> float:
    """How good ``move`` looks on ``game`` (left unchanged), LOOP for a position seen."""
    mv = parse_move(move)
    after = game.copy()
    after.play(mv)
    if after.state_hash() in seen:
        return LOOP
    score = 0.0
    if mv.kind == TO_FOUNDATION:
        score += 1000
    elif mv.kind == TAKEBACK:
        score -= 300
    elif mv.kind == REDEAL:
        score -= 50
    if mv.kind == TABLEAU:
        src = game.piles[mv.src - 1]
        whole_pile = len(src) == mv.n and game.down[mv.src - 1] == 0
        if whole_pile and not game.piles[mv.dst - 1]:
            return -5000.0  # a whole pile into an empty one changes nothing
    score += 500 * (sum(game.down) - sum(after.down))
    empties_before = sum(1 for p in game.piles if not p)
    empties_after = sum(1 for p in after.piles if not p)
    if after.rules.empty != "never":
        score += 60 * (empties_after - empties_before)
    found = after.found
    for p in after.piles:
        if p and found[p[-1] // 13] == p[-1] % 13:
            score += 80  # a card ready for its foundation
    score += min(len(after.legal_moves()), 30)
    return score


class GreedyBot(Bot):
    """One-move look-ahead with the scoring of ``score_move``; resigns when only loops
    remain."""

    name = "greedy"
    patience = 150  # moves without progress (foundation or face-down card) before resigning

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)
        self.seen: set[int] = set()
        self.best = -1
        self.idle = 0

    def on_start(self, room: Any) -> None:
        self.seen.clear()
        self.best, self.idle = -1, 0

    def choose_move(self, view: dict[str, Any], legal_moves: list[str]) -> str | None:
        game = engine.game_from_view(view)
        self.seen.add(game.state_hash())
        # New positions alone are no progress: without this, games where cards can
        # wander between piles for ever would never end.
        level = game.progress * 64 - sum(game.down)
        if level > self.best:
            self.best, self.idle = level, 0
        else:
            self.idle += 1
            if self.idle > self.patience:
                return None
        # A tiny random tie-break: two greedy bots on one deal need not play alike.
        scored = [(score_move(game, m, self.seen) + self.rng.random(), m) for m in legal_moves]
        best_score, best = max(scored)
        if best_score <= LOOP + 1:
            return None
        return best
