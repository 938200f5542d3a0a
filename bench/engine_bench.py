"""Engine speed: deals/s, legal_moves()/s and play()/s per variant, in one process, beside
a baseline measured in the same run so figures from a noisy, shared machine can be
judged.

    .venv/bin/python bench/engine_bench.py            # table
    .venv/bin/python bench/engine_bench.py --check    # exit 1 if a target is missed
    .venv/bin/python bench/engine_bench.py --json     # figures as JSON

How: for each variant, random playouts (seeded, so every run measures the same
positions; foundation moves favoured so games get somewhere) are recorded as a list of
positions and the move played from each. ``legal_moves()`` is then timed over all the
positions, and ``play()`` (with the move's notation string, as the server calls it) over
fresh copies of them; copying is outside the timed loop. Each figure is the best of
``--repeat`` runs: noise only ever slows a run down. The baseline, measured again just
before each variant's figures (the load on a shared machine drifts), is a plain Python
loop copying a list of 52 ints: the cheapest thing a move could possibly cost. Compare
machines and runs by the ratios (figure / baseline), not the raw rates.

Targets (docs/ENGINE.md): play() >= 50,000/s and legal_moves() >= 20,000/s per variant.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import engine
from engine import Game
from engine import cards as C
from engine.moves import TO_FOUNDATION
from engine.statehash import digest, hash_text

PLAY_TARGET = 50_000
LEGAL_TARGET = 20_000
MAX_STEPS = 300  # per playout: Spanish and Fortress can shuffle cards between empty piles


def best_rate(count: int, run: Callable[[], float], repeat: int) -> float:
    """``count / seconds`` for the fastest of ``repeat`` runs; ``run`` returns seconds."""
    return count / min(run() for _ in range(repeat))


def baseline(repeat: int, n: int = 200_000) -> float:
    """List copies of 52 ints per second."""
    deck = list(range(52))

    def run() -> float:
        t = time.perf_counter()
        for _ in range(n):
            list(deck)
        return time.perf_counter() - t

    return best_rate(n, run, repeat)


def deals(variant: str, repeat: int, n: int = 2_000) -> float:
    """``new_game`` calls per second, seeds 0..n-1."""

    def run() -> float:
        t = time.perf_counter()
        for seed in range(n):
            engine.new_game(variant, seed=seed)
        return time.perf_counter() - t

    return best_rate(n, run, repeat)


def record(variant: str, wanted: int) -> tuple[list[Game], list[str]]:
    """About ``wanted`` positions from random playouts (seeds 0, 1, ...) and the move
    played from each."""
    rng = random.Random(20260101)
    positions: list[Game] = []
    moves: list[str] = []
    seed = 0
    while len(positions) < wanted:
        g = engine.new_game(variant, seed=seed)
        seed += 1
        for _ in range(MAX_STEPS):
            legal = g.legal_moves()
            if not legal:
                break
            home = [m for m in legal if m.kind == TO_FOUNDATION]
            move = str(rng.choice(home if home and rng.random() < 0.5 else legal))
            positions.append(g.copy())
            moves.append(move)
            g.play(move)
    return positions, moves


def legal_rate(positions: list[Game], repeat: int) -> float:
    def run() -> float:
        t = time.perf_counter()
        for g in positions:
            g.legal_moves()
        return time.perf_counter() - t

    return best_rate(len(positions), run, repeat)


def play_rate(positions: list[Game], moves: list[str], repeat: int) -> float:
    def run() -> float:
        fresh = [g.copy() for g in positions]
        t = time.perf_counter()
        for g, m in zip(fresh, moves, strict=True):
            g.play(m)
        return time.perf_counter() - t

    return best_rate(len(positions), run, repeat)


def full_hash(g: Game) -> int:
    """The state hash rendered from the whole board (what ``state_hash`` did before it
    became incremental): the reference the incremental hash is timed against."""
    codes = C.CODES
    piles = [(d, [codes[c] for c in p[d:]]) for p, d in zip(g.piles, g.down, strict=True)]
    return digest(hash_text(piles, g.found, g.redeals_left))


def play_hash_rates(positions: list[Game], moves: list[str], repeat: int) -> tuple[float, float]:
    """Moves/s of ``play`` then the state hash, as the server does per move: with the
    incremental ``state_hash`` (its per-pile cache warm, as in a race) and with the full
    recomputation, in the same run."""

    def run(incremental: bool) -> float:
        fresh = [g.copy() for g in positions]
        for g in fresh:
            g.state_hash()  # warm: a racing game has hashed its previous position
        t = time.perf_counter()
        if incremental:
            for g, m in zip(fresh, moves, strict=True):
                g.play(m)
                g.state_hash()
        else:
            for g, m in zip(fresh, moves, strict=True):
                g.play(m)
                full_hash(g)
        return time.perf_counter() - t

    return (best_rate(len(positions), lambda: run(True), repeat),
            best_rate(len(positions), lambda: run(False), repeat))


def stuck_rates(positions: list[Game], repeat: int) -> tuple[float, float]:
    """``game.stuck`` per second, and the full test it short-cuts (no legal move listed),
    over the same positions in the same run."""

    def run(short: bool) -> float:
        t = time.perf_counter()
        if short:
            for g in positions:
                g.stuck  # noqa: B018 - the property is what is timed
        else:
            for g in positions:
                not g.won and not g.legal_moves()
        return time.perf_counter() - t

    return (best_rate(len(positions), lambda: run(True), repeat),
            best_rate(len(positions), lambda: run(False), repeat))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=10_000,
                        help="positions per variant (from as many playouts as it takes)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure (best kept)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args(argv)

    rows = []
    for variant in engine.VARIANTS:
        positions, moves = record(variant, args.positions)
        rows.append({
            "variant": variant,
            "positions": len(positions),
            # Measured beside each variant's figures, as the load on a shared machine drifts.
            "baseline_copies_per_s": baseline(args.repeat),
            "deals_per_s": deals(variant, args.repeat),
            "legal_moves_per_s": legal_rate(positions, args.repeat),
            "play_per_s": play_rate(positions, moves, args.repeat),
        })
        rows[-1]["play_hash_per_s"], rows[-1]["play_full_hash_per_s"] = play_hash_rates(
            positions, moves, args.repeat)
        rows[-1]["stuck_per_s"], rows[-1]["stuck_full_per_s"] = stuck_rates(
            positions, args.repeat)
    missed = [
        f"{r['variant']} {what}"
        for r in rows
        for what, key, target in (("play", "play_per_s", PLAY_TARGET),
                                  ("legal_moves", "legal_moves_per_s", LEGAL_TARGET))
        if r[key] < target
    ]
    if args.json:
        print(json.dumps({"python": platform.python_version(), "variants": rows,
                          "missed": missed}, indent=2))
    else:
        print(f"Python {platform.python_version()} on {platform.machine()}; baseline = list "
              "copies of 52 ints per second, measured beside each variant")
        print(f"{'variant':<13} {'positions':>9} {'baseline':>10} {'deals/s':>8} "
              f"{'legal_moves/s':>13} {'play/s':>8} {'legal/base':>10} {'play/base':>9}")
        for r in rows:
            base = r["baseline_copies_per_s"]
            print(f"{r['variant']:<13} {r['positions']:>9,} {base:>10,.0f} "
                  f"{r['deals_per_s']:>8,.0f} {r['legal_moves_per_s']:>13,.0f} "
                  f"{r['play_per_s']:>8,.0f} {r['legal_moves_per_s'] / base:>10.4f} "
                  f"{r['play_per_s'] / base:>9.4f}")
        print("\nplay() + state hash per move (the server's pattern), incremental vs full:")
        print(f"{'variant':<13} {'incremental/s':>13} {'full/s':>9} {'speed-up':>8} "
              f"{'µs saved per move':>17}")
        for r in rows:
            inc, full = r["play_hash_per_s"], r["play_full_hash_per_s"]
            print(f"{r['variant']:<13} {inc:>13,.0f} {full:>9,.0f} {inc / full:>8.2f} "
                  f"{1e6 / full - 1e6 / inc:>17.2f}")
        print("\ngame.stuck (short-cut) vs listing every legal move, per position:")
        print(f"{'variant':<13} {'stuck/s':>10} {'full/s':>9} {'speed-up':>8}")
        for r in rows:
            fast, full = r["stuck_per_s"], r["stuck_full_per_s"]
            print(f"{r['variant']:<13} {fast:>10,.0f} {full:>9,.0f} {fast / full:>8.2f}")
        print(f"targets: play() >= {PLAY_TARGET:,}/s, legal_moves() >= {LEGAL_TARGET:,}/s: "
              + ("all met" if not missed else "MISSED " + ", ".join(missed)))
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
