"""``solrace bench``: the load generator.

Many bot clients over many rooms (spread round-robin over one or more server URLs) race
as fast as the server lets them for ``--duration`` seconds; a room whose race ends starts
a new one. It reports moves/s, move → ack latency (p50/p95/p99/max), bytes per ack and
per diff frame (one spectator per room receives the diffs), errors by protocol code, and
— with ``--embedded``, which starts its own server as a child process — that server's CPU
and peak memory. Against a URL it did not start it says ``remote``.

Everything is bounded: rooms, bots, duration and moves per race.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

MAX_ROOMS, MAX_BOTS_PER_ROOM, MAX_DURATION_S, MAX_PROCS = 500, 16, 600, 16
MOVES_PER_RACE = 400  # a bot resigns after this many moves: races stay short and varied


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``bench`` subcommand."""
    p = subparsers.add_parser(
        "bench", help="load generator: many bots over many rooms",
        description="Run bots in many rooms for a while and report moves/s, move->ack "
        "latency, frame sizes, errors and (with --embedded) the server's CPU and memory.",
    )
    p.add_argument("urls", nargs="*", metavar="URL", help="server URL(s); rooms are spread "
                   "over them round-robin")
    p.add_argument("--embedded", action="store_true",
                   help="start a server (child process, 127.0.0.1) and measure it")
    p.add_argument("--rooms", type=int, default=10, help="rooms at once (default %(default)s)")
    p.add_argument("--bots-per-room", type=int, default=2, help="default %(default)s")
    p.add_argument("--duration", type=float, default=10.0, metavar="S",
                   help="seconds of load (default %(default)s)")
    p.add_argument("--variant", default="spanish", help="variant raced (default %(default)s)")
    p.add_argument("--no-spectators", action="store_true", help="no spectator per room")
    p.add_argument("--rate", type=float, default=1000.0,
                   help="(--embedded) the server's per-connection message rate limit")
    p.add_argument("--procs", type=int, default=1,
                   help="generator processes sharing the rooms (default 1; one Python "
                   "process drives a few hundred moves/s)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--raw", action="store_true", help=argparse.SUPPRESS)  # --procs children
    p.set_defaults(func=run)


@dataclass
class Stats:
    """What the bots measured."""

    moves: int = 0
    latencies: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    races: int = 0
    frames: dict[str, list[int]] = field(default_factory=dict)
    client_cpu_percent: float = 0.0

    def absorb_frames(self, client: Any) -> None:
        for name, (count, size) in client.frame_stats.items():
            total = self.frames.setdefault(name, [0, 0])
            total[0] += count
            total[1] += size


def fast_choice(rng: random.Random, legal: list[str]) -> str:
    """The load bot's move: a foundation move if any, else a random one (cheap: the load
    generator must not be the bottleneck)."""
    to_foundation = [m for m in legal if m.endswith(">f")]
    return to_foundation[0] if to_foundation else rng.choice(legal)


async def race_once(url: str, variant: str, bots: int, spectate: bool, deadline: float,
                    stats: Stats, rng: random.Random) -> None:
    """One race in a fresh room: a creator and ``bots - 1`` joiners (all bots) play until
    their race ends or the deadline; an optional spectator receives the diffs."""
    from client_cli.sdk import MoveRejected, RaceClient, RaceError, settings_from

    clients = [RaceClient(url, f"load-{rng.randrange(10**6)}", bot=True, reconnect=False)
               for _ in range(bots)]
    watcher = RaceClient(url, "load-watch", reconnect=False) if spectate else None
    everyone = clients + ([watcher] if watcher else [])
    for c in everyone:
        c.count_frames = True
    try:
        for c in everyone:
            await c.connect()
        limit = max(5, int(deadline - time.monotonic()) + 5)
        await clients[0].create_room(settings_from(variant, max_players=bots, countdown_s=0,
                                                   time_limit_s=limit, public=False))
        code = clients[0].room.code
        for c in clients[1:]:
            await c.join(code)
        if watcher is not None:
            await watcher.join(code, "spectator")
        for c in clients:
            await c.ready()
        stats.races += 1

        async def play(client: RaceClient) -> None:
            await client.wait_for(lambda r: r.my_board is not None or r.results is not None)
            played = 0
            while time.monotonic() < deadline and client.room.results is None:
                board, me = client.room.my_board, client.room.me
                if board is None or (me is not None and me.status not in ("playing", "lobby")):
                    return
                legal = board.legal_moves()
                if not legal:
                    return
                if played >= MOVES_PER_RACE:
                    await client.resign()
                    return
                t0 = time.perf_counter()
                try:
                    await client.move(fast_choice(rng, legal))
                except MoveRejected as exc:
                    stats.errors[str(exc.code)] += 1
                    if exc.code in ("finished", "not_running"):
                        return
                    continue
                stats.latencies.append(time.perf_counter() - t0)
                stats.moves += 1
                played += 1

        await asyncio.gather(*(play(c) for c in clients))
    except RaceError as exc:
        stats.errors[str(exc.code)] += 1
    finally:
        for c in everyone:
            stats.absorb_frames(c)
            await c.close()


async def room_loop(url: str, args: argparse.Namespace, deadline: float, stats: Stats,
                    seed: int) -> None:
    """Race after race in one room slot until the deadline."""
    rng = random.Random(seed)
    while time.monotonic() < deadline - 0.5:
        await race_once(url, args.variant, args.bots_per_room, not args.no_spectators,
                        deadline, stats, rng)


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank) of ``values``; 0.0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


# ------------------------------------------------------------------------ the embedded server
class ChildServer:
    """``solrace serve`` in a child process (so its CPU and memory are its own; the
    command line is the server's one public way in), stopped by SIGTERM."""

    def __init__(self, rate: float) -> None:
        argv = [sys.executable, "-m", "client_cli.main", "serve", "--host", "127.0.0.1",
                "--port", "0", "--rate", str(rate), "--burst", str(max(20, int(rate))),
                "--log-level", "WARNING", "--one-host"]  # every bench client is this host
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()  # "solrace listening on ws://HOST:PORT"
        self.url = line.rpartition(" ")[2]
        if not self.url.startswith("ws://"):
            self.stop()
            raise RuntimeError("the embedded server did not start")

    def cpu_seconds(self) -> float:
        """User + system CPU time of the child so far (Linux /proc)."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def memory_mb(self) -> tuple[float, float]:
        """(current RSS, peak RSS) in MiB."""
        values = {}
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    values[key] = int(rest.split()[0]) / 1024
        return values.get("VmRSS", 0.0), values.get("VmHWM", 0.0)

    def stop(self) -> None:
        """SIGTERM (graceful stop), then wait; kill it only if it hangs."""
        with contextlib.suppress(OSError):
            self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# ------------------------------------------------------------------------ the command
def run(args: argparse.Namespace) -> int:
    """Run the load; 0 when moves were played and nothing failed to connect."""
    if not args.urls and not args.embedded:
        print("solrace bench: give server URL(s) or --embedded", file=sys.stderr)
        return 2
    if not (1 <= args.rooms <= MAX_ROOMS and 1 <= args.bots_per_room <= MAX_BOTS_PER_ROOM
            and 0 < args.duration <= MAX_DURATION_S):
        print(f"solrace bench: --rooms 1..{MAX_ROOMS}, --bots-per-room 1..{MAX_BOTS_PER_ROOM},"
              f" --duration up to {MAX_DURATION_S} s", file=sys.stderr)
        return 2
    if not 1 <= args.procs <= min(MAX_PROCS, args.rooms):
        print(f"solrace bench: --procs 1..{MAX_PROCS}, and at most --rooms", file=sys.stderr)
        return 2
    child = ChildServer(args.rate) if args.embedded else None
    urls = list(args.urls) + ([child.url] if child else [])
    try:
        cpu0, t0 = (child.cpu_seconds() if child else 0.0), time.monotonic()
        own0 = time.process_time()
        if args.procs > 1:
            stats = run_processes(args, urls)
        else:
            stats = asyncio.run(_load(args, urls))
        wall = time.monotonic() - t0
        # The generator's own CPU: near 100% means it, not the server, set the pace.
        if args.procs == 1:
            stats.client_cpu_percent = round(100 * (time.process_time() - own0) / wall, 1)
        server: dict[str, Any] | str = "remote"
        if child is not None:
            rss, peak = child.memory_mb()
            server = {"cpu_percent": round(100 * (child.cpu_seconds() - cpu0) / wall, 1),
                      "rss_mb": round(rss, 1), "peak_rss_mb": round(peak, 1)}
    finally:
        if child is not None:
            child.stop()
    report = make_report(args, urls, stats, wall, server)
    if args.raw:  # for a parent bench: everything needed to merge runs
        report["raw"] = {"latencies": stats.latencies, "frames": stats.frames}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(format_report(report))
    return 0 if stats.moves > 0 else 1


def run_processes(args: argparse.Namespace, urls: list[str]) -> Stats:
    """Split the rooms over ``args.procs`` child generator processes (``bench --raw``),
    run them at once and merge what they measured."""
    shares = [args.rooms // args.procs + (1 if i < args.rooms % args.procs else 0)
              for i in range(args.procs)]
    common = ["--bots-per-room", str(args.bots_per_room), "--duration", str(args.duration),
              "--variant", args.variant, "--json", "--raw"]
    if args.no_spectators:
        common.append("--no-spectators")
    if not args.json:
        print(f"  {args.procs} generator processes, {args.duration:g} s…", file=sys.stderr)
    procs = [subprocess.Popen([sys.executable, "-m", "client_cli.main", "bench", *urls,
                               "--rooms", str(n), *common], stdout=subprocess.PIPE, text=True)
             for n in shares]
    stats = Stats()
    for proc in procs:
        out, _ = proc.communicate(timeout=args.duration + 120)
        if proc.returncode not in (0, 1):
            stats.errors["generator_failed"] += 1
            continue
        part = json.loads(out)
        stats.moves += part["moves"]
        stats.races += part["races"]
        stats.latencies += part["raw"]["latencies"]
        stats.errors.update(part["errors"])
        stats.client_cpu_percent += part["load_generator_cpu_percent"]
        for name, (count, size) in part["raw"]["frames"].items():
            total = stats.frames.setdefault(name, [0, 0])
            total[0] += count
            total[1] += size
    stats.client_cpu_percent = round(stats.client_cpu_percent, 1)
    return stats


async def _load(args: argparse.Namespace, urls: list[str]) -> Stats:
    stats = Stats()
    deadline = time.monotonic() + args.duration
    tasks = [asyncio.create_task(room_loop(urls[i % len(urls)], args, deadline, stats, i))
             for i in range(args.rooms)]
    started = time.monotonic()
    while not all(t.done() for t in tasks):
        await asyncio.wait(tasks, timeout=1.0)
        if not args.json:
            elapsed = time.monotonic() - started
            print(f"  {elapsed:5.1f}s  {stats.moves} moves ({stats.moves / elapsed:.0f}/s)  "
                  f"p50 {1000 * percentile(stats.latencies[-5000:], 50):.2f} ms  "
                  f"errors {sum(stats.errors.values())}", file=sys.stderr, flush=True)
    for t in tasks:
        t.result()
    return stats


def make_report(args: argparse.Namespace, urls: list[str], stats: Stats, wall: float,
                server: dict[str, Any] | str) -> dict[str, Any]:
    """The report as plain data (what --json prints)."""
    lat = stats.latencies

    def per_frame(name: str) -> float | None:
        count, size = stats.frames.get(name, [0, 0])
        return round(size / count, 1) if count else None

    return {
        "urls": urls,
        "rooms": args.rooms,
        "bots_per_room": args.bots_per_room,
        "variant": args.variant,
        "duration_s": round(wall, 2),
        "races": stats.races,
        "moves": stats.moves,
        "moves_per_s": round(stats.moves / wall, 1) if wall else 0.0,
        "latency_ms": {name: round(1000 * percentile(lat, q), 3)
                       for name, q in (("p50", 50), ("p95", 95), ("p99", 99), ("max", 100))},
        "bytes_per_ack": per_frame("Accepted"),
        # the spectator's frames of moves: one Diffs a tick (hello.ds), else a Diff a move
        "bytes_per_diff": per_frame("Diffs") if "Diffs" in stats.frames else per_frame("Diff"),
        "errors": dict(stats.errors),
        "server": server,
        "load_generator_cpu_percent": stats.client_cpu_percent,
        "procs": args.procs,
    }


def format_report(r: dict[str, Any]) -> str:
    """The report for people."""
    lat = r["latency_ms"]
    server = r["server"]
    where = (f"cpu {server['cpu_percent']}% of one core, rss {server['rss_mb']} MiB "
             f"(peak {server['peak_rss_mb']} MiB)" if isinstance(server, dict) else "remote")
    errors = ", ".join(f"{k}: {v}" for k, v in sorted(r["errors"].items())) or "none"
    return "\n".join([
        f"load: {r['rooms']} rooms x {r['bots_per_room']} bots, {r['variant']}, "
        f"{r['duration_s']} s, {len(r['urls'])} server(s)",
        f"races {r['races']} · moves {r['moves']} · {r['moves_per_s']} moves/s",
        f"move->ack latency ms: p50 {lat['p50']} · p95 {lat['p95']} · p99 {lat['p99']} · "
        f"max {lat['max']}",
        f"bytes per ack frame {r['bytes_per_ack']} · per diff frame {r['bytes_per_diff']}",
        f"errors: {errors}",
        f"server: {where}",
        f"load generator: cpu {r['load_generator_cpu_percent']}% of one core "
        f"({r['procs']} process{'es' if r['procs'] > 1 else ''})",
    ])
