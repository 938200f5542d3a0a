"""Undoing back instead of restoring (``search.TRAIL_LIMIT``): when the position the
search pops is a child of a position on the line it played since the last restore, it
undoes back to that position instead of restoring its snapshot. That must leave the
search exactly as it was: the same verdict, positions expanded and solution as a search
that restores every time (``TRAIL_LIMIT`` 0), while restoring less often."""

from __future__ import annotations

import pytest

from engine import new_game
from engine.solver import Budget, search, solve
from engine.solver.result import SolveResult
from engine.solver.single import SinglePosition
from engine.solver.yukon import YukonPosition


def _solve(variant: str, seed: int, nodes: int) -> SolveResult:
    return solve(new_game(variant, seed), budget=Budget(max_nodes=nodes, max_seconds=1e6))


@pytest.mark.parametrize(
    ("variant", "seed", "nodes"),
    [
        ("portuguese", 59, 3000),  # undecided at this budget: a long, jumpy search
        ("portuguese", 619, 3000),  # proven unwinnable (670 reachable positions)
        ("portuguese", 18, 3000),
        ("spanish", 4, 3000),
        ("brisbane", 445, 3000),
        ("perseverance", 7, 3000),
        ("fortress", 3, 3000),
    ],
)
def test_undoing_back_searches_as_restoring(
    monkeypatch: pytest.MonkeyPatch, variant: str, seed: int, nodes: int
) -> None:
    with_trail = _solve(variant, seed, nodes)
    monkeypatch.setattr(search, "TRAIL_LIMIT", 0)
    restoring = _solve(variant, seed, nodes)
    assert (with_trail.verdict, with_trail.nodes, with_trail.moves) == (
        restoring.verdict, restoring.nodes, restoring.moves)
    if with_trail.verdict == "won":
        game = new_game(variant, seed)
        for mv in with_trail.moves:
            game.play(mv)
        assert game.won


@pytest.mark.parametrize(("variant", "cls"), [("portuguese", SinglePosition),
                                               ("brisbane", YukonPosition)])
def test_undoing_back_restores_less(
    monkeypatch: pytest.MonkeyPatch, variant: str, cls: type
) -> None:
    # the undo path is taken at all (else the test above compares a search with itself)
    calls = {"restore": 0}
    original = cls.restore

    def counting(self: object, snap: object, key: int) -> None:
        calls["restore"] += 1
        original(self, snap, key)

    monkeypatch.setattr(cls, "restore", counting)
    _solve(variant, 59, 3000)
    with_trail = calls["restore"]
    calls["restore"] = 0
    monkeypatch.setattr(search, "TRAIL_LIMIT", 0)
    _solve(variant, 59, 3000)
    assert with_trail < calls["restore"]
