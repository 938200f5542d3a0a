"""The solver's public functions: ``solve``, ``hint``, ``is_winnable_seed`` and
``find_winnable_seed`` (re-exported by ``engine.solver``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from ..errors import BadLayout
from ..game import Game, new_game
from ..moves import TO_FOUNDATION, Move, parse_move
from ..shuffle import SEED_MAX, check_seed
from .positions import position_for
from .result import WON, Budget, SolveResult
from .search import search

DEFAULT_BUDGET = Budget()  # 500,000 positions or 10 s
HINT_BUDGET = Budget(max_nodes=20_000, max_seconds=1.0)
SEED_BUDGET = Budget(max_nodes=50_000, max_seconds=2.0)  # per seed, find_winnable_seed
FIND_SECONDS = 10.0  # find_winnable_seed's default bound on its total time


def load_layout(layout: Any) -> Game:
    """The ``Game`` of a full-information layout (RULES.md format), as
    ``Game.from_layout`` reads it, but a value nested so deeply that reading or quoting it
    in an error message would exhaust Python's stack raises ``BadLayout`` too, never
    ``RecursionError``."""
    try:
        return Game.from_layout(layout)
    except RecursionError:
        raise BadLayout("the layout is nested too deeply (piles are lists of cards)") from None


def _as_game(game_or_layout: Game | Mapping[str, Any]) -> Game:
    if isinstance(game_or_layout, Game):
        return game_or_layout
    return load_layout(game_or_layout)


def solve(
    game_or_layout: Game | Mapping[str, Any],
    max_nodes: int = DEFAULT_BUDGET.max_nodes,
    max_seconds: float = DEFAULT_BUDGET.max_seconds,
    clock: Callable[[], float] = time.monotonic,
    *,
    budget: Budget | None = None,
) -> SolveResult:
    """Search the position of a ``Game`` (left unchanged) or of a full-information layout
    (RULES.md format; face-down cards named, so Brisbane is solved knowing them).

    Returns a ``SolveResult``: ``"won"`` with a solution that ``Game.play`` accepts move
    by move up to a won game, ``"unwinnable"`` when every reachable position was searched,
    or ``"unknown"`` when ``max_nodes`` positions were expanded or ``max_seconds`` spent
    first, as read on ``clock`` (injectable, seconds; only the search reads it).
    ``budget``, when given, replaces ``max_nodes``, ``max_seconds`` and ``clock``.
    ``elapsed`` is wall time. A bad layout raises the engine's ``BadLayout`` (or
    ``UnknownVariant`` / ``BadOption``); a bad budget raises ``ValueError``. Memory grows
    with the positions expanded (docs/SOLVER.md)."""
    if budget is None:
        budget = Budget(max_nodes, max_seconds, clock)
    return _solve(_as_game(game_or_layout), budget)[0]


def _solve(game: Game, budget: Budget) -> tuple[SolveResult, str | None]:
    """The result and the search's best-effort first move."""
    started = time.perf_counter()  # elapsed is wall time; the budget's clock is the search's
    if game.won:
        return SolveResult(WON, (), 0, 0.0, "already won"), None
    out = search(position_for(game), budget)
    elapsed = time.perf_counter() - started
    result = SolveResult(out.verdict, tuple(out.moves), out.nodes, elapsed, out.reason)
    return result, out.best_first


def hint(game: Game, budget: Budget = HINT_BUDGET) -> Move | None:
    """A good move for ``game`` (left unchanged): the first move of a solution when the
    search finds one within ``budget``; otherwise the first move towards the position with
    the most cards up that the search saw, else a foundation move, else the first legal
    move. None when the game is won or has no legal move."""
    legal = game.legal_moves()
    if not legal:
        return None
    result, best = _solve(game, budget)
    first = result.moves[0] if result.moves else best
    if first is not None:
        mv = parse_move(first)
        if game.why_illegal(mv) is None:
            return mv
    for mv in legal:
        if mv.kind == TO_FOUNDATION:
            return mv
    return legal[0]


def is_winnable_seed(
    variant: str,
    seed: int,
    options: Mapping[str, Any] | None = None,
    budget: Budget = SEED_BUDGET,
) -> bool | None:
    """Whether the deal ``new_game(variant, seed, **options)`` can be won: True (a
    solution was found), False (proven unwinnable) or None (undecided within ``budget``).
    Bad arguments raise the engine's errors (``UnknownVariant``, ``BadOption``,
    ``BadSeed``)."""
    game = new_game(variant, seed, **dict(options or {}))
    return _solve(game, budget)[0].winnable


def find_winnable_seed(
    variant: str,
    options: Mapping[str, Any] | None = None,
    start_seed: int = 0,
    budget: Budget | float = SEED_BUDGET,
    *,
    total_seconds: float | None = None,
) -> tuple[int, SolveResult] | None:
    """The first seed from ``start_seed`` upwards whose deal is proven winnable, with its
    ``SolveResult`` (verdict ``"won"``, the solution in ``moves``): ``(seed, result)``.

    ``budget`` is what each seed may spend (a ``Budget``, whose clock also times the whole
    call), or a number: the seconds the
    whole call may take, each seed then getting ``SEED_BUDGET``. The call stops after
    ``total_seconds`` (default ``FIND_SECONDS`` = 10 s, or the number given as
    ``budget``), overrunning by at most one search step and one deal (a few milliseconds),
    and then returns None; seeds are not searched past 2**64-1. docs/SOLVER.md gives the
    measured time per variant. Bad arguments raise the engine's errors (``BadSeed``,
    ``UnknownVariant``, ``BadOption``) or ``ValueError``."""
    if isinstance(budget, Budget):
        per_seed, total = budget, FIND_SECONDS if total_seconds is None else total_seconds
    elif isinstance(budget, int | float) and not isinstance(budget, bool):
        per_seed, total = SEED_BUDGET, float(budget)
        if total_seconds is not None:
            total = min(total, total_seconds)
    else:
        raise ValueError(f"budget must be a Budget or a number of seconds, not {budget!r}")
    if not total > 0 or total == float("inf"):
        raise ValueError(f"total_seconds must be positive and finite, not {total}")
    opts = dict(options or {})
    seed = check_seed(start_seed)
    clock = per_seed.clock
    deadline = clock() + total
    while seed <= SEED_MAX:
        remaining = deadline - clock()
        if remaining <= 0:
            return None
        game = new_game(variant, seed, **opts)
        seed_budget = replace(per_seed, max_seconds=min(per_seed.max_seconds, remaining))
        result = _solve(game, seed_budget)[0]
        if result.verdict == WON:
            return seed, result
        seed += 1
    return None
