"""Solver speed on Spanish Patience with foundation takeback (Solvitaire's preset:
``kings_to_bottom=false, foundation_takeback=true``), against a reference solver on
the same deals in the same run, and the time-budget overrun.

    .venv/bin/python bench/solver_speed.py                     # 1,000 deals against main
    .venv/bin/python bench/solver_speed.py --deals 200 --ref HEAD~3
    .venv/bin/python bench/solver_speed.py --no-ref --budget-deals 0
    .venv/bin/python bench/solver_speed.py --deals 0 --verdicts 300 --max-seconds 2 --budget-deals 0

The machine may be shared, so each deal is solved by this solver and by the reference
one (the whole ``engine`` package as it is at git ref ``--ref``, imported under another
name) one after the other, in alternating order, and a fixed pure-Python loop (list
copies of 52 ints, as bench/engine_bench.py) is timed every 50 deals: the ratios are
what carries over between machines and loads. Every "won" solution of this solver is
replayed through the engine (the run stops if one does not win), and the verdicts of
both solvers must agree wherever both decide.

The budget part solves deals that need more than the budget (Portuguese, Brisbane and
Spanish-with-takeback seeds that are not decided within it) with a time budget of
``--budget-ms`` and reports how long after the budget each call returned.
"""

from __future__ import annotations

import argparse
import importlib
import math
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import new_game
from engine.solver import Budget, solve

ROOT = Path(__file__).resolve().parents[1]
PRESET = {"kings_to_bottom": False, "foundation_takeback": True}


def baseline(n: int = 100_000) -> float:
    """Microseconds per list copy of 52 ints (best of 3): the machine's speed right now."""
    deck = list(range(52))
    best = math.inf
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(n):
            list(deck)
        best = min(best, time.perf_counter() - t)
    return best / n * 1e6


def load_reference(ref: str, where: Path) -> Any:
    """The ``engine`` package at git ref ``ref``, importable as ``engine_ref``."""
    target = where / "engine_ref"
    target.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "engine"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target), "--strip-components=1"],
                   input=archive, check=True)
    sys.path.insert(0, str(where))
    importlib.import_module("engine_ref.solver")
    return importlib.import_module("engine_ref")


def percentile(xs: list[float], q: float) -> float:
    """The q-quantile (nearest rank) of xs."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


def summary(name: str, xs: list[float]) -> str:
    return (f"{name}: median {1000 * statistics.median(xs):.2f} ms, "
            f"p90 {1000 * percentile(xs, 0.9):.1f} ms, p99 {1000 * percentile(xs, 0.99):.1f} ms, "
            f"max {1000 * max(xs):.0f} ms, total {sum(xs):.1f} s")


def speed(deals: int, ref: Any, max_seconds: float) -> None:
    """Solve seeds 0 .. deals-1 with both solvers; print the figures."""
    mine: list[float] = []
    theirs: list[float] = []
    base: list[float] = []
    verdicts: dict[str, int] = {}
    for seed in range(deals):
        if seed % 50 == 0:
            base.append(baseline())
        game = new_game("spanish", seed, **PRESET)
        order = (0, 1) if seed % 2 else (1, 0)
        for who in order:
            if who == 0:
                t = time.perf_counter()
                result = solve(game, max_nodes=10**8, max_seconds=max_seconds)
                mine.append(time.perf_counter() - t)
            elif ref is not None:
                g = ref.new_game("spanish", seed, **PRESET)
                t = time.perf_counter()
                other = ref.solver.solve(g, max_nodes=10**8, max_seconds=max_seconds)
                theirs.append(time.perf_counter() - t)
        verdicts[result.verdict] = verdicts.get(result.verdict, 0) + 1
        if result.verdict == "won":
            g = game.copy()
            for mv in result.moves:
                g.play(mv)
            if not g.won:
                raise SystemExit(f"seed {seed}: the solution does not win")
        if ref is not None and "unknown" not in (result.verdict, other.verdict) \
                and result.verdict != other.verdict:
            raise SystemExit(f"seed {seed}: {result.verdict} here, {other.verdict} in the ref")
    print(f"Spanish Patience, Solvitaire preset, seeds 0..{deals - 1}: {verdicts}")
    print(summary("this solver", mine))
    if theirs:
        print(summary("reference  ", theirs))
        ratio = statistics.median(mine) / statistics.median(theirs)
        print(f"ratio (this / reference): median {ratio:.3f}, total {sum(mine) / sum(theirs):.3f}")
    print(f"baseline: {statistics.median(base):.3f} us per 52-int list copy "
          f"(min {min(base):.3f}, max {max(base):.3f}); median solve = "
          f"{statistics.median(mine) * 1e6 / statistics.median(base):,.0f} list copies")


def verdicts(count: int, ref: Any, max_seconds: float) -> None:
    """Seeds 0 .. count-1 of every variant (default options) by both solvers: the
    deals where both decide must get the same verdict."""
    for variant in ("fortress", "perseverance", "spanish", "brisbane", "portuguese"):
        both = differ = 0
        for seed in range(count):
            mine = solve(new_game(variant, seed), max_nodes=10**8, max_seconds=max_seconds)
            theirs = ref.solver.solve(ref.new_game(variant, seed), max_nodes=10**8,
                                      max_seconds=max_seconds)
            if "unknown" in (mine.verdict, theirs.verdict):
                continue
            both += 1
            if mine.verdict != theirs.verdict:
                differ += 1
                print(f"{variant} seed {seed}: {mine.verdict} here, {theirs.verdict} in the ref")
        print(f"{variant}, seeds 0..{count - 1}: both decided {both}, verdicts differ on {differ}")


HARD = [("portuguese", {}, range(0, 400)), ("brisbane", {}, range(0, 400)),
        ("spanish", PRESET, range(0, 400))]


def budget(budget_ms: float, count: int) -> None:
    """Calls whose budget runs out: how long past the budget each returned, on the wall
    clock (the default) and on this thread's CPU clock (``Budget(clock=time.thread_time)``,
    measured with the same clock: what the solver itself overruns, without the time the
    machine gave to other processes)."""
    for name, clock in (("wall", time.monotonic), ("thread CPU", time.thread_time)):
        over: list[float] = []
        for variant, options, seeds in HARD:
            n = 0
            for seed in seeds:
                if n >= count:
                    break
                game = new_game(variant, seed, **options)
                t = clock()
                result = solve(game, budget=Budget(10**8, budget_ms / 1000, clock))
                spent = clock() - t
                if result.verdict == "unknown":
                    over.append(spent * 1000 - budget_ms)
                    n += 1
        if over:
            print(f"budget {budget_ms:g} ms ({name} clock), {len(over)} calls that ran out: "
                  f"overrun median {statistics.median(over):.2f} ms, "
                  f"p99 {percentile(over, 0.99):.2f} ms, max {max(over):.2f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=1000)
    parser.add_argument("--ref", default="main", help="git ref of the reference solver")
    parser.add_argument("--no-ref", action="store_true", help="time this solver alone")
    parser.add_argument("--max-seconds", type=float, default=10.0)
    parser.add_argument("--verdicts", type=int, default=0, metavar="N",
                        help="also compare both solvers' verdicts on seeds 0..N-1 of every variant")
    parser.add_argument("--budget-ms", type=float, action="append", default=[],
                        help="time budgets to check the overrun of (default 50 and 500)")
    parser.add_argument("--budget-deals", type=int, default=20,
                        help="deals per variant that exhaust each budget (default 20)")
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        ref = None if args.no_ref else load_reference(args.ref, Path(tmp))
        if args.deals:
            speed(args.deals, ref, args.max_seconds)
        if args.verdicts and ref is not None:
            verdicts(args.verdicts, ref, args.max_seconds)
    for ms in args.budget_ms or [50.0, 500.0]:
        if args.budget_deals:
            budget(ms, args.budget_deals)
    print(f"Python {platform.python_version()} on {platform.machine()}, "
          f"{time.perf_counter() - started:.0f} s wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
