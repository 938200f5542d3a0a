"""The solver bot: asks ``engine.solver.solve`` for a winning line and follows it,
solving again whenever the board is not where the plan expects. While face-down cards
remain (Brisbane) it plays greedily: the solver would only see stand-ins for them. When
the solver finds no line in its budget, it plays like the greedy bot for a while."""

from __future__ import annotations

import importlib
from typing import Any

import engine
from client_cli.sdk import Bot

from .greedy import GreedyBot


class SolverBot(Bot):
    """Follows the solver's solution; greedy when there is none."""

    name = "solver"
    blocking = True  # solving takes up to max_seconds: keep the connection served
    max_seconds = 1.0
    max_nodes = 200_000
    retry_every = 25  # moves between two searches that find nothing (without progress)

    def __init__(self, seed: int | None = None) -> None:
        self.greedy = GreedyBot(seed)
        self.plan: list[str] = []
        self.expect: int | None = None  # the state hash the plan's next move starts from
        self.wait = 0
        self.progress_at_search = -1

    def on_start(self, room: Any) -> None:
        self.greedy.on_start(room)
        self.plan, self.expect = [], None
        self.wait, self.progress_at_search = 0, -1

    def choose_move(self, view: dict[str, Any], legal_moves: list[str]) -> str | None:
        solver: Any = importlib.import_module("engine.solver")  # lazy: only this bot needs it

        game = engine.game_from_view(view)
        here = game.state_hash()
        hidden = any(pile["down"] for pile in view["tableau"])
        on_plan = bool(self.plan) and self.expect == here and self.plan[0] in legal_moves
        if not on_plan:
            self.plan = []
            # Face-down cards are stand-ins in this view: a plan through them breaks at
            # the first flip, so uncover them greedily first. After a search that found
            # nothing, wait a while (or for progress) before spending another budget.
            self.wait = max(0, self.wait - 1)
            if game.progress != self.progress_at_search:
                self.wait = 0
            if not hidden and self.wait == 0:
                budget = {"max_nodes": self.max_nodes, "max_seconds": self.max_seconds}
                result = solver.solve(game, **budget)
                self.progress_at_search = game.progress
                if result.verdict == "won":
                    self.plan = list(result.moves)
                else:
                    self.wait = self.retry_every
        if not self.plan:
            self.expect = None
            return self.greedy.choose_move(view, legal_moves)
        move = self.plan.pop(0)
        after = game.copy()
        after.play(move)
        self.expect = after.state_hash()
        return move
