"""The solver: decides whether a position of any of the five variants can be won, and
finds a solution when it can (pure Python, no I/O; docs/SOLVER.md).

- ``solve(game_or_layout, max_nodes=..., max_seconds=...)`` → ``SolveResult``
  (verdict ``"won"`` with the moves, ``"unwinnable"`` or ``"unknown"``; nodes; time)
- ``hint(game, budget)`` → a good ``Move`` or None
- ``is_winnable_seed(variant, seed, options, budget)`` → True / False / None
- ``find_winnable_seed(variant, options, start_seed, budget)`` → ``(seed, moves)`` or
  None, within a bounded time
- ``Budget(max_nodes, max_seconds, clock=time.monotonic, check_every=1)``
- ``load_layout(layout)`` → ``Game`` (``BadLayout``, never ``RecursionError``)
"""

from .api import (
                  DEFAULT_BUDGET,
                  FIND_SECONDS,
                  HINT_BUDGET,
                  SEED_BUDGET,
                  find_winnable_seed,
                  hint,
                  is_winnable_seed,
                  load_layout,
                  solve,
)
from .result import UNKNOWN, UNWINNABLE, WON, Budget, SolveResult, Verdict

__all__ = [
    "DEFAULT_BUDGET",
    "FIND_SECONDS",
    "HINT_BUDGET",
    "SEED_BUDGET",
    "UNKNOWN",
    "UNWINNABLE",
    "WON",
    "Budget",
    "SolveResult",
    "Verdict",
    "find_winnable_seed",
    "hint",
    "is_winnable_seed",
    "load_layout",
    "solve",
]
