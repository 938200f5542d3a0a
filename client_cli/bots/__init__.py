"""Bot strategies, by name, for ``solrace bot --strategy NAME`` and the demo.

``STRATEGIES`` maps a name to a factory ``(seed) -> Bot``. ``solver`` is listed only when
the engine's solver (``engine.solver``) is installed; it is imported lazily."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable

from client_cli.sdk import Bot

from .greedy import GreedyBot
from .random_bot import RandomBot

STRATEGIES: dict[str, Callable[[int | None], Bot]] = {
    "random": lambda seed: RandomBot(seed),
    "greedy": lambda seed: GreedyBot(seed),
}


def _solver_available() -> bool:
    try:
        spec = importlib.util.find_spec("engine.solver")
    except (ImportError, ValueError):
        return False
    # A folder without __init__ (a namespace package, origin None) is a solver still
    # being written, not an installed one.
    return spec is not None and spec.origin is not None


if _solver_available():

    def _solver(seed: int | None) -> Bot:
        from .solver_bot import SolverBot  # lazy: the solver is heavy to import

        return SolverBot(seed)

    STRATEGIES["solver"] = _solver


def make_bot(strategy: str, seed: int | None = None) -> Bot:
    """A new bot of that strategy; ``ValueError`` naming the known ones otherwise."""
    try:
        factory = STRATEGIES[strategy]
    except KeyError:
        raise ValueError(
            f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}"
        ) from None
    return factory(seed)


__all__ = ["STRATEGIES", "GreedyBot", "RandomBot", "make_bot"]
