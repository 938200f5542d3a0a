"""Solver benchmark: per variant, the share of random deals the solver decides (won or
proven unwinnable) within 1 s and within 10 s, the median time, nodes/s and the
winnable rate with a 95% Wilson interval, checked against published figures where
there are some. Figures and the command that reproduces them are in docs/SOLVER.md.

    .venv/bin/python bench/solver_bench.py              # full run, about 10 minutes
    .venv/bin/python bench/solver_bench.py --scale 0.1  # a tenth of the deals
    .venv/bin/python bench/solver_bench.py --json out.json

Deals are seeds 0, 1, 2, ... of each configuration (so every run measures the same
deals); each gets one search of at most ``--max-seconds`` (10 s), and every solution
found is replayed through the engine (the run stops if one does not win). "Within 1 s" counts
the deals decided in at most 1 s of that search's wall time. Deals run one after the
other in this process: the machine may be shared, so the baseline (the engine bench's:
list copies of 52 ints per second) is measured before each configuration, and nodes/s
should be compared across machines as a ratio to it. The winnable rate counts unknowns
honestly: its interval runs from the Wilson lower bound of won/n to the Wilson upper
bound of (won + unknown)/n.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import resource
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import new_game
from engine.solver import find_winnable_seed, solve


@dataclass
class Config:
    """One configuration to measure, and what is published about it."""

    name: str
    variant: str
    options: dict[str, Any]
    deals: int
    published: tuple[float, float, str] | None = None  # (rate %, +- %, source)


CONFIGS = [
    Config("portuguese", "portuguese", {}, 120),
    Config("spanish", "spanish", {}, 1000),
    Config("spanish (Solvitaire preset)", "spanish",
           {"kings_to_bottom": False, "foundation_takeback": True}, 2000,
           (99.863, 0.003, "Blake & Gent, 10^7 deals")),
    Config("brisbane", "brisbane", {}, 500),
    # Wolter gives 20.2%; +-0.08% is the 95% binomial half-width of 10^6 deals
    Config("fortress", "fortress", {}, 8000, (20.2, 0.08, "Wolter, 10^6 deals")),
    Config("perseverance", "perseverance", {}, 2000),
]


@dataclass
class Row:
    """The figures for one configuration."""

    name: str
    variant: str
    options: dict[str, Any]
    deals: int = 0
    won: int = 0
    unwinnable: int = 0
    unknown: int = 0
    decided_1s: int = 0
    seconds: list[float] = field(default_factory=list)
    nodes: int = 0
    baseline: float = 0.0
    find_seconds: list[float] = field(default_factory=list)
    per_deal: list[tuple[int, str, int, float]] = field(default_factory=list)  # seed, ...


def baseline(n: int = 200_000, repeat: int = 3) -> float:
    """List copies of 52 ints per second, best of ``repeat`` (as bench/engine_bench.py)."""
    deck = list(range(52))
    best = math.inf
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(n):
            list(deck)
        best = min(best, time.perf_counter() - t)
    return n / best


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of k successes in n trials, as fractions."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def winnable_interval(won: int, unknown: int, n: int) -> tuple[float, float]:
    """The 95% interval of the winnable rate that counts unknowns honestly: from the
    Wilson lower bound of won/n to the Wilson upper bound of (won + unknown)/n."""
    return wilson(won, n)[0], wilson(won + unknown, n)[1]


def measure(cfg: Config, scale: float, max_seconds: float, finds: int) -> Row:
    """Solve ``cfg.deals * scale`` deals; time ``finds`` calls of find_winnable_seed."""
    row = Row(cfg.name, cfg.variant, cfg.options, baseline=baseline())
    count = max(1, round(cfg.deals * scale))
    for seed in range(count):
        game = new_game(cfg.variant, seed, **cfg.options)
        result = solve(game, max_nodes=10**8, max_seconds=max_seconds)
        if result.verdict == "won":  # every claimed win is replayed through the engine
            for mv in result.moves:
                game.play(mv)
            if not game.won:
                raise SystemExit(f"{cfg.name} seed {seed}: the solution does not win")
        row.deals += 1
        row.per_deal.append((seed, result.verdict, result.nodes, round(result.elapsed, 4)))
        row.seconds.append(result.elapsed)
        row.nodes += result.nodes
        if result.verdict == "won":
            row.won += 1
        elif result.verdict == "unwinnable":
            row.unwinnable += 1
        else:
            row.unknown += 1
        if result.verdict != "unknown" and result.elapsed <= 1.0:
            row.decided_1s += 1
    for i in range(finds):
        t = time.perf_counter()
        find_winnable_seed(cfg.variant, cfg.options, 10**9 + 1000 * i)
        row.find_seconds.append(time.perf_counter() - t)
    return row


def pct(k: int, n: int) -> str:
    return f"{100 * k / n:.1f}%" if n else "-"


def report(rows: list[Row], configs: dict[str, Config], max_seconds: float) -> str:
    """The markdown tables for docs/SOLVER.md."""
    out = [
        f"| configuration | deals | decided <= 1 s | decided <= {max_seconds:g} s | unknown "
        "| median time | nodes/s (ratio to baseline) | find_winnable_seed median / max |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        decided = r.won + r.unwinnable
        rate = r.nodes / sum(r.seconds) if sum(r.seconds) else 0.0
        finds = (f"{statistics.median(r.find_seconds):.2f} s / {max(r.find_seconds):.2f} s"
                 if r.find_seconds else "-")
        out.append(
            f"| {r.name} | {r.deals} | {pct(r.decided_1s, r.deals)} | {pct(decided, r.deals)} "
            f"| {r.unknown} | {statistics.median(r.seconds):.3f} s "
            f"| {rate:,.0f} ({rate / r.baseline:.4f}) | {finds} |"
        )
    out += ["", "| configuration | won | unwinnable | unknown | winnable (95% Wilson) "
            "| published |", "|---|---|---|---|---|---|"]
    for r in rows:
        lo, hi = winnable_interval(r.won, r.unknown, r.deals)
        pub = configs[r.name].published
        pub_text = "-"
        if pub is not None:
            inside = lo * 100 <= pub[0] + pub[1] and pub[0] - pub[1] <= hi * 100
            pub_text = (f"{pub[0]}% ± {pub[1]}% ({pub[2]}): "
                        + ("consistent" if inside else "**outside our interval**"))
        out.append(f"| {r.name} | {r.won} | {r.unwinnable} | {r.unknown} "
                   f"| {100 * r.won / r.deals:.2f}% [{100 * lo:.2f}%, {100 * hi:.2f}%] "
                   f"| {pub_text} |")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply every configuration's deal count (default 1)")
    parser.add_argument("--max-seconds", type=float, default=10.0,
                        help="the search budget per deal (default 10)")
    parser.add_argument("--finds", type=int, default=5,
                        help="find_winnable_seed calls timed per configuration (default 5)")
    parser.add_argument("--only", action="append", default=[],
                        help="measure only configurations whose name starts with this")
    parser.add_argument("--json", metavar="FILE", help="also write the raw figures here")
    args = parser.parse_args()
    if not (args.scale > 0 and args.max_seconds > 0 and args.finds >= 0):
        parser.error("--scale and --max-seconds must be above 0, --finds at least 0")
    configs = [c for c in CONFIGS
               if not args.only or any(c.name.startswith(o) for o in args.only)]
    started = time.perf_counter()
    rows = []
    for cfg in configs:
        rows.append(measure(cfg, args.scale, args.max_seconds, args.finds))
        print(f"# {cfg.name}: {rows[-1].deals} deals, "
              f"{time.perf_counter() - started:.0f} s so far", file=sys.stderr, flush=True)
    text = report(rows, {c.name: c for c in CONFIGS}, args.max_seconds)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(text)
    print(f"\nPython {platform.python_version()} on {platform.machine()}, "
          f"{time.perf_counter() - started:.0f} s wall, peak RSS {peak_mb:.0f} MB")
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in rows], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
