"""Runner: ``python -m bench.attack ATTACK [--store memory|redis] [--duration S] ...``.

One run = a fresh server (and Redis), the attack's setup, then quiet phases (the honest
player alone) and attack phases (the honest player while the attack runs), alternated
``--rounds`` times in the same run, so the two latencies are comparable on a noisy machine.
The honest player runs in a process of its own (``bench/attack/honest.py``): the attack's
load generator, on this process's event loop, would otherwise stall it. Prints one JSON
line (``ATTACK-RESULT {...}``) and a table.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import sys
import time
from typing import Any

from bench.attack.harness import (
    Ctx,
    HonestProc,
    RedisProc,
    ServerProc,
    honest_source,
    latency_in,
)
from bench.attack.layout import Layout, check_isolation, describe
from bench.attack.probes import Phases, Snapshot, snapshot

ATTACKS = {
    "ping-flood": "ping_flood",
    "refusals": "refusals",
    "conn-flood": "conn_flood",
    "cpu-burn": "cpu_burn",
    "room-flood": "room_flood",
    "list-flood": "list_flood",
    "join-guess": "join_guess",
    "spectator-join": "spectator_join",
    "seat-squat": "seat_squat",
    "leak": "leak",
    "bot-speed": "bot_speed",
    "memory-per-move": "memory_per_move",
    "fuzz": "fuzz",
    "spectator-fanout": "spectator_fanout",
}


def _module(name: str) -> Any:
    return importlib.import_module(f"bench.attack.{ATTACKS[name]}")


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """Command line: the attack, the common options and every attack's own options."""
    parser = argparse.ArgumentParser(prog="python -m bench.attack",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("attack", nargs="?", choices=sorted(ATTACKS))
    parser.add_argument("--list", action="store_true", help="list the attacks and exit")
    parser.add_argument("--store", choices=["memory", "redis"], default="memory")
    parser.add_argument("--duration", type=float, default=10.0,
                        help="seconds of the quiet phase and of the attack phase (default 10)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="alternate quiet and attack this many times, each for "
                             "duration/rounds s (default 1: quiet, then attack)")
    parser.add_argument("--kit-nice", type=int, default=0, metavar="N",
                        help="lower this process's CPU priority by N (0-19) once the server "
                             "and the honest player run: the attack's load generator then "
                             "takes only CPU they leave idle, as one on another machine "
                             "would (default 0: it competes with them)")
    parser.add_argument("--isolate", action="store_true",
                        help="model a remote attacker on a 2-core machine: the server alone "
                             "on core 0, the kit's load generator on core 1 at its priority, "
                             "the honest players and Redis on core 1 at nice -10 (over the "
                             "generator), in every phase (bench/attack/layout.py; root). "
                             "Default: co-located, every process on any core")
    parser.add_argument("--others-fifo", action="store_true",
                        help="with --isolate: the honest players and Redis in the real-time "
                             "class (SCHED_FIFO) instead of at nice -10, so a wake-up never "
                             "waits behind the generator's time slice, as on machines of "
                             "their own (bench/attack/layout.py)")
    parser.add_argument("--pace", type=float, default=0.2,
                        help="seconds between the honest player's moves (default 0.2)")
    parser.add_argument("--honest", type=int, default=1, metavar="N",
                        help="honest players, each in a process of its own, from its own "
                             "loopback address (127.0.0.1, then 127.254.0.2, ...), alone "
                             "in its own private room at --pace, their moves staggered "
                             "by pace/N; p50/p99 are over all their samples (default 1)")
    parser.add_argument("--redis-maxmemory", default="",
                        help="maxmemory of the private redis-server (e.g. 24mb)")
    parser.add_argument("--server-arg", action="append", default=[],
                        help="extra argument for `solrace serve` (repeatable)")
    parser.add_argument("--lag-probe-ms", type=float, default=10.0, metavar="MS",
                        help="run the server with its event-loop-lag probe every MS ms "
                             "(production: 500) so that short stalls show in the report's "
                             "probe section; 0: the server as deployed (default 10)")
    parser.add_argument("--server-tree", default="", metavar="DIR",
                        help="run the server from this source tree (e.g. a base commit's "
                             "`git archive`) under this kit: PYTHONPATH for the server only")
    parser.add_argument("--profile-server", default="", metavar="FILE",
                        help="run the server under cProfile and write its stats to FILE "
                             "(for where the time goes, not for figures: the profiler "
                             "slows the server)")
    for name in sorted(ATTACKS):
        add = getattr(_module(name), "add_args", None)
        if add is not None:
            add(parser.add_argument_group(name))
    args = parser.parse_args(argv)
    if args.list:
        for name in sorted(ATTACKS):
            summary = " ".join((_module(name).__doc__ or "").split("\n\n")[0].split())
            print(f"{name:<16} {summary.split('. ')[0][:110]}")
        raise SystemExit(0)
    if args.attack is None:
        parser.error("name an attack (or --list)")
    if args.isolate and (why := check_isolation()) is not None:
        parser.error(why)
    if args.others_fifo and not args.isolate:
        parser.error("--others-fifo places processes of the isolated layout: add --isolate")
    if not 1 <= args.honest <= 32:
        parser.error("--honest: 1 to 32 players")
    if args.rounds < 1 or (args.rounds > 1 and not getattr(_module(args.attack), "ROUNDS", False)):
        parser.error(f"{args.attack} runs in one round (--rounds 1): its setup is used once")
    return args


SLOWEST = 5  # the slowest attack-phase acks listed with their time into the phase
AFTERMATH_S = 1.0  # after each attack round: the server still pays for it (closes, timers)


async def _phases(ctx: Ctx, mod: Any) -> dict[str, Any]:
    args = ctx.args
    setup = getattr(mod, "setup", None)
    if setup is not None:
        t0 = time.monotonic()
        ctx.counters.update(await setup(ctx))
        ctx.counters["setup_s"] = round(time.monotonic() - t0, 1)
    n = args.honest
    players: list[HonestProc | BaseException] = await asyncio.gather(
        *(asyncio.to_thread(HonestProc, ctx.url, args.pace, honest_source(i),
                            args.pace * i / n) for i in range(n)),
        return_exceptions=True)
    started = [p for p in players if isinstance(p, HonestProc)]
    if len(started) < n:  # stop the ones that did start, then fail the run
        await asyncio.gather(*(asyncio.to_thread(p.finish) for p in started))
        raise RuntimeError(f"{n - len(started)} of {n} honest players did not start")
    honest = started[0]
    for player in started:
        ctx.layout.add("honest", player.proc.pid)
    if args.kit_nice:  # after the server and the honest player started: they keep 0
        os.nice(args.kit_nice)
    slot = args.duration / args.rounds
    quiet: list[tuple[float, float]] = []
    under: list[tuple[float, float]] = []
    rounds: list[dict[str, Any]] = []
    rss_before = redis_before = None
    # CPU seconds used in each kind of phase: the server's, and this process's (the
    # attack's load generator, which shares the machine's cores with the server)
    cpu = {"server_quiet": 0.0, "server_attack": 0.0, "kit_quiet": 0.0, "kit_attack": 0.0}

    # Where the time goes in each kind of phase (bench/attack/probes.py)
    pids = {"server": ctx.server.pid, "honest": honest.proc.pid, "kit": os.getpid()}
    if ctx.redis is not None:
        pids["redis"] = ctx.redis.proc.pid
    phases = Phases()
    layout: dict[str, Any] = {}
    achieved: list[dict[str, Any]] = []
    keys = getattr(mod, "ACHIEVED", ())

    def probe_now() -> Snapshot:
        ctx.layout.reapply()  # threads and processes started since the last boundary
        counts = {"redis_commands": ctx.redis.commands()} if ctx.redis is not None else {}
        return snapshot(pids, ctx.server.port if args.lag_probe_ms else None, counts)

    async def mark() -> tuple[float, float, float, Snapshot]:
        # The probe's scrape is taken before the clocks: its own cost (a /metrics
        # request) falls at the edge of the window, not inside it.
        probe = await asyncio.to_thread(probe_now)
        return time.monotonic(), ctx.server.cpu_s(), time.process_time(), probe

    async def account(phase: str, start: tuple[float, float, float, Snapshot],
                      windows: list[tuple[float, float]]) -> None:
        end = await mark()
        windows.append((start[0], end[0]))
        cpu[f"server_{phase}"] += end[1] - start[1]
        cpu[f"kit_{phase}"] += end[2] - start[2]
        phases.add(phase, start[3], end[3])

    try:
        for _ in range(args.rounds):
            start = await mark()
            await asyncio.sleep(slot)
            await account("quiet", start, quiet)
            if rss_before is None:
                rss_before = ctx.server.rss_mb()
                redis_before = ctx.redis.used_memory() if ctx.redis else None
            start = await mark()
            rounds.append(await mod.attack(ctx, slot))
            # what the generator achieved this round (its rate, to compare layouts)
            achieved.append({k: rounds[-1][k] for k in keys if k in rounds[-1]})
            # A short attack still gets a full slot of honest samples (its aftermath).
            await asyncio.sleep(max(0.0, start[0] + slot - time.monotonic()) + AFTERMATH_S)
            await account("attack", start, under)
        # every process's cores and priority as the kernel has them, all still running
        layout.update(await asyncio.to_thread(ctx.layout.report))
    finally:
        per_player = await asyncio.gather(*(asyncio.to_thread(p.finish) for p in started))
        samples = [sample for one in per_player for sample in one]
        teardown = getattr(mod, "teardown", None)
        if teardown is not None:
            await teardown(ctx)
    assert rss_before is not None
    q = latency_in(samples, quiet).summary()
    a = latency_in(samples, under).summary()
    ratio = round(a["p99_ms"] / q["p99_ms"], 2) if a["p99_ms"] and q["p99_ms"] else None
    # Each round's own tail: a flood whose rounds differ (the room flood creates rooms
    # in its first round and only knocks after) shows where the slow moves fell.
    by_round = {kind: [latency_in(samples, [w]).summary()["max_ms"] for w in windows]
                for kind, windows in (("quiet", quiet), ("attack", under))}
    p99_by_round = {kind: [latency_in(samples, [w]).summary()["p99_ms"] for w in windows]
                    for kind, windows in (("quiet", quiet), ("attack", under))}
    # The slowest attack-phase acks and when they were sent, in seconds into their
    # round's attack phase: a flood's moments (its opening burst, its mass close at the
    # end of the round) show up here.
    slowest = sorted(((ms, round(t - start, 2)) for t, ms in samples if ms >= 0
                      for start, end in under if start <= t < end), reverse=True)[:SLOWEST]
    quiet_s = sum(end - begin for begin, end in quiet)
    attack_s = sum(end - begin for begin, end in under)
    # Each player's own p99 (a player whose room or address was slower shows here)
    by_player = {kind: [latency_in(one, windows).summary()["p99_ms"] for one in per_player]
                 for kind, windows in (("quiet", quiet), ("attack", under))}
    n_by_player = {kind: [latency_in(one, windows).summary()["n"] for one in per_player]
                   for kind, windows in (("quiet", quiet), ("attack", under))}
    result = {
        "honest_players": n, "honest_p99_ms_by_player": by_player,
        "honest_n_by_player": n_by_player,
        "honest_quiet": q, "honest_attack": a, "p99_ratio": ratio, "rounds": args.rounds,
        "honest_max_ms_by_round": by_round, "honest_p99_ms_by_round": p99_by_round,
        "honest_slowest_attack": [[round(ms, 2), at] for ms, at in slowest],
        "kit_nice": args.kit_nice, "attack_s": round(attack_s, 1),
        "layout": layout, "flood_achieved": achieved,
        # percent of one core over the phase
        "cpu_pct": {k: round(100 * v / (quiet_s if k.endswith("quiet") else attack_s), 1)
                    for k, v in cpu.items()},
        "rss_before_mb": round(rss_before, 1), "rss_after_mb": round(ctx.server.rss_mb(), 1),
        "redis_before_mb": None if redis_before is None else round(redis_before / 2**20, 2),
        "redis_after_mb": (None if ctx.redis is None
                           else round(ctx.redis.used_memory() / 2**20, 2)),
        "probe": phases.report(),
        "setup": {k: v for k, v in ctx.counters.items() if not k.startswith("_")},
        "attack": rounds[0],
    }
    if len(rounds) > 1:
        result["attack_rounds"] = rounds
    return result


def run(args: argparse.Namespace) -> dict[str, Any]:
    """One complete run; the result as a dict (also what the tests call)."""
    mod = _module(args.attack)
    # This process (the load generator) first: the processes it starts inherit its core.
    layout = Layout(getattr(args, "isolate", False), getattr(args, "others_fifo", False))
    layout.add("generator", os.getpid())
    redis = RedisProc(args.redis_maxmemory) if args.store == "redis" else None
    server = None
    try:
        if redis is not None:
            layout.add("redis", redis.proc.pid)
        server = ServerProc(redis.url if redis else "",
                            [*getattr(mod, "SERVER_ARGS", []), *args.server_arg],
                            profile=args.profile_server, tree=args.server_tree,
                            lag_probe_s=args.lag_probe_ms / 1000)
        layout.add("server", server.pid)
        server.start_stderr_drain()
        ctx = Ctx(server, redis, args, layout=layout)
        result = {"attack_name": args.attack, "store": args.store,
                  "duration_s": args.duration, "server_args": server.cmd[1:]}
        result.update(asyncio.run(_phases(ctx, mod)))
        if redis is not None:  # what the run's commands cost Redis, the costliest first
            stats = redis.info("commandstats")
            result["redis_commandstats"] = {
                name.removeprefix("cmdstat_"): {k: v.get(k) for k in ("calls", "usec",
                                                                       "usec_per_call")}
                for name, v in sorted(stats.items(), key=lambda kv: -kv[1].get("usec", 0))[:8]}
        result["server_alive"] = server.alive()
        result["server_tracebacks"] = sum("Traceback" in line for line in server.stderr_tail)
        # What the server complained of (its last warnings and errors, for the JSON)
        result["server_warnings"] = [line[:300] for line in server.stderr_tail
                                     if "WARNING" in line or "ERROR" in line
                                     or '"warning"' in line or '"error"' in line
                                     or "unavailable" in line][-5:]
        return result
    finally:
        if server is not None:
            server.stop()
        if redis is not None:
            redis.stop()
        layout.restore(os.getpid())


def table(result: dict[str, Any]) -> str:
    """A human table of one result."""
    q, a = result["honest_quiet"], result["honest_attack"]
    rows = [
        ("attack", f"{result['attack_name']} ({result['store']} store)"),
        ("honest ack p50 quiet → attack", f"{q['p50_ms']} → {a['p50_ms']} ms"),
        ("honest ack p99 quiet → attack", f"{q['p99_ms']} → {a['p99_ms']} ms "
                                          f"(x{result['p99_ratio']})"),
        ("rounds (quiet, attack) alternated", f"{result['rounds']} (kit nice "
                                              f"{result['kit_nice']})"),
        ("layout", describe(result["layout"]) if result.get("layout") else "?"),
        ("flood achieved, per round", json.dumps(result.get("flood_achieved", []))),
        ("honest players; p99 each, quiet / attack",
         f"{result['honest_players']}; {result['honest_p99_ms_by_player']['quiet']} / "
         f"{result['honest_p99_ms_by_player']['attack']} ms"),
        ("honest slowest ack per round, quiet / attack",
         f"{result['honest_max_ms_by_round']['quiet']} / "
         f"{result['honest_max_ms_by_round']['attack']} ms"),
        ("honest p99 per round, quiet / attack",
         f"{result['honest_p99_ms_by_round']['quiet']} / "
         f"{result['honest_p99_ms_by_round']['attack']} ms"),
        ("honest slowest attack acks (ms, s into the phase)",
         json.dumps(result["honest_slowest_attack"])),
        ("honest moves quiet / attack", f"{q['n']} / {a['n']} (lost {a['lost']}, "
                                        f"rejected {a['rejected']})"),
        ("server CPU (and its workers) quiet → attack", f"{result['cpu_pct']['server_quiet']} → "
                                      f"{result['cpu_pct']['server_attack']} % of a core"),
        ("attack kit CPU quiet → attack", f"{result['cpu_pct']['kit_quiet']} → "
                                          f"{result['cpu_pct']['kit_attack']} % of a core"),
        ("server RSS before → after", f"{result['rss_before_mb']} → "
                                      f"{result['rss_after_mb']} MiB"),
        ("server alive", str(result["server_alive"])),
    ]
    if result["redis_after_mb"] is not None:
        rows.append(("redis used before → after",
                     f"{result['redis_before_mb']} → {result['redis_after_mb']} MiB"))
    for kind in ("quiet", "attack"):
        probe = result["probe"].get(kind, {})
        for key in ("runq_wait_ms_per_s", "runq_wait_per_wakeup_ms", "cpu_pct",
                    "core_busy_pct", "redis_commands_per_s"):
            if key in probe:
                rows.append((f"{kind}: {key}", json.dumps(probe[key])))
        for key in ("server_loop_lag", "server_move_ack", "append_move", "server_gc_pause"):
            if probe.get(key, {}).get("n"):
                rows.append((f"{kind}: {key}", json.dumps(probe[key])))
    for key, value in result["setup"].items():
        rows.append((f"  setup {key}", json.dumps(value) if isinstance(value, dict | list)
                     else str(value)))
    for i, counters in enumerate(result.get("attack_rounds", [result["attack"]])):
        for key, value in counters.items():
            rows.append((f"  {key}" + (f" (round {i + 1})" if i else ""),
                         json.dumps(value) if isinstance(value, dict | list) else str(value)))
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def main(argv: list[str] | None = None) -> None:
    """Parse, run, print the JSON line and the table."""
    args = parse(argv)
    result = run(args)
    print("ATTACK-RESULT " + json.dumps(result, sort_keys=True), flush=True)
    print(table(result), flush=True)
    sys.exit(0 if result["server_alive"] else 1)


if __name__ == "__main__":
    main()
