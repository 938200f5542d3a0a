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


def run_queue_wait() -> float:
    """Seconds this thread has spent runnable but waiting for a CPU (Linux's
    /proc/thread-self/schedstat, second field, in ns); 0.0 where that is not available.
    The part of a late return that the machine, not the solver, is to blame for."""
    try:
        with open("/proc/thread-self/schedstat", encoding="ascii") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def budget(budget_ms: float, count: int) -> list[tuple[float, float, float, str]]:
    """Calls whose budget runs out: how long past the budget each returned, on the wall
    clock (the default) and on this thread's CPU clock (``Budget(clock=time.thread_time)``,
    measured with the same clock: what the solver itself overruns, without the time the
    machine gave to other processes). Each wall-clock call's CPU time is measured too, so
    a call late on the wall clock shows whether the solver or the machine took the time,
    and so is the time it waited for a CPU (``run_queue_wait``). Returns the wall-clock
    calls: (wall overrun, CPU time used, run-queue wait, deal), in milliseconds."""
    wall_calls: list[tuple[float, float, float, str]] = []
    for name, clock in (("wall", time.monotonic), ("thread CPU", time.thread_time)):
        over: list[float] = []
        for variant, options, seeds in HARD:
            n = 0
            for seed in seeds:
                if n >= count:
                    break
                game = new_game(variant, seed, **options)
                wait, cpu, t = run_queue_wait(), time.thread_time(), clock()
                result = solve(game, budget=Budget(10**8, budget_ms / 1000, clock))
                spent, cpu = clock() - t, time.thread_time() - cpu
                wait = run_queue_wait() - wait
                if result.verdict == "unknown":
                    over.append(spent * 1000 - budget_ms)
                    if name == "wall":
                        wall_calls.append((over[-1], cpu * 1000, wait * 1000,
                                           f"{variant} {seed}"))
                    n += 1
        if over:
            print(f"budget {budget_ms:g} ms ({name} clock), {len(over)} calls that ran out: "
                  f"overrun median {statistics.median(over):.2f} ms, "
                  f"p99 {percentile(over, 0.99):.2f} ms, max {max(over):.2f} ms")
    late = [c for c in wall_calls if c[0] > SLACK_MS]
    print(f"budget {budget_ms:g} ms, wall clock: {len(late)} of {len(wall_calls)} calls back more "
          f"than {SLACK_MS:g} ms late" + "".join(
              f"; {deal}: {o:.1f} ms late, {cpu:.1f} ms of CPU, {w:.1f} ms waiting for a CPU"
              for o, cpu, w, deal in late))
    return wall_calls


SLACK_MS = 10.0  # issue #12: a budget of B ms returns within B + 10 ms


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
    calls: list[tuple[float, float, float, str]] = []
    for ms in args.budget_ms or [50.0, 500.0]:
        if args.budget_deals:
            calls += budget(ms, args.budget_deals)
    if calls:
        worst = max(calls)
        own = max(o - w for o, _, w, _ in calls)  # late, less the time spent off the CPU
        print(f"all budgets, wall clock: {len(calls)} calls, max overrun {worst[0]:.2f} ms "
              f"({worst[3]}: {worst[2]:.1f} ms of it waiting for a CPU), "
              f"{sum(c[0] > SLACK_MS for c in calls)} calls more than {SLACK_MS:g} ms late; "
              f"max overrun less the run-queue wait {own:.2f} ms")
    print(f"Python {platform.python_version()} on {platform.machine()}, "
          f"{time.perf_counter() - started:.0f} s wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
