"""Protocol speed and frame sizes: encode/decode time of the per-move messages and of a
full snapshot, beside plain ``msgpack.packb``/``unpackb`` of the same data measured in the
same run; and the size distribution of real ``Accepted`` frames over random games.

    .venv/bin/python bench/protocol_bench.py            # tables (Markdown)
    .venv/bin/python bench/protocol_bench.py --check    # exit 1 if the size target is missed
    .venv/bin/python bench/protocol_bench.py --json     # figures as JSON

Timing: each figure is the best of ``--repeat`` runs of a tight loop over prebuilt inputs
(noise only ever slows a run down), in nanoseconds per message. The baseline is the
``msgpack`` package (C extension) packing the same message as a plain dict (the wire
form, ``msgspec.to_builtins``) and unpacking the same bytes into dicts, so it does no
validation and builds no typed objects; our codec does both. Compare ratios, not raw ns.

Sizes: for each variant, ``--games`` random games (seeded; uniformly random legal moves,
at most ``MAX_MOVES`` per game since some variants can shuffle cards forever) are played
through the engine; every move is encoded as the server sends it: ``Accepted`` with the
real sequence, the real state hash and a race clock that advances 0.4 to 4 s per move (a
brisk human), plus the cards it revealed. Target: median ``Accepted`` frame of a
single-card move <= 24 bytes.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import msgpack
import msgspec

import engine
from protocol import decode_client, decode_server, encode
from protocol import messages as M

SIZE_TARGET = 24  # bytes: median Accepted frame of a single-card move
MAX_MOVES = 300


# ----------------------------------------------------------------------------- timing
def ns_per_op(run: Callable[[], None], n: int, repeat: int) -> float:
    """Nanoseconds per call of the fastest of ``repeat`` runs of ``n`` calls."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter_ns()
        for _ in range(n):
            run()
        best = min(best, time.perf_counter_ns() - t)
    return best / n


def time_pair(
    message: msgspec.Struct, decode: Callable[[bytes], Any], n: int, repeat: int
) -> dict[str, float]:
    """Encode and decode of ``message`` with our codec and with plain msgpack."""
    frame = encode(message)
    plain = msgspec.to_builtins(message)
    assert msgpack.unpackb(msgpack.packb(plain)) == msgpack.unpackb(frame)  # same data
    packed = msgpack.packb(plain)
    packb, unpackb = msgpack.packb, msgpack.unpackb
    return {
        "bytes": len(frame),
        "encode_ns": ns_per_op(lambda: encode(message), n, repeat),
        "packb_ns": ns_per_op(lambda: packb(plain), n, repeat),
        "decode_ns": ns_per_op(lambda: decode(frame), n, repeat),
        "unpackb_ns": ns_per_op(lambda: unpackb(packed), n, repeat),
    }


def snapshot_joined(spectator: bool) -> M.Joined:
    """A ``Joined`` for a running 4-seat Brisbane race 40 moves in: a player's (own board)
    or a spectator's (every board)."""
    rng = random.Random(3)
    game = engine.new_game("brisbane", seed=11)
    for _ in range(40):
        moves = game.legal_moves()
        if not moves:
            break
        game.play(rng.choice(moves))
    board = M.Board(seat=2, seq=40, view=game.view(), hash=game.state_hash())
    seats = [
        M.SeatInfo(seat=i, name=f"player {i}", status="playing", progress=3 * i, moves=40 + i,
                   bot=i == 4)
        for i in range(1, 5)
    ]
    boards = [msgspec.structs.replace(board, seat=i) for i in range(1, 5)] if spectator else [board]
    return M.Joined(
        code="QX7KDP", settings=M.RoomSettings(variant="brisbane", time_limit_s=600),
        phase="running", seat=0 if spectator else 2, commitment="ab" * 32, seats=seats,
        token=None if spectator else "QX7KDP.2.9rT0cM2bWq3kXn8ZsYv4Lh1AeUo6GfJd",
        creator=1, start_ms=1_790_000_000_000, clock_ms=61_234, boards=boards,
    )


def timings(n: int, repeat: int) -> dict[str, dict[str, float]]:
    """Encode/decode figures for the messages that matter."""
    small, big = max(n, 1), max(n // 50, 1)
    return {
        "Move (client → server)": time_pair(M.Move(seq=87, move="3>7"), decode_client,
                                            small, repeat),
        "Accepted": time_pair(M.Accepted(seq=87, hash=0x9A3F12C4, clock_ms=131_052),
                              decode_server, small, repeat),
        "Accepted with a reveal": time_pair(
            M.Accepted(seq=87, hash=0x9A3F12C4, clock_ms=131_052, revealed=[(6, "QS")]),
            decode_server, small, repeat),
        "Diff (spectator)": time_pair(
            M.Diff(seat=3, seq=87, move="3:4>7", hash=0x9A3F12C4, clock_ms=131_052),
            decode_server, small, repeat),
        "Joined, player (own board)": time_pair(snapshot_joined(False), decode_server, big,
                                                repeat),
        "Joined, spectator (4 boards)": time_pair(snapshot_joined(True), decode_server, big,
                                                  repeat),
    }


# ----------------------------------------------------------------------------- sizes
def playout_frames(variant: str, seed: int) -> list[tuple[str, bytes, bytes]]:
    """(move, Accepted frame, Diff frame) for every move of one random game."""
    rng = random.Random(seed)
    game = engine.new_game(variant, seed=seed)
    clock = rng.randint(300, 3000)
    out = []
    for seq in range(1, MAX_MOVES + 1):
        moves = game.legal_moves()
        if not moves:
            break
        diff = game.play(rng.choice(moves))
        h = game.state_hash()
        revealed = [(p, c) for p, c in diff.revealed]
        acc = encode(M.Accepted(seq=seq, hash=h, clock_ms=clock, revealed=revealed))
        dif = encode(M.Diff(seat=rng.randint(1, 4), seq=seq, move=diff.move, hash=h,
                            clock_ms=clock, revealed=revealed))
        out.append((diff.move, acc, dif))
        clock += rng.randint(400, 4000)
    return out


def single_card(move: str) -> bool:
    """A move of one card: ``i>j``, ``i>f`` or ``fS>j`` (not ``i:n>j``, not ``redeal``)."""
    return ":" not in move and move != "redeal"


def summary(sizes: list[int]) -> dict[str, float]:
    """Median, 90th percentile and maximum of frame sizes."""
    ordered = sorted(sizes)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return {"n": len(ordered), "median": statistics.median(ordered), "p90": p90,
            "max": ordered[-1]}


def sizes(games: int) -> dict[str, dict[str, dict[str, float]]]:
    """Frame-size summaries per variant (and over all variants)."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    everything: dict[str, list[int]] = {"accepted": [], "accepted_single": [], "diff": []}
    for variant in engine.VARIANTS:
        acc, single, dif = [], [], []
        for g in range(games):
            for move, a, d in playout_frames(variant, 1000 + g):
                acc.append(len(a))
                dif.append(len(d))
                if single_card(move):
                    single.append(len(a))
        everything["accepted"] += acc
        everything["accepted_single"] += single
        everything["diff"] += dif
        out[variant] = {"accepted": summary(acc), "accepted_single": summary(single),
                        "diff": summary(dif)}
    out["all variants"] = {k: summary(v) for k, v in everything.items()}
    return out


# ----------------------------------------------------------------------------- report
def markdown(times: dict[str, dict[str, float]], size: dict[str, Any], args: Any) -> str:
    """The figures as the Markdown tables docs/BENCHMARKS.md shows."""
    lines = [
        f"Python {platform.python_version()}, msgspec {msgspec.__version__}, "
        f"msgpack {'.'.join(map(str, msgpack.version))}, {platform.machine()}; "
        f"best of {args.repeat}.",
        "",
        "| message | bytes | encode ns | msgpack.packb ns | ratio | decode ns "
        "| msgpack.unpackb ns | ratio |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, t in times.items():
        lines.append(
            f"| {name} | {t['bytes']:.0f} | {t['encode_ns']:.0f} | {t['packb_ns']:.0f} "
            f"| {t['encode_ns'] / t['packb_ns']:.2f} | {t['decode_ns']:.0f} "
            f"| {t['unpackb_ns']:.0f} | {t['decode_ns'] / t['unpackb_ns']:.2f} |"
        )
    lines += [
        "",
        f"Frame sizes in bytes over {args.games} random games per variant "
        f"(at most {MAX_MOVES} moves each):",
        "",
        "| variant | moves | Accepted median / p90 / max | single-card Accepted median "
        "/ p90 / max | Diff median / p90 / max |",
        "|---|---:|---|---|---|",
    ]
    for variant, s in size.items():
        a, one, d = s["accepted"], s["accepted_single"], s["diff"]
        lines.append(
            f"| {variant} | {a['n']} | {a['median']:g} / {a['p90']} / {a['max']} "
            f"| {one['median']:g} / {one['p90']} / {one['max']} "
            f"| {d['median']:g} / {d['p90']} / {d['max']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; with ``--check`` return 1 if the size target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="calls per timed small loop")
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure (best kept)")
    parser.add_argument("--games", type=int, default=100, help="random games per variant")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args(argv)
    times = timings(args.n, args.repeat)
    size = sizes(args.games)
    median = size["all variants"]["accepted_single"]["median"]
    ok = median <= SIZE_TARGET
    if args.json:
        print(json.dumps({"timings": times, "sizes": size, "target_bytes": SIZE_TARGET,
                          "target_met": ok}, indent=2))
    else:
        print(markdown(times, size, args))
        print(f"\nTarget: median single-card Accepted <= {SIZE_TARGET} bytes: "
              f"{median:g} ({'met' if ok else 'MISSED'}).")
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
