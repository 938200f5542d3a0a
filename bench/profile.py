"""Where a solrace server spends its CPU per accepted move: the saturated memory-store
load of ``bench.compare``'s ``cpu`` row, with the server sampled by py-spy meanwhile, the
samples sorted into components, and each component's share turned into CPU µs per move
with the CPU the server used in the same window (read from ``/proc``).

    .venv/bin/pip install py-spy          # optional tool, not a project dependency
    .venv/bin/python -m bench.profile [--seconds 8] [--redis] [--top 25]
    .venv/bin/python -m bench.profile --stacks FILE --cpu-us 54.3   # re-read saved samples

py-spy attaches to ``solrace serve`` by pid (``py-spy record --pid``; the server's code is
not changed) and samples it without pausing it (``--nonblocking``), idle time excluded,
so the samples are where the CPU went. A sample goes to the first component that
matches, in the order of ``COMPONENTS``: engine work first (by what the engine was
asked: the state hash, the stuck check, judging and applying), then, from the innermost
frame outwards, the first library or package the stack passes through.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import servers
from bench.cpu import load_average
from bench.movepath import saturated

# py-spy names a frame "Class.function (package/module.py:line)".
Frame = tuple[str, str]  # (function, path)
# Whole-stack tests first: engine work is charged to what the engine was asked to do.
STACK_COMPONENTS: tuple[tuple[str, Callable[[str, str], bool]], ...] = (
    ("engine: state hash", lambda fn, path: fn.endswith("state_hash")
     or path.startswith("engine/statehash")),
    ("engine: stuck check", lambda fn, path: fn == "Game.stuck"),
    ("engine: judge + apply (copy, legality, play, progress)",
     lambda fn, path: path.startswith("engine/")),
)
WS_WRITE = {"send", "send_data", "send_context", "send_binary", "send_text", "send_frame",
            "serialize", "write", "data_to_send", "broadcast", "ping", "pong"}
# Then, from the innermost frame outwards, the first of these the stack passes through.
LEAF_COMPONENTS: tuple[tuple[str, Callable[[str, str], bool]], ...] = (
    # server/metrics.py: the move path's own counters and the store-call timer
    ("metrics (prometheus_client, server/metrics.py)",
     lambda fn, path: path.startswith("prometheus_client/") or path == "server/metrics.py"),
    ("redis-py client (commands, pool, parser, socket writes)",
     lambda fn, path: path.startswith("redis/")),
    ("store (solrace's Redis/memory store code)",
     lambda fn, path: path.startswith("server/store/")),
    ("codec (protocol encode/decode)", lambda fn, path: path.startswith(("protocol/", "msgspec"))),
    ("asyncio timeouts / wait_for", lambda fn, path: path.endswith("asyncio/timeouts.py")
     or fn == "wait_for"),
    ("websockets: write a frame", lambda fn, path: path.startswith("websockets/")
     and fn.rsplit(".", 1)[-1] in WS_WRITE),
    ("websockets: read a frame", lambda fn, path: path.startswith("websockets/")),
    ("server: connection, room, race logic", lambda fn, path: path.startswith("server/")),
)
# Last: a stack that passed through none of the above is the event loop's own work
# (callbacks, task steps, futures) when it has an asyncio or uvloop frame.
LOOP = ("asyncio / uvloop event loop", lambda fn, path: path.startswith(("asyncio/", "uvloop/")))


def parse_frame(text: str) -> Frame:
    """``"Connection.send (websockets/asyncio/connection.py:486)"`` → (function, path)."""
    fn, _, where = text.partition(" (")
    return fn, where.rsplit(":", 1)[0]


def component(stack: list[str]) -> str:
    """The component one sample (frames root → leaf, py-spy's text) is charged to."""
    frames = [parse_frame(f) for f in stack]
    for name, test in STACK_COMPONENTS:
        if any(test(fn, path) for fn, path in frames):
            return name
    for fn, path in reversed(frames):
        for name, test in LEAF_COMPONENTS:
            if test(fn, path):
                return name
    if any(LOOP[1](fn, path) for fn, path in frames):
        return LOOP[0]
    return "other (interpreter, C code without a Python caller)"


def read_raw(path: Path) -> Counter[tuple[str, ...]]:
    """py-spy's raw (collapsed) output: one ``frame;frame;… count`` line per stack."""
    stacks: Counter[tuple[str, ...]] = Counter()
    for line in path.read_text().splitlines():
        text, _, count = line.rpartition(" ")
        if text:
            frames = [f for f in text.split(";") if not f.startswith(("process ", "thread "))]
            stacks[tuple(frames)] += int(count)
    return stacks


async def profile(args: argparse.Namespace, spy: str) -> None:
    """Load a fresh solrace node while py-spy (the executable ``spy``) samples it; print
    the breakdown."""
    redis = servers.Redis() if args.redis else None
    if redis is not None:
        redis.__enter__()
    node = await servers.solrace(redis.url if redis else "").start()
    out = Path(tempfile.mkdtemp(prefix="solrace-profile-")) / "stacks.txt"
    try:
        record = await asyncio.create_subprocess_exec(
            spy, "record", "--pid", str(node.pid), "--format", "raw", "--nonblocking",
            "--rate", "200", "--duration", str(args.seconds + 2), "--output", str(out),
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
        figures = await saturated(node.url, True, node.pid, args.clients, args.window,
                                  args.seconds, redis)
        await record.wait()
    finally:
        await node.stop()
        if redis is not None:
            redis.__exit__()
    print(f"solrace {'on Redis' if args.redis else 'memory store'}, saturated: "
          f"{figures['moves_per_s']:,.0f} moves/s, server CPU "
          f"{figures['cpu_us_per_move']:.1f} µs per move (measured window); "
          f"load average {load_average()}\n")
    breakdown(out, figures["cpu_us_per_move"], args.top)


def breakdown(raw: Path, per_move: float, top: int) -> None:
    """Print the components of py-spy's raw stacks in ``raw`` as shares and as CPU µs per
    move (``per_move``: the server's measured CPU per move in the sampled window)."""
    stacks = read_raw(raw)
    total = sum(stacks.values())
    if not total:
        raise SystemExit(f"py-spy recorded nothing (ptrace allowed here?): {raw}")
    by_component: Counter[str] = Counter()
    leaves: Counter[str] = Counter()
    for stack, count in stacks.items():
        by_component[component(list(stack))] += count
        leaves[stack[-1] if stack else "?"] += count
    print(f"{total} samples\n\n| component | share of samples | CPU µs per move |")
    print("|---|---:|---:|")
    for name, count in by_component.most_common():
        print(f"| {name} | {count / total:.1%} | {per_move * count / total:.1f} |")
    print(f"\ninnermost frames, top {top}:")
    for frame, count in leaves.most_common(top):
        print(f"  {count / total:6.1%}  {frame}")
    print(f"\nraw stacks kept in {raw}")


def main() -> None:
    """Parse options and run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=8, help="measured window")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--window", type=int, default=8, help="moves in flight per client")
    parser.add_argument("--redis", action="store_true", help="the node on a private Redis")
    parser.add_argument("--top", type=int, default=25, help="innermost frames listed")
    parser.add_argument("--stacks", type=Path, help="break down saved raw stacks instead")
    parser.add_argument("--cpu-us", type=float, default=0.0,
                        help="with --stacks: the CPU µs per move measured with them")
    args = parser.parse_args()
    if args.stacks:
        breakdown(args.stacks, args.cpu_us, args.top)
        return
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(spy).exists():
        raise SystemExit("py-spy not found: .venv/bin/pip install py-spy")
    try:
        import uvloop
    except ImportError:
        asyncio.run(profile(args, spy))
    else:
        uvloop.run(profile(args, spy))


if __name__ == "__main__":
    main()
