"""The seed check a client runs on ``Results``: was the deal the one committed to before
the race, and do the published move logs replay to the published ranking and times?

A thin view of ``protocol.verify.verify_results`` (the same check ``solrace verify`` and
the server's tests run), shaped for the client's screens.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from protocol import messages as M
from protocol.verify import verify_results


@dataclass
class SeedCheck:
    """The verdict: ``ok`` only if every check passed; ``lines`` say what was checked,
    then every problem found."""

    ok: bool
    commitment_ok: bool
    replay_ok: bool
    lines: list[str] = field(default_factory=list)


def check_results(results: M.Results, committed: str | None = None) -> SeedCheck:
    """Check ``results``. ``committed`` is the commitment the client saw before the race
    (``Joined.commitment``); None skips that comparison."""
    verdict = verify_results(results, committed)
    lines = verdict.lines + [f"problem: {p}" for p in verdict.problems]
    return SeedCheck(verdict.ok, verdict.commitment_ok, verdict.replay_ok, lines)


def deal_verdict(results: M.Results) -> str:
    """One line on the deal itself: was it winnable, and its par (the length of the
    solver's solution, a good line, not always the shortest)."""
    if results.winnable is True:
        par = f", par {results.par} moves" if results.par is not None else ""
        return f"deal: winnable{par}"
    if results.winnable is False:
        return "deal: not winnable (the solver searched every position)"
    return "deal: not decided by the solver (yet)"
