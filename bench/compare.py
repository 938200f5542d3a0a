"""Every row of issue #16's table, solrace against a bare baseline in the same run.

    .venv/bin/python -m bench.compare                 # all rows, 2 rounds (a few minutes)
    .venv/bin/python -m bench.compare --quick         # all rows, 1 round, short windows
    .venv/bin/python -m bench.compare --rows ack,cpu  # some rows; --json FILE to keep them

Rows (``--rows``): ``ack`` (move → ack p50/p99, memory store, vs a websockets echo),
``ack-redis`` (the same on Redis, vs websockets + 1 EVALSHA), ``cpu`` (server CPU per
accepted move, saturated, memory, vs the echo), ``redis`` (saturated moves/s on Redis
and CPU per move of the server and of redis-server, vs websockets + 1 EVALSHA),
``fanout`` (one room, 16 movers + 1,000 spectators, saturated, vs a bare broadcast),
``fanout-tick`` (the same vs a bare broadcast coalescing spectators' frames per 16 ms),
``paced`` (the same room at 16 moves/s: CPU per frame delivered to a spectator, and when a
rival sees a move; also against a floor: the same sockets written by a plain
``transport.write`` loop), ``conns`` (RSS per idle connection at 5,000 and 9,000 connections, the
longest stall a client sees, the server's GC-pause metric if any, vs the echo server).

Every server is its own process on 127.0.0.1 (solrace is ``solrace serve``: a black box),
its CPU read from ``/proc/PID/stat`` over the measured window only. Within a row the
baseline and solrace alternate, A B A B, for ``--rounds`` rounds, and each figure is the
median over rounds. The load generator is this one Python process on the same cores, so
on a small machine it can be the limit: the baseline's figure shows that ceiling. The
machine's load average is printed before and after: compare ratios of one run, not
figures of different runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import statistics
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import servers
from bench.conns import idle_connections
from bench.cpu import load_average
from bench.fanout import spectated_room
from bench.movepath import ack_latency, saturated

# The fan-out rows' load generator, shown so a reader sees when it is the limit: cores
# busy over the window, of the server and of each load process (``players``: the probe
# pair and the raw movers together, or this process when ``--players bench``).
_GENERATOR_KEYS = [
    ("load_ack_p99_ms", "the raw movers' own ack p99 ms (the load, not the probe)", ""),
    ("server_cores", "server cores busy", ""),
    ("probe_cores", "probe pair's process cores busy", ""),
    ("players_cores", "movers' processes cores busy (all)", ""),
    ("watchers_cores", "spectators' process cores busy", "")]
ROWS = ("ack", "ack-redis", "cpu", "redis", "fanout", "fanout-tick", "paced", "conns")
Measure = Callable[[servers.Child, bool], Awaitable[dict[str, Any]]]


@dataclass
class Row:
    """One table row's figures: per key, the baseline's and solrace's value each round."""

    name: str
    baseline_name: str
    keys: list[tuple[str, str, str]]  # (key, label, target)
    baseline: list[dict[str, Any]] = field(default_factory=list)
    solrace: list[dict[str, Any]] = field(default_factory=list)
    # A second baseline below the first (the paced row's ``floor``), measured in the same
    # rounds: its lines compare solrace and the first baseline against it.
    floor_name: str = ""
    floor: list[dict[str, Any]] = field(default_factory=list)
    floor_keys: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """Markdown table lines: label, baseline, solrace, ratio, target, per round."""
        out = []
        for key, label, target in self.keys:
            b = _median([r.get(key, math.nan) for r in self.baseline])
            s = _median([r.get(key, math.nan) for r in self.solrace])
            ratio = s / b if b and not math.isnan(b) and isinstance(s, float) else float("nan")
            rounds = " / ".join(_fmt(r.get(key, math.nan)) for r in self.solrace)
            base_rounds = " / ".join(_fmt(r.get(key, math.nan)) for r in self.baseline)
            out.append(f"| {self.name}: {label} | {_fmt(b)} | {_fmt(s)} | {_fmt(ratio, 2)} "
                       f"| {target} | {base_rounds} | {rounds} |")
        for key, label, _ in self.keys:
            if key not in self.floor_keys or not self.floor:
                continue
            f = _median([r.get(key, math.nan) for r in self.floor])
            b = _median([r.get(key, math.nan) for r in self.baseline])
            s = _median([r.get(key, math.nan) for r in self.solrace])
            floor_rounds = " / ".join(_fmt(r.get(key, math.nan)) for r in self.floor)
            for who, value in ((self.baseline_name, b), ("solrace", s)):
                ratio = value / f if f and not math.isnan(f) else float("nan")
                out.append(f"| {self.name}: {label}, {who} vs {self.floor_name} | {_fmt(f)} "
                           f"| {_fmt(value)} | {_fmt(ratio, 2)} | | {floor_rounds} | |")
        return out


def _median(values: list[Any]) -> Any:
    numbers = [v for v in values if isinstance(v, int | float) and not math.isnan(v)]
    if numbers:
        return float(statistics.median(numbers))
    return values[0] if values else float("nan")


def _fmt(value: Any, digits: int | None = None) -> str:
    if not isinstance(value, int | float):
        return str(value)
    if math.isnan(value):
        return "—"
    if digits is not None:
        return f"{value:.{digits}f}"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


async def alternate(row: Row, rounds: int, baseline: Callable[[], servers.Child],
                    solrace: Callable[[], servers.Child], measure: Measure,
                    fresh: bool = False,
                    floor: Callable[[], servers.Child] | None = None) -> Row:
    """A B A B …: the baseline then solrace, ``rounds`` times. Both servers stay up for
    the whole row unless ``fresh`` (a new process per measurement: memory rows). With
    ``floor``, each round measures the floor first (F A B F A B …, into ``row.floor``)."""
    pair: list[servers.Child] = []
    order: list[tuple[bool, list[dict[str, Any]], Callable[[], servers.Child]]] = [
        (False, row.baseline, baseline), (True, row.solrace, solrace)]
    if floor is not None:
        order.insert(0, (False, row.floor, floor))
    try:
        if not fresh:
            pair = [await make().start() for _, _, make in order]
        for i in range(rounds):
            for j, (is_solrace, results, make) in enumerate(order):
                child = pair[j] if pair else await make().start()
                try:
                    figures = await measure(child, is_solrace)
                finally:
                    if not pair:
                        await child.stop()
                results.append(figures)
                who = ("solrace" if is_solrace else
                       "floor" if results is row.floor else "baseline")
                print(f"  {row.name} round {i + 1} {who}: "
                      f"{ {k: _fmt(v) for k, v in figures.items()} }", file=sys.stderr,
                      flush=True)
    finally:
        for child in pair:
            await child.stop()
    return row


async def run(args: argparse.Namespace) -> list[Row]:
    """Measure the rows asked for."""
    quick = args.quick
    rounds = args.rounds or (1 if quick else 2)
    seconds = 2.0 if quick else 4.0
    moves = 500 if quick else 2000
    rows: list[Row] = []
    wanted = args.rows.split(",") if args.rows else list(ROWS)
    redis = servers.Redis() if {"ack-redis", "redis"} & set(wanted) else None
    if redis is not None:
        redis.__enter__()
    try:
        for name in wanted:
            print(f"row {name} …", file=sys.stderr, flush=True)
            rows.append(await _row(name, args, redis, rounds, seconds, moves))
    finally:
        if redis is not None:
            redis.__exit__()
    return rows


async def _row(name: str, args: argparse.Namespace, redis: servers.Redis | None,
               rounds: int, seconds: float, moves: int) -> Row:
    echo = lambda: servers.baseline("echo")  # noqa: E731
    memory = lambda: servers.solrace()  # noqa: E731
    if name == "ack":
        row = Row("move→ack, memory", "websockets echo", [
            ("p50_us", "p50 µs", "≤ 1.3x echo"), ("p99_us", "p99 µs", "")])
        return await alternate(row, rounds, echo, memory,
                               lambda c, s: ack_latency(c.url, s, moves))
    if name == "cpu":
        row = Row("saturated, memory", "websockets echo", [
            ("cpu_us_per_move", "server CPU µs per move", "≤ 20 µs"),
            ("moves_per_s", "moves/s", ""), ("server_cores", "server cores busy", ""),
            ("generator_cores", "load generator cores busy", "")])
        return await alternate(row, rounds, echo, memory, lambda c, s: saturated(
            c.url, s, c.pid, args.clients, args.window, seconds))
    if name in ("ack-redis", "redis"):
        assert redis is not None
        url = redis.url
        evalsha = lambda: servers.baseline("evalsha", url)  # noqa: E731
        on_redis = lambda: servers.solrace(url)  # noqa: E731
        if name == "ack-redis":
            row = Row("move→ack, Redis", "websockets + 1 EVALSHA", [
                ("p50_us", "p50 µs", "≤ 1.3x"), ("p99_us", "p99 µs", "")])
            return await alternate(row, rounds, evalsha, on_redis,
                                   lambda c, s: ack_latency(c.url, s, moves))
        row = Row("saturated, Redis", "websockets + 1 EVALSHA", [
            ("moves_per_s", "moves/s", "≥ 1.3x (≥ 10k/s)"),
            ("cpu_us_per_move", "server CPU µs per move", ""),
            ("redis_cpu_us_per_move", "redis-server CPU µs per move", ""),
            ("redis_scripts_per_move", "Redis script calls (EVALSHA) per move", ""),
            ("redis_ops_per_move", "Redis commands per move (inside scripts included)", ""),
            ("moves_per_redis_read", "moves per Redis read event (batch size)", ""),
            ("server_cores", "server cores busy", ""),
            ("generator_cores", "load generator cores busy", "")])
        return await alternate(row, rounds, evalsha, on_redis, lambda c, s: saturated(
            c.url, s, c.pid, args.clients, args.window, seconds, redis))
    broadcast = lambda: servers.baseline("broadcast")  # noqa: E731
    if name in ("fanout", "fanout-tick"):
        tick = name == "fanout-tick"
        if tick:
            broadcast = lambda: servers.baseline("broadcast-tick")  # noqa: E731
        row = Row(f"1 room, {args.movers} movers + {args.spectators} spectators, saturated"
                  + (" (vs coalescing)" if tick else ""),
                  "bare broadcast, one frame per 16 ms tick" if tick else "bare broadcast", [
                      ("moves_per_s", "moves/s", "≥ 2,000"),
                      ("ack_p50_ms", "player ack p50 ms", ""),
                      ("ack_mean_ms", "player ack mean ms (Little: in flight ÷ moves/s)", ""),
                      ("ack_p99_ms", "player ack p99 ms", "≤ 20 ms"),
                      ("frames_per_move_spectator", "frames per move per spectator", ""),
                      *_GENERATOR_KEYS])
        return await alternate(row, rounds, broadcast, memory, lambda c, s: spectated_room(
            c.url, c.port, s, c.pid, args.movers, args.spectators, seconds, 0.0,
            args.fanout_window, args.players, args.probe_nice, args.pin, args.probe_fifo),
            fresh=True)
    if name == "paced":
        row = Row(f"same room paced at {args.paced:g} moves/s", "bare broadcast", [
            ("cpu_us_per_frame", "CPU µs per frame delivered to a spectator", "≤ 8.9 µs"),
            ("cpu_us_per_delivery", "CPU µs per move delivered to a spectator", ""),
            ("frames_per_move_spectator", "frames per move per spectator", "1"),
            ("rival_p99_ms", "a rival sees a move, p99 ms", "≤ 5 ms"),
            ("ack_p99_ms", "player ack p99 ms", ""),
            ("cpu_user_us_per_frame", "user CPU µs per spectator frame (utime)", ""),
            ("cpu_sys_us_per_frame", "system CPU µs per spectator frame (stime)", ""),
            ("cpu_us_per_any_frame", "CPU µs per frame sent, players' frames counted too",
             ""),
            ("player_frames_per_move", "frames to the players per move (ack, rivals')", ""),
            ("rival_p50_ms", "a rival sees a move, p50 ms", ""),
            ("rival_samples", "rivals' Progress timed", ""),
            *_GENERATOR_KEYS],
            floor_name="floor (plain transport.write loop)",
            floor_keys=["cpu_us_per_frame", "cpu_user_us_per_frame", "cpu_sys_us_per_frame",
                        "cpu_us_per_any_frame", "rival_p99_ms"])
        floor = lambda: servers.baseline("floor")  # noqa: E731
        return await alternate(row, rounds, broadcast, memory, lambda c, s: spectated_room(
            c.url, c.port, s, c.pid, args.movers, args.spectators, 2 * seconds, args.paced,
            players=args.players, probe_nice=args.probe_nice, pin=args.pin,
            probe_fifo=args.probe_fifo),
            fresh=True, floor=None if args.no_floor else floor)
    if name == "conns":
        counts = [int(x) for x in args.conns.split(",")]
        keys = [(f"rss_kib_per_conn_{n}", f"RSS KiB per idle connection at {n:,}",
                 "≤ 12 KiB" if n == counts[-1] else "") for n in counts]
        keys += [("gc_worst_ms", "longest GC pause ms (timed in the server by bench/gcwatch)",
                  "≤ 50 ms"),
                 ("gc_worst_generation", "generation of the longest pause", ""),
                 ("gc_worst_cpu_ms", "CPU time of the longest-running collection ms", ""),
                 ("gc_collections", "collections meanwhile", ""),
                 ("gc_full_collections", "full (gen 2) collections meanwhile", ""),
                 ("probe_worst_ms", "longest ping→pong a client saw meanwhile, ms", ""),
                 ("gc_metric", "server GC-pause metric", "")]
        row = Row("idle connections", "websockets echo", keys)
        return await alternate(row, rounds, echo, memory, lambda c, s: idle_connections(
            c.url, c.port, s, c.pid, counts, 1.0 if args.quick else 3.0, c.gc_pauses),
            fresh=True)
    raise SystemExit(f"unknown row {name!r}; rows: {', '.join(ROWS)}")


def main() -> None:
    """Parse the options, run, print the table (and keep it as JSON with ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default="", help=f"comma-separated, of: {', '.join(ROWS)}")
    parser.add_argument("--quick", action="store_true", help="1 round, short windows")
    parser.add_argument("--rounds", type=int, default=0, help="A B rounds per row")
    parser.add_argument("--clients", type=int, default=16, help="saturated rows: players")
    parser.add_argument("--window", type=int, default=8, help="saturated rows: moves in flight")
    parser.add_argument("--movers", type=int, default=16, help="fan-out rows: players")
    parser.add_argument("--spectators", type=int, default=1000, help="fan-out rows")
    parser.add_argument("--fanout-window", type=int, default=4,
                        help="saturated fan-out rows: moves each mover keeps in flight")
    parser.add_argument("--players", choices=["probe", "bench"], default="probe",
                        help="fan-out rows: 'probe' (default): the timed pair in a process of "
                        "its own, the other movers raw in another; 'bench': all movers full "
                        "players in this process (the measurement before 28 Nov 2026)")
    parser.add_argument("--probe-nice", type=int, default=-5 if os.geteuid() == 0 else 0,
                        help="fan-out rows, --players probe: niceness added to the probe "
                        "pair's process (default -5 as root, else 0)")
    # A player on a machine of its own, as near as this machine gets (docs/BENCHMARKS.md
    # "What a player on its own machine sees"): by default with the probe, as root on 2+
    # CPUs; the old measurement (``--players bench``) stays unpinned unless asked.
    parser.add_argument("--probe-fifo", action=argparse.BooleanOptionalAction, default=None,
                        help="fan-out rows, --players probe: the probe pair's process under "
                        "SCHED_FIFO (root only): it runs as soon as a frame wakes it "
                        "(default: on with --players probe as root)")
    parser.add_argument("--pin", action=argparse.BooleanOptionalAction, default=None,
                        help="fan-out rows: the server on CPU 0, the load generator on CPU 1 "
                        "(default: on with --players probe on 2+ CPUs)")
    parser.add_argument("--paced", type=float, default=16.0, help="paced row: room moves/s")
    parser.add_argument("--no-floor", action="store_true",
                        help="paced row: skip the floor baseline (plain transport.write)")
    parser.add_argument("--conns", default="5000,9000", help="idle connection counts")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    probe = args.players == "probe"
    if args.pin is None:
        args.pin = probe and len(os.sched_getaffinity(0)) >= 2
    if args.probe_fifo is None:
        args.probe_fifo = probe and os.geteuid() == 0
    load_before = load_average()
    run_with = asyncio.run
    try:
        import uvloop

        run_with = uvloop.run
    except ImportError:
        pass
    rows = run_with(run(args))
    print(f"\nload average before: {load_before}, after: {load_average()}; "
          f"{os.cpu_count()} CPUs; figures are medians over rounds; fan-out rows: "
          f"--players {args.players}"
          + ((f" (probe niceness {args.probe_nice:+d}"
              + (", SCHED_FIFO)" if args.probe_fifo else ")")) if args.players == "probe" else "")
          + (", pinned" if args.pin else "") + "\n")
    print("| row | baseline | solrace | solrace / baseline | target "
          "| baseline per round | solrace per round |")
    print("|---|---:|---:|---:|---|---|---|")
    for row in rows:
        print("\n".join(row.lines()))
    print("\nbaselines: " + "; ".join(f"{r.name}: {r.baseline_name}" for r in rows))
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"load_before": load_before, "load_after": load_average(),
             "rows": [{"name": r.name, "baseline": r.baseline_name, "baseline_runs": r.baseline,
                       "solrace_runs": r.solrace, "floor": r.floor_name, "floor_runs": r.floor}
                      for r in rows]}, indent=1))


if __name__ == "__main__":
    main()
