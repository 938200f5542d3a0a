"""What a search returns (``SolveResult``) and how much it may spend (``Budget``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

Verdict = Literal["won", "unwinnable", "unknown"]

WON: Verdict = "won"
UNWINNABLE: Verdict = "unwinnable"
UNKNOWN: Verdict = "unknown"


CHECK_EVERY = 1  # steps between clock reads: a read costs ~0.06 us, a step 20 us to 1 ms


@dataclass(frozen=True)
class Budget:
    """A search budget: the search stops with verdict ``"unknown"`` once it has expanded
    ``max_nodes`` positions or ``clock`` has advanced ``max_seconds`` since it started,
    whichever comes first.

    ``clock`` (seconds, monotonic; default ``time.monotonic``) is the only clock the
    search reads: tests inject a fake one. It is read when the search starts and then
    once every ``check_every`` steps (a step expands one position, or values moves that
    an expanded position deferred), so a search overruns ``max_seconds`` by at most
    ``check_every`` steps (about a millisecond each at worst; docs/SOLVER.md has the
    measured overrun). The node cap is exact: never more than ``max_nodes`` expansions."""

    max_nodes: int = 500_000  # about 0.5 GB of stored positions at most (docs/SOLVER.md)
    max_seconds: float = 10.0
    clock: Callable[[], float] = field(default=time.monotonic, compare=False, repr=False)
    check_every: int = CHECK_EVERY

    def __post_init__(self) -> None:
        if self.max_nodes < 1:
            raise ValueError(f"max_nodes must be at least 1, not {self.max_nodes}")
        if not self.max_seconds > 0:
            raise ValueError(f"max_seconds must be positive, not {self.max_seconds}")
        if self.check_every < 1:
            raise ValueError(f"check_every must be at least 1, not {self.check_every}")


@dataclass(frozen=True)
class SolveResult:
    """The outcome of one search.

    ``verdict`` is ``"won"`` (``moves`` is a solution in canonical notation: played in
    order with ``Game.play`` from the solved position, it wins the game), ``"unwinnable"``
    (every position reachable from the start was searched and none is won; ``moves`` is
    empty) or ``"unknown"`` (the budget ran out first; ``moves`` is empty).
    ``nodes`` counts the distinct positions expanded, ``elapsed`` is wall time in seconds
    and ``reason`` says in words why the search stopped."""

    verdict: Verdict
    moves: tuple[str, ...]
    nodes: int
    elapsed: float
    reason: str

    @property
    def winnable(self) -> bool | None:
        """True if proven winnable, False if proven unwinnable, None if undecided."""
        if self.verdict == WON:
            return True
        if self.verdict == UNWINNABLE:
            return False
        return None

    @property
    def nodes_per_second(self) -> float:
        """Search speed (0.0 when no time was measured)."""
        return self.nodes / self.elapsed if self.elapsed > 0 else 0.0
