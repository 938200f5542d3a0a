"""The search: best-first over a variant's ``Position``, with a transposition table.

Every variant supplies a ``Position`` (a mutable board in the solver's own compact form)
that lists its moves, plays a move together with the safe foundation moves that follow
it, undoes it, saves and restores itself as a compact snapshot, estimates the work left
(``heuristic``) and keeps a position key up to date (``keys``).

The driver (iterative, no recursion) always expands the stored position with the
lowest heuristic value plus ``g_weight`` per move played (greedy best-first, nudged
towards short solutions), valuing foundation moves first (``_best_first``), taking
turns between weights where a variant asks for restarts (``_portfolio``). Each
distinct position is stored once (the key set is the transposition table), so when no
stored position is left to expand, no won position is reachable: the deal is
unwinnable. Safe foundation moves are dominating (the position after one is winnable
whenever the one before was), so playing them at once loses no solution.
"""

from __future__ import annotations

import heapq
from collections.abc import Generator
from typing import Any, Protocol

from ..moves import TABLEAU, TAKEBACK, TO_FOUNDATION
from .memory import FREE_IN_BACKGROUND, free_later, gc_paused
from .result import UNKNOWN, UNWINNABLE, WON, Budget, Verdict

DEAD = 1 << 40  # what heuristic() returns for a position it has proven lost
Mv = tuple[int, int, int, int]  # (kind, src, dst, n), piles 0-based; kinds as engine.moves
Undo = tuple[Any, ...]  # whatever a position needs to take its move back
Link = tuple[Mv, Any] | None  # (move, parent link): the path to a stored position



class Position(Protocol):
    """A board the driver can search. ``key`` identifies the position up to whatever the
    variant ignores (pile order, usually); ``left`` counts cards not on foundations."""

    key: int
    left: int
    piles: list[list[int]]  # bottom to top; Brisbane's face-down cards included
    found: list[int]  # cards on each suit's foundation
    g_weight: int  # heuristic units added per move played: leans towards short lines
    foundation_first: bool  # value foundation moves before the others (``_best_first``)
    restart_weights: tuple[int, ...]  # other g_weights to take turns with (``_portfolio``)
    restart_nodes: int  # expansions of each run's first turn (``RESTART_NODES`` usually)
    restart_growth: int  # how many times more each run expands in all by each round's end
    restart_step: int  # once a run's total reaches 2 * restart_step, it grows by this
    # many per round instead (0: it multiplies for ever)
    newest_first: bool  # among stored positions of equal value, expand the newest first

    def start(self) -> list[str]:
        """Play the safe foundation moves of the initial position; their notation."""

    def moves(self) -> list[tuple[Mv, int]]:
        """The moves worth trying here, each with the key it leads to when that is cheap
        to tell without playing it, else -1."""

    def play(self, mv: Mv) -> Undo:
        """Play ``mv`` and the safe foundation moves after it; what ``undo`` needs."""

    def undo(self, u: Undo) -> None:
        """Take back what ``play`` did."""

    def notation(self, u: Undo) -> list[str]:
        """The canonical notation of what ``play`` did (the move, then its auto-moves)."""

    def snapshot(self) -> Any:
        """An immutable, compact copy of the board (without its key)."""

    def restore(self, snap: Any, key: int) -> None:
        """Set the board to a snapshot taken when its key was ``key``."""

    def heuristic(self) -> int:
        """An estimate of the work left; lower is better, 0 or less is no promise.
        ``DEAD`` when the position is proven lost: it is then not searched further."""

    def weigh(self, run: int) -> None:
        """Set the heuristic for run number ``run`` of a restart schedule (0 for the
        ``g_weight`` run, i for ``restart_weights[i - 1]``'s): runs may differ in more
        than their weight per move. Only the order of the search depends on it."""


class Outcome:
    """What ``search`` found (a mutable record; ``api`` turns it into a SolveResult)."""

    __slots__ = ("best_first", "moves", "nodes", "reason", "verdict")

    def __init__(self) -> None:
        self.verdict: Verdict = UNKNOWN
        self.moves: list[str] = []
        self.nodes = 0
        self.reason = ""
        self.best_first: str | None = None  # first move towards the most progress seen


def _path(link: Link) -> list[Mv]:
    steps: list[Mv] = []
    while link is not None:
        steps.append(link[0])
        link = link[1]
    steps.reverse()
    return steps


def _replay(pos: Position, root: Any, root_key: int, path: list[Mv]) -> list[str]:
    """The notation of ``path`` played from the root (auto-moves included)."""
    pos.restore(root, root_key)
    out: list[str] = []
    for mv in path:
        out.extend(pos.notation(pos.play(mv)))
    return out


def _clears(piles: list[list[int]], found: list[int]) -> bool:
    """Whether foundation moves alone empty the tableau: the position is then won (in
    the endgame this saves expanding one position per card)."""
    for p in piles:  # usually no top card can go up: say so without copying anything
        if p and found[p[-1] // 13] == p[-1] % 13:
            break
    else:
        return not any(piles)
    heights = found[:]
    sizes = [len(p) for p in piles]  # each pile's cards not yet sent up (no copies)
    moved = True
    while moved:
        moved = False
        for i, p in enumerate(piles):
            n = sizes[i]
            while n:
                c = p[n - 1]
                if heights[c // 13] != c % 13:
                    break
                heights[c // 13] += 1
                n -= 1
            if n != sizes[i]:
                sizes[i] = n
                moved = True
    return not any(sizes)


def _foundation_moves(piles: list[list[int]], found: list[int]) -> list[tuple[Mv, int]]:
    """The foundation moves of a position (a top card that is its suit's next card), as
    ``Position.moves`` lists them."""
    return [((TO_FOUNDATION, i, 0, 1), -1) for i, p in enumerate(piles)
            if p and found[p[-1] // 13] == p[-1] % 13]


def _finish(pos: Position, link: Link) -> Link:
    """Play foundation moves (``_clears`` said they win) until no card is left; the path
    to the won position."""
    while pos.left:
        found = pos.found
        for i, p in enumerate(pos.piles):
            if p and found[p[-1] // 13] == p[-1] % 13:
                mv: Mv = (TO_FOUNDATION, i, 0, 1)
                pos.play(mv)
                link = (mv, link)
                break
        else:  # unreachable after _clears; never loop forever
            raise AssertionError("the foundation moves stopped before the tableau was empty")
    return link


class _Run:
    """Where a best-first run stopped (its last slice's end, or its end)."""

    __slots__ = ("best_left", "best_link", "done", "exhausted", "heap", "nodes", "positions",
                 "seen", "won")

    def __init__(self) -> None:
        self.nodes = 0  # positions expanded
        self.positions = 0  # distinct positions stored
        self.exhausted = False  # nothing left to expand: no won position is reachable
        self.won: Link = None  # the path to a won position, if found
        self.best_left = 53
        self.best_link: Link = None  # the path to the position with the fewest cards left
        self.done = False  # won, exhausted or out of time: the run cannot go on
        self.heap: list[Any] = []  # the run's tables, to free once the search is over
        self.seen: set[int] = set()


TRAIL_LIMIT = 32  # moves kept to undo instead of restoring (a longer way back is rare;
# 0 turns undoing back off)
TABLEAU_PENALTY = 0  # heuristic units: when a position's other moves are tried, once its
# foundation moves have been (at the position's own value)
TAKEBACK_PENALTY = 20  # and its takebacks (two cards' worth later)
Later = tuple[int, list[tuple[Mv, int]] | None]  # a position's deferred moves (None: all
# but its foundation moves, to be listed when the entry comes up), and their stage


def _best_first(
    pos: Position, g_weight: int, budget: Budget, deadline: float, max_nodes: int
) -> Generator[_Run, int, None]:
    """Best-first from the position ``pos`` is in, stopping once ``budget.clock()``
    passes ``deadline`` (read every ``budget.check_every`` steps: a step expands a
    position or values moves deferred). A generator: it yields its ``_Run`` once it has
    expanded ``max_nodes`` positions in all, and ``send(n)`` resumes it (the board
    restored to where the run was: other runs may have used it meanwhile) until it has
    expanded ``n`` in all; it yields its ``_Run`` with ``done`` set once it is won,
    exhausted or out of time, and must not be resumed then. A resumed run searches
    exactly as one that had been given the larger number from the start.

    A stored position is its parent's snapshot and key plus the move that leads to it
    (``link``): one snapshot per *expanded* position instead of one per child, and
    when the position popped is a child of the board's current position (the usual
    case: the search follows its best line) the board is not restored at all; when it
    is a child of a position on the line played since the last restore (up to
    ``TRAIL_LIMIT`` moves back), the board is undone back to that position.

    Partial expansion: most expanded positions lie on the line the search follows, and
    most moves of that line are foundation moves (with takeback, only Aces go up
    automatically). So when a position has foundation moves, and the variant's
    ``foundation_first`` says so (not Portuguese: there it left 11 of seeds 0-59
    undecided at 20,000 positions instead of 6), only those are played and valued at
    first; its other moves wait in one heap entry at the position's own value
    (``TABLEAU_PENALTY`` more), and are listed and valued only if that entry comes up.
    Takebacks, rarely part of a solution (23 in 200 Spanish solutions), wait in another
    entry at ``TAKEBACK_PENALTY`` more. Every entry still comes up before the search
    can run dry, so "unwinnable" still means every reachable position was searched."""
    run = _Run()
    seen = run.seen
    seen.add(pos.key)
    heap: list[tuple[int, int, Any, int, Link, int, Later | None]] = run.heap
    counter = 0
    # Ties (equal heuristic plus weight) are broken by the order of storing: oldest
    # first, or newest first (``tie`` -1), which follows one line across a plateau of
    # equal values instead of widening the search over all of it (Portuguese: see
    # docs/SOLVER.md, "Ties")
    tie = -1 if pos.newest_first else 1
    best_left, best_link = pos.left, None
    resumed = False
    nodes = 0
    clock, check_every = budget.clock, budget.check_every
    moves, play, undo = pos.moves, pos.play, pos.undo
    snapshot, heuristic, restore, add = pos.snapshot, pos.heuristic, pos.restore, seen.add
    pop, push = heapq.heappop, heapq.heappush
    first = pos.foundation_first
    # a board may tell cheaply that foundation moves alone cannot win (SinglePosition)
    clears = getattr(pos, "clears", None)
    # and value a tableau move that no safe move follows without playing it
    tableau_value = getattr(pos, "tableau_heuristic", None)
    steps = 0
    link: Link = None
    g = 0
    f = heuristic()
    later: Later | None = None  # the deferred moves of the entry popped, if it is one
    # (key before, undo) of each move played since the board was last restored, oldest
    # first: the board is the position after the last; undoing back to an ancestor gives
    # the very board its snapshot holds (piles in the same order), as every board on
    # this line is one the search expanded and snapshotted, or restored
    trail: list[tuple[int, Undo]] = []
    trail_limit = TRAIL_LIMIT  # 0: always restore (the tests compare the two)
    while True:
        if later is None:  # a position to expand
            nodes += 1
            if clears() if clears is not None else _clears(pos.piles, pos.found):
                run.won = _finish(pos, link)
                break
            g += g_weight
            key = pos.key
            todo = _foundation_moves(pos.piles, pos.found) if first else []
            if todo:
                stage = 0  # the other moves are listed only if their entry comes up
            else:
                stage, todo = 1, moves()
            # the children's (and deferred entries') snapshot: none for a position with
            # no move (a dead end, up to a third of Portuguese expansions)
            snap = snapshot() if todo else None
        else:  # moves deferred by a position expanded earlier (the board is back there)
            stage, deferred = later
            todo = deferred if deferred is not None else [
                m for m in moves() if m[0][0] != TO_FOUNDATION]  # those were valued
        takebacks: list[tuple[Mv, int]] = []  # stage 1
        for mv, k in todo:
            if k >= 0:
                if k in seen:
                    continue
                if tableau_value is not None and mv[0] == TABLEAU:
                    # what playing it would do: no card goes up (the key is known),
                    # so its cards left are its parent's, not a new best
                    add(k)
                    counter += tie
                    push(heap, (tableau_value(mv[1], mv[2]) + g, counter, snap, key,
                                (mv, link), g, None))
                    continue
            if stage == 1 and mv[0] == TAKEBACK:
                takebacks.append((mv, k))
                continue
            u = play(mv)
            k = pos.key
            if k in seen:
                undo(u)
                continue
            add(k)
            child: Link = (mv, link)
            left = pos.left
            if left < best_left:
                best_left, best_link = left, child
                if left == 0:
                    run.won = child
                    break
            h = heuristic()
            if h < DEAD:
                counter += tie
                push(heap, (h + g, counter, snap, key, child, g, None))
            undo(u)
        if run.won is not None:
            break
        if stage == 0:
            counter += tie
            push(heap, (f + TABLEAU_PENALTY, counter, snap, key, link, g, (1, None)))
        if takebacks:
            counter += tie
            push(heap, (f + TAKEBACK_PENALTY, counter, snap, key, link, g, (2, takebacks)))
        if not heap:
            run.exhausted = True
            break
        steps += 1  # expansions and deferred batches: either may take a millisecond
        if nodes >= max_nodes:  # the end of a slice: hand over, maybe to be resumed
            run.nodes, run.positions = nodes, len(seen)
            run.best_left, run.best_link = best_left, best_link
            max_nodes = yield run
            resumed = True
        elif steps % check_every == 0 and clock() > deadline:
            break
        f, _, snap, key, link, g, later = pop(heap)
        if resumed:  # another run may have left the board anywhere
            restore(snap, key)
            trail.clear()
            resumed = False
        elif pos.key != key:
            # Back to the parent: undo the moves played since the last restore when it
            # is on that line (an undo is a tenth of a restore), else restore it
            j = len(trail)
            while j and trail[j - 1][0] != key:
                j -= 1
            if j:
                while len(trail) >= j:
                    undo(trail.pop()[1])
            else:
                restore(snap, key)
                trail.clear()
        if later is None:
            assert link is not None  # a stored position always has a move
            u = play(link[0])
            if trail_limit:
                if len(trail) >= trail_limit:
                    del trail[0]
                trail.append((key, u))
    run.nodes, run.positions = nodes, len(seen)
    run.best_left, run.best_link = best_left, best_link
    run.done = True
    yield run


def search(pos: Position, budget: Budget, deadline: float | None = None) -> Outcome:
    """Best-first search from ``pos`` within ``budget`` (expanded positions, and seconds
    by ``budget.clock`` from now, or until ``deadline`` on that clock when given);
    ``pos`` is left in an unspecified position. Python's cyclic garbage collector is
    paused while it runs (``memory.gc_paused``)."""
    with gc_paused():
        return _search(pos, budget, budget.clock() + budget.max_seconds
                       if deadline is None else deadline)


RESTART_NODES = 20_000  # expansions of each run's first turn (default)
RESTART_GROWTH = 4  # and 4x more by each round's end (default)
RESTART_STEP = 0  # and never a fixed step instead (default)


def next_cap(pos: Position, cap: int) -> int:
    """Each run's total by the end of the next round of ``_portfolio``, after ``cap``."""
    step = pos.restart_step
    return cap + step if step and cap >= 2 * step else cap * pos.restart_growth


def _portfolio(
    pos: Position, budget: Budget, deadline: float, root: Any, root_key: int
) -> tuple[_Run, int]:
    """Best-first runs from the root within ``budget``: one run with ``pos.g_weight``,
    or, where the variant lists ``restart_weights``, runs that take turns between
    weights on slices of the node budget until one decides or the budget is spent: in
    round k (from 0) each run is resumed until it has expanded ``pos.restart_nodes``
    times ``pos.restart_growth``**k positions in all (where ``pos.restart_step`` is
    set, once that reaches twice the step, the step more per round instead). Which
    weight finds a solution quickly varies a lot from deal to deal (Brisbane seeds
    0-299 at 20,000 expansions: 7 undecided with weight 4, 8 with weight 8, none with
    both; Portuguese, docs/SOLVER.md). Every run stops at the
    same ``deadline``, so taking turns costs the budget nothing; a run is resumed where
    it stopped (before, each round started every run again from the root, and spent a
    quarter of its expansions redoing the last round's). The run that ended the search
    (with the best line of all runs), and the expansions of all runs."""
    weights = (pos.g_weight, *pos.restart_weights)
    gens: list[Generator[_Run, int, None] | None] = [None] * len(weights)
    runs: list[_Run] = []
    try:
        if len(weights) == 1:
            run = next(_best_first(pos, weights[0], budget, deadline, budget.max_nodes))
            runs.append(run)
            return run, run.nodes
        total, cap, turn = 0, pos.restart_nodes, 0
        spent = [0] * len(weights)  # expansions of each run so far
        best_left, best_link = 53, None
        while True:
            i = turn % len(weights)
            pos.weigh(i)
            limit = min(cap, spent[i] + budget.max_nodes - total)  # the run's new total
            gen = gens[i]
            if gen is None:
                pos.restore(root, root_key)
                gen = gens[i] = _best_first(pos, weights[i], budget, deadline, limit)
                run = next(gen)
                runs.append(run)
            else:
                run = gen.send(limit)
            total += run.nodes - spent[i]
            spent[i] = run.nodes
            if run.best_left < best_left:  # keep the best line seen by any run
                best_left, best_link = run.best_left, run.best_link
            if run.done or total >= budget.max_nodes:
                run.best_left, run.best_link = best_left, best_link
                return run, total  # decided, out of time, or out of nodes
            turn += 1
            if turn % len(weights) == 0:
                cap = next_cap(pos, cap)
    finally:
        for g in gens:
            if g is not None:
                g.close()
        for r in runs:
            if len(r.seen) >= FREE_IN_BACKGROUND:
                free_later(r.heap, r.seen)


def _search(pos: Position, budget: Budget, deadline: float) -> Outcome:
    out = Outcome()
    prefix = pos.start()
    out.nodes = 1
    if pos.left == 0:
        out.verdict, out.moves, out.reason = WON, prefix, "solved"
        return out
    root, root_key = pos.snapshot(), pos.key
    run, nodes = _portfolio(pos, budget, deadline, root, root_key)
    out.nodes = nodes
    if run.won is not None:
        out.verdict, out.reason = WON, "solved"
        out.moves = prefix + _replay(pos, root, root_key, _path(run.won))
        out.best_first = out.moves[0]
        return out
    if run.exhausted:
        out.verdict = UNWINNABLE
        out.reason = f"all {run.positions} reachable positions searched"
    elif nodes >= budget.max_nodes:
        out.reason = f"node budget of {budget.max_nodes} positions exhausted"
    else:
        out.reason = f"time budget of {budget.max_seconds:g} s exhausted"
    if prefix:
        out.best_first = prefix[0]
    elif run.best_link is not None:
        out.best_first = _replay(pos, root, root_key, _path(run.best_link)[:1])[0]
    return out
