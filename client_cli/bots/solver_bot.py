"""The solver bot: asks ``engine.solver.solve`` for a winning line and follows it,
solving again whenever the board is not where the plan expects (after a face-down card
turns up: the solver only sees a stand-in for face-down cards). When the solver finds
no line in its budget, it plays like the greedy bot."""

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
    max_seconds = 2.0
    max_nodes = 200_000

    def __init__(self, seed: int | None = None) -> None:
        self.greedy = GreedyBot(seed)
        self.plan: list[str] = []
        self.expect: int | None = None  # the state hash the plan's next move starts from

    def on_start(self, room: Any) -> None:
        self.greedy.on_start(room)
        self.plan, self.expect = [], None

    def choose_move(self, view: dict[str, Any], legal_moves: list[str]) -> str | None:
        solver: Any = importlib.import_module("engine.solver")  # lazy: only this bot needs it

        game = engine.game_from_view(view)
        here = game.state_hash()
        if not self.plan or self.expect != here or self.plan[0] not in legal_moves:
            result = solver.solve(game, max_nodes=self.max_nodes, max_seconds=self.max_seconds)
            self.plan = list(result.moves) if result.verdict == "won" else []
        if not self.plan:
            self.expect = None
            return self.greedy.choose_move(view, legal_moves)
        move = self.plan.pop(0)
        after = game.copy()
        after.play(move)
        self.expect = after.state_hash()
        return move
