"""The random bot: any legal move, uniformly, avoiding positions it has already been in
when it can (so it wanders instead of shuffling one card back and forth)."""

from __future__ import annotations

import random
from typing import Any

import engine
from client_cli.sdk import Bot


class RandomBot(Bot):
    """Plays a uniformly random legal move that leads somewhere new, if any does."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)
        self.seen: set[int] = set()

    def on_start(self, room: Any) -> None:
        self.seen.clear()

    def choose_move(self, view: dict[str, Any], legal_moves: list[str]) -> str | None:
        game = engine.game_from_view(view)
        self.seen.add(game.state_hash())
        fresh = []
        for move in legal_moves:
            after = game.copy()
            after.play(move)
            if after.state_hash() not in self.seen:
                fresh.append(move)
        return self.rng.choice(fresh or legal_moves)
