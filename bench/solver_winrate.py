"""Win rates of all five variants with their default options: seeds 0 .. N-1 of each,
one search each with the solver's default budget, every solution replayed through the
engine. Prints the table of docs/SOLVER.md ("Win rates"): won, proven unwinnable,
undecided, the share decided, and the winnable rate with its 95% Wilson interval (from
the lower bound of won/n to the upper bound of (won + undecided)/n, so undecided deals
widen the interval instead of being guessed).

    nice -n 10 .venv/bin/python bench/solver_winrate.py --seeds 5000 --cpu-clock --out winrate.jsonl
    .venv/bin/python bench/solver_winrate.py --out winrate.jsonl --report-only

``--shard K/N`` solves only the seeds equal to K modulo N: N processes, each with its own
``--out``, share a run (concatenate their files, then ``--report-only``).

Each deal's record is appended to ``--out`` (JSON lines) as soon as it is solved, and a
rerun skips the deals already there, so a long run can be stopped and resumed, and a run
cut short still gives a table (its sample sizes say how far it got). Variants run one
after the other in the order given (``--variants``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solver_bench import winnable_interval  # this folder is on the path as a script

from engine import VARIANTS, new_game
from engine.solver import DEFAULT_BUDGET, solve

ORDER = ("fortress", "perseverance", "spanish", "brisbane", "portuguese")  # fast ones first


def load(path: Path) -> list[dict[str, object]]:
    """The records already written (a torn last line, from a killed run, is skipped)."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def order(variants: list[str], seeds: int, interleave: int) -> list[tuple[str, int]]:
    """The (variant, seed) pairs in the order to solve them: variant by variant, or with
    ``interleave`` > 0, that many seeds of each variant in turn (so that a run cut short
    has a sample of every variant)."""
    if interleave <= 0:
        return [(v, s) for v in variants for s in range(seeds)]
    return [(v, s) for block in range(0, seeds, interleave) for v in variants
            for s in range(block, min(seeds, block + interleave))]


def run(variants: list[str], seeds: int, path: Path, interleave: int = 0,
        cpu: bool = False, shard: tuple[int, int] = (0, 1)) -> None:
    """Solve every (variant, seed) not yet in ``path``, appending one record each; with
    ``shard`` (k, n), only the seeds equal to k modulo n (one process per shard)."""
    done = {(r["variant"], r["seed"]) for r in load(path)}
    started = time.monotonic()
    k, n = shard
    with path.open("a", encoding="utf-8") as f:
        for variant, seed in order(variants, seeds, interleave):
            if seed == seeds - 1 or seed % 500 == 499:
                print(f"# {variant} seed {seed}: {time.monotonic() - started:.0f} s",
                      file=sys.stderr, flush=True)
            if seed % n == k and (variant, seed) not in done:
                f.write(json.dumps(solve_one(variant, seed, cpu)) + "\n")
                f.flush()


def solve_one(variant: str, seed: int, cpu: bool = False) -> dict[str, object]:
    """One deal's record; a claimed win must replay to a won game. ``cpu``: the
    budget's seconds are this thread's CPU time, not wall time."""
    game = new_game(variant, seed)
    budget = replace(DEFAULT_BUDGET, clock=time.thread_time) if cpu else DEFAULT_BUDGET
    result = solve(game, budget=budget)
    if result.verdict == "won":
        for mv in result.moves:
            game.play(mv)
        if not game.won:
            raise SystemExit(f"{variant} seed {seed}: the solution does not win")
    return {"variant": variant, "seed": seed, "verdict": result.verdict,
            "nodes": result.nodes, "seconds": round(result.elapsed, 4),
            "clock": "cpu" if cpu else "wall"}


def report(records: list[dict[str, object]], variants: list[str]) -> str:
    """The markdown table."""
    lines = ["| variant | deals | won | unwinnable | undecided | decided "
             "| winnable, 95% interval |", "|---|---|---|---|---|---|---|"]
    for variant in variants:
        rs = [r for r in records if r["variant"] == variant]
        n = len(rs)
        if not n:
            continue
        won = sum(r["verdict"] == "won" for r in rs)
        lost = sum(r["verdict"] == "unwinnable" for r in rs)
        unknown = n - won - lost
        lo, hi = winnable_interval(won, unknown, n)
        lines.append(f"| {variant} | {n:,} | {won:,} | {lost:,} | {unknown:,} "
                     f"| {100 * (won + lost) / n:.2f}% "
                     f"| {100 * won / n:.2f}% [{100 * lo:.2f}%, {100 * hi:.2f}%] |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5000, help="deals per variant (default 5000)")
    parser.add_argument("--variants", default=",".join(ORDER),
                        help="comma-separated, in the order to run (default: fastest first)")
    parser.add_argument("--out", default="winrate.jsonl", help="JSON lines, one per deal")
    parser.add_argument("--interleave", type=int, default=0, metavar="K",
                        help="take K seeds of each variant in turn (default: variant by variant)")
    parser.add_argument("--cpu-clock", action="store_true",
                        help="count the budget's 10 s in this thread's CPU time (thread_time): "
                        "on a shared machine, wall time leaves deals undecided for lack of CPU")
    parser.add_argument("--shard", default="0/1", metavar="K/N",
                        help="solve only the seeds equal to K modulo N, so that N processes "
                        "(each with its own --out) share a run; merge their files to report")
    parser.add_argument("--report-only", action="store_true", help="print the table and stop")
    args = parser.parse_args()
    variants = [v.strip().lower() for v in args.variants.split(",") if v.strip()]
    bad = [v for v in variants if v not in VARIANTS]
    if bad or args.seeds < 1:
        parser.error(f"unknown variant(s) {bad}" if bad else "--seeds must be at least 1")
    try:
        k, n = (int(x) for x in args.shard.split("/"))
    except ValueError:
        parser.error("--shard must be K/N, two integers")
    if not 0 <= k < n:
        parser.error("--shard K/N needs 0 <= K < N")
    path = Path(args.out)
    if not args.report_only:
        run(variants, args.seeds, path, args.interleave, args.cpu_clock, (k, n))
    print(report(load(path), variants))
    return 0


if __name__ == "__main__":
    sys.exit(main())
