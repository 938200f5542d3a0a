"""The solver on hand-built positions with known answers, for every variant; budgets,
hint, and the seed helpers. Each known answer is also checked by ``brute_force`` (an
independent exhaustive search over the engine's own moves)."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from engine import BadLayout, BadOption, Game, UnknownVariant, new_game
from engine.moves import Move
from engine.solver import Budget, SolveResult, find_winnable_seed, hint, is_winnable_seed, solve
from engine.solver.memory import drain, gc_paused
from engine.solver.single import SinglePosition

from .engine_testkit import game, layout
from .solver_testkit import brute_force


def replays_to_win(g: Game, result: SolveResult) -> bool:
    """Whether the result's moves, played with ``Game.play`` on a copy, win the game."""
    g = g.copy()
    for mv in result.moves:
        g.play(mv)
    return g.won


def stuck_deal(variant: str, tops: str, **kwargs: Any) -> Game:
    """All 52 cards on the tableau, ``tops`` (one per pile) on top of the piles and the
    other cards spread under them (face down in Brisbane): a position with no move."""
    top_cards = tops.split()
    rest = [r + s for s in "SHDC" for r in "A23456789TJQK" if r + s not in top_cards]
    n = len(top_cards)
    under = [rest[i::n] for i in range(n)]
    sep = " | " if variant == "brisbane" else " "
    piles = [sep.join((" ".join(u), t)) for u, t in zip(under, top_cards, strict=True)]
    return game(variant, piles, **kwargs)


# ------------------------------------------------------------ known answers
WINNABLE = {
    "portuguese: a King must go to an empty pile first": game(
        "portuguese", ["QH QS KH", "KS"]),
    "portuguese: from a deal": game(
        "portuguese", ["", "QC", "KD", "", "QS", "QH JH KC", "", "", "", "", "JS TH", "KH KS"]),
    "spanish: from a deal": game(
        "spanish", ["", "", "KD", "", "", "KC QH JH", "", "", "", "", "", "KH KS"]),
    "spanish with takeback": game(
        "spanish", ["QS KH", "KS", "JH QH"], options={"foundation_takeback": True}),
    "brisbane: a face-down card under a King": game("brisbane", ["QH QS | KH", "KS"]),
    "brisbane: a group moves off a buried card": game(
        "brisbane", ["9S QD JC", "QC KC", "KS QS JS TS", "KD", "JH", "QH", "KH"]),
    "brisbane, any card to an empty pile": game(
        "brisbane", ["QS | JH", "KS QH", "KH"], options={"empty_pile": "any"}),
    "fortress: build up on a suit neighbour": game("fortress", ["JS KS", "QS"]),
    "fortress with takeback": game(
        "fortress", ["JS KS", "QS", "KH"], options={"foundation_takeback": True}),
    "perseverance: only a redeal unlocks it": game(
        "perseverance", ["KS", "QS TS", "2S", "7S 9S JS 8S", "6S 3S 4S 5S"],
        foundations={"S": 1, "H": 13, "D": 13, "C": 13}, options={"redeals": 1}),
    "perseverance, redeal any time": game(
        "perseverance", ["KS", "QS TS", "2S", "7S 9S JS 8S", "6S 3S 4S 5S"],
        foundations={"S": 1, "H": 13, "D": 13, "C": 13},
        options={"redeals": 1, "redeal_when": "any_time"}),
}

UNWINNABLE = {
    "portuguese: TD can go nowhere and covers 6D": game(
        "portuguese", ["", "8D", "", "9D", "", "7D", "", "KS", "KH", "", "KD", "QD", "JD 6D TD"]),
    "portuguese: no move at all": stuck_deal(
        "portuguese", "KS KH KD KC JS JH JD JC 9S 9H 9D 9C 7S"),
    "spanish: no move at all": stuck_deal(
        "spanish", "KS KH KD KC JS JH JD JC 9S 9H 9D 9C 7S"),
    "spanish (Solvitaire preset), seed 2047: 9 positions, none won": new_game(
        "spanish", 2047, kings_to_bottom=False, foundation_takeback=True),
    # the one deal of Spanish seeds 0-4999 proven unwinnable (docs/SOLVER.md, win rates)
    "spanish, seed 1179: 3 positions, none won": new_game("spanish", 1179),
    # the first Portuguese deal proven unwinnable, in the win-rate run of docs/SOLVER.md
    "portuguese, seed 619: 670 positions, none won": new_game("portuguese", 619),
    "brisbane: no move at all": stuck_deal("brisbane", "KS JS 9S 7S KH JH 9H"),
    "fortress: no move at all": stuck_deal("fortress", "KS JS 9S KH JH 9H KD JD KC JC"),
    "perseverance: stuck without a redeal": game(
        "perseverance", ["KS", "QS TS", "2S", "7S 9S JS 8S", "6S 3S 4S 5S"],
        foundations={"S": 1, "H": 13, "D": 13, "C": 13}, options={"redeals": 0}),
    "perseverance: the redeals give the same piles": game(
        "perseverance", ["2S 4S", "3S 5S", "6S 7S 8S 9S TS JS QS KS"],
        foundations={"S": 1, "H": 13, "D": 13, "C": 13}),
}


@pytest.mark.parametrize("name", sorted(WINNABLE))
def test_winnable_positions_are_won_with_a_replayable_solution(name: str) -> None:
    g = WINNABLE[name]
    if not g.rules.takeback:  # with takeback every card can come back: too big to brute-force
        assert brute_force(g) is True
    before = g.to_layout()
    result = solve(g, max_seconds=10)
    assert result.verdict == "won", result.reason
    assert result.winnable is True
    assert replays_to_win(g, result)
    assert g.to_layout() == before  # the solver works on its own copy


@pytest.mark.parametrize("name", sorted(UNWINNABLE))
def test_unwinnable_positions_are_proven_unwinnable(name: str) -> None:
    g = UNWINNABLE[name]
    assert brute_force(g) is False
    result = solve(g, max_seconds=10)
    assert result.verdict == "unwinnable", result.reason
    assert result.winnable is False
    assert result.moves == ()
    assert result.nodes >= 1


def test_forced_first_moves_and_redeals_appear_in_solutions() -> None:
    result = solve(WINNABLE["brisbane: a face-down card under a King"])
    assert result.moves[0] == "1>3"  # KH to the first empty pile turns QS up
    result = solve(WINNABLE["portuguese: a King must go to an empty pile first"])
    assert result.moves[0] == "1>3"
    result = solve(WINNABLE["perseverance: only a redeal unlocks it"])
    assert "redeal" in result.moves


def test_solve_takes_a_layout_dict_and_a_won_game() -> None:
    lay = layout("fortress", ["JS KS", "QS"])
    result = solve(lay)
    assert result.verdict == "won" and replays_to_win(Game.from_layout(lay), result)
    won = game("spanish", [])
    assert won.won
    assert solve(won) == SolveResult("won", (), 0, 0.0, "already won")


def test_bad_layouts_and_budgets_raise_clear_errors() -> None:
    with pytest.raises(BadLayout, match="tableau"):
        solve({"variant": "spanish", "foundations": {}})
    with pytest.raises(UnknownVariant):
        solve({"variant": "klondike", "tableau": [], "foundations": {}})
    deep: list[Any] = []
    inner = deep
    for _ in range(100_000):  # quoting this in an error message would exhaust the stack
        inner.append([])
        inner = inner[0]
    with pytest.raises(BadLayout, match="nested too deeply"):
        solve({"variant": deep, "tableau": [], "foundations": {}})
    with pytest.raises(ValueError, match="max_nodes"):
        solve(new_game("spanish", 1), max_nodes=0)
    with pytest.raises(ValueError, match="max_seconds"):
        solve(new_game("spanish", 1), max_seconds=0)


# ------------------------------------------------------------ budgets
def test_an_exhausted_node_budget_gives_unknown_never_a_wrong_verdict() -> None:
    for variant, seed in (("fortress", 5), ("spanish", 0), ("brisbane", 0)):
        full = solve(new_game(variant, seed), max_seconds=20)
        assert full.verdict in ("won", "unwinnable") and full.nodes > 3
        small = solve(new_game(variant, seed), max_nodes=2)
        assert small.verdict == "unknown", (variant, small)
        assert small.moves == () and small.winnable is None
        assert small.nodes == 2 and "node budget" in small.reason


class JumpingClock:
    """A clock that reads 0.0 for its first ``still`` reads and then a day later: the
    budget's deadline passes at a known read, whatever the machine's speed. It counts
    its reads, and fails the test rather than let a search that ignores it run forever."""

    def __init__(self, still: int) -> None:
        self.still, self.reads = still, 0

    def __call__(self) -> float:
        self.reads += 1
        assert self.reads < 100_000, "the search never stopped reading the clock"
        return 0.0 if self.reads <= self.still else 86_400.0


def test_an_exhausted_time_budget_gives_unknown_at_the_first_late_read() -> None:
    # Portuguese seed 0 needs far more than one expansion to decide (its search expands
    # thousands of positions), so only the clock can stop this search.
    clock = JumpingClock(still=1)  # the start is read at 0; every later read is late
    result = solve(new_game("portuguese", 0), max_nodes=10**6, max_seconds=0.3, clock=clock)
    assert result.verdict == "unknown" and "time budget of 0.3 s" in result.reason
    assert clock.reads == 2  # it stopped at the first read that saw the deadline passed
    assert result.nodes < 10**6


class TickingClock:
    """A fake clock: every read advances it by ``step`` seconds."""

    def __init__(self, step: float) -> None:
        self.now, self.step, self.reads = 0.0, step, 0

    def __call__(self) -> float:
        self.now += self.step
        self.reads += 1
        return self.now


def test_the_clock_is_read_every_check_every_steps() -> None:
    # Portuguese seed 18 needs far more than 8 expansions; each clock read advances the
    # clock by a second, so a 0.5 s budget is spent at the first check: after exactly
    # check_every expansions.
    for check_every in (1, 4, 8):
        clock = TickingClock(1.0)
        budget = Budget(max_nodes=10**6, max_seconds=0.5, clock=clock, check_every=check_every)
        result = solve(new_game("portuguese", 18), budget=budget)
        assert result.verdict == "unknown" and "time budget" in result.reason
        assert result.nodes == check_every
        assert result.moves == ()


def test_the_budget_is_validated() -> None:
    with pytest.raises(ValueError, match="check_every"):
        Budget(check_every=0)


# ------------------------------------------------------------ hint
def test_hint_is_the_first_move_of_a_solution() -> None:
    g = WINNABLE["portuguese: a King must go to an empty pile first"]
    mv = hint(g)
    assert isinstance(mv, Move) and str(mv) == "1>3"
    g2 = g.copy()
    g2.play(mv)
    assert solve(g2).verdict == "won"


def test_hint_gives_a_legal_move_when_no_solution_exists_and_none_when_stuck() -> None:
    g = UNWINNABLE["portuguese: TD can go nowhere and covers 6D"]
    mv = hint(g, Budget(max_nodes=1000, max_seconds=1))
    assert mv is not None and g.why_illegal(mv) is None
    assert hint(UNWINNABLE["spanish: no move at all"]) is None
    assert hint(game("spanish", [])) is None


def test_hint_within_a_tiny_budget_still_gives_a_legal_move() -> None:
    g = new_game("portuguese", 0)
    mv = hint(g, Budget(max_nodes=1, max_seconds=1))
    assert mv is not None and g.why_illegal(mv) is None


# ------------------------------------------------------------ seeds
def test_is_winnable_seed_agrees_with_solve() -> None:
    budget = Budget(max_nodes=50_000, max_seconds=5)
    for seed in range(6):
        expected = solve(new_game("fortress", seed)).winnable
        assert is_winnable_seed("fortress", seed, {}, budget) is expected
    assert is_winnable_seed("perseverance", 0, {"redeals": 0}) is False
    with pytest.raises(BadOption):
        is_winnable_seed("fortress", 1, {"redeals": 2})


def test_find_winnable_seed_returns_a_proven_winnable_seed_at_or_after_the_start() -> None:
    found = find_winnable_seed("fortress", {}, 1000)
    assert found is not None
    seed, result = found
    assert seed >= 1000 and result.verdict == "won"
    assert replays_to_win(new_game("fortress", seed), result)
    for earlier in range(1000, seed):  # the first winnable one: those before are not won
        assert solve(new_game("fortress", earlier)).verdict != "won"


def test_find_winnable_seed_stops_when_its_total_time_is_spent() -> None:
    # One node per seed decides no deal, so only the total time can end this call; the
    # clock jumps past it after the call's first read.
    clock = JumpingClock(still=2)
    found = find_winnable_seed("spanish", {}, 0, Budget(1, 0.05, clock), total_seconds=0.5)
    assert found is None
    assert clock.reads <= 6  # start, the first seed's search, then the late read that ends it
    with pytest.raises(ValueError, match="total_seconds"):
        find_winnable_seed("fortress", {}, 0, total_seconds=0)


# ------------------------------------------------------------ memory housekeeping
def test_the_collector_is_paused_during_searches_and_restored_after_the_last() -> None:
    assert drain(timeout=60)  # no earlier test's tables still being freed
    assert gc.isenabled()
    outer, inner = gc_paused(), gc_paused()
    outer.__enter__()
    assert not gc.isenabled()
    inner.__enter__()  # a second, concurrent search
    outer.__exit__(None, None, None)
    assert not gc.isenabled()  # the other one still runs
    inner.__exit__(None, None, None)
    assert gc.isenabled()
    gc.disable()  # a program that turned it off keeps it off
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_search_leaves_the_collector_as_it_found_it() -> None:
    assert drain(timeout=60)
    assert gc.isenabled()
    assert solve(new_game("spanish", 3)).verdict == "won"  # a small search: freed inline
    assert gc.isenabled()
    # a large one (Portuguese seed 18 stores ~4 positions per expansion): freed later
    result = solve(new_game("portuguese", 18), max_nodes=6000)
    assert result.verdict == "unknown"
    assert drain(timeout=60)
    assert gc.isenabled()


def test_restarts_keep_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    # Portuguese takes turns between four heuristics (search._portfolio). With slices of
    # 50 expansions, the first two runs end on their node slice; the clock's deadline
    # passes at its 121st read, in the third run, and the search stops right there: a run
    # that starts after another reads the same deadline, and nothing between runs waits.
    monkeypatch.setattr(SinglePosition, "restart_nodes", 50)
    clock = JumpingClock(still=120)
    result = solve(new_game("portuguese", 18), max_nodes=10**6, max_seconds=1.0, clock=clock)
    assert result.verdict == "unknown" and "time budget" in result.reason
    assert clock.reads == 121
    assert 100 < result.nodes <= 122  # two slices of 50, then one expansion per read
