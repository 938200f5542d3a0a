"""Runner: ``python -m bench.attack ATTACK [--store memory|redis] [--duration S] ...``.

One run = a fresh server (and Redis), the attack's setup, a quiet phase (the honest player
alone), then the attack phase (the honest player while the attack runs), in that order, in
the same process, so the two latencies are comparable on a noisy machine. Prints one JSON
line (``ATTACK-RESULT {...}``) and a table.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import sys
import time
from typing import Any

from bench.attack.harness import Ctx, Honest, RedisProc, ServerProc

ATTACKS = {
    "ping-flood": "ping_flood",
    "conn-flood": "conn_flood",
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
    parser.add_argument("--pace", type=float, default=0.2,
                        help="seconds between the honest player's moves (default 0.2)")
    parser.add_argument("--redis-maxmemory", default="",
                        help="maxmemory of the private redis-server (e.g. 24mb)")
    parser.add_argument("--server-arg", action="append", default=[],
                        help="extra argument for `solrace serve` (repeatable)")
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
    return args


async def _phases(ctx: Ctx, mod: Any) -> dict[str, Any]:
    args = ctx.args
    setup = getattr(mod, "setup", None)
    if setup is not None:
        t0 = time.monotonic()
        ctx.counters.update(await setup(ctx))
        ctx.counters["setup_s"] = round(time.monotonic() - t0, 1)
    honest = await Honest.start(ctx.url, args.pace)
    await honest.run("quiet", args.duration)
    rss_before = ctx.server.rss_mb()
    redis_before = ctx.redis.used_memory() if ctx.redis else None
    stop = asyncio.Event()

    t0 = time.monotonic()

    async def attack() -> dict[str, Any]:
        try:
            result: dict[str, Any] = await mod.attack(ctx, args.duration)
            # A short attack still gets a full phase of honest samples (its aftermath).
            await asyncio.sleep(max(0.0, t0 + args.duration - time.monotonic()))
            return result
        finally:
            stop.set()

    attack_task = asyncio.create_task(attack())
    await honest.run("attack", args.duration * 1000, stop)
    counters = await attack_task
    attack_s = time.monotonic() - t0
    await honest.client.close()
    quiet = honest.phases["quiet"].summary()
    during = honest.phases["attack"].summary()
    ratio = (round(during["p99_ms"] / quiet["p99_ms"], 2)
             if during["p99_ms"] and quiet["p99_ms"] else None)
    return {
        "honest_quiet": quiet, "honest_attack": during, "p99_ratio": ratio,
        "attack_s": round(attack_s, 1),
        "rss_before_mb": round(rss_before, 1), "rss_after_mb": round(ctx.server.rss_mb(), 1),
        "redis_before_mb": None if redis_before is None else round(redis_before / 2**20, 2),
        "redis_after_mb": (None if ctx.redis is None
                           else round(ctx.redis.used_memory() / 2**20, 2)),
        "setup": {k: v for k, v in ctx.counters.items() if not k.startswith("_")},
        "attack": counters,
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    """One complete run; the result as a dict (also what the tests call)."""
    mod = _module(args.attack)
    redis = RedisProc(args.redis_maxmemory) if args.store == "redis" else None
    server = None
    try:
        server = ServerProc(redis.url if redis else "",
                            [*getattr(mod, "SERVER_ARGS", []), *args.server_arg])
        server.start_stderr_drain()
        ctx = Ctx(server, redis, args)
        result = {"attack_name": args.attack, "store": args.store,
                  "duration_s": args.duration, "server_args": server.cmd[1:]}
        result.update(asyncio.run(_phases(ctx, mod)))
        result["server_alive"] = server.alive()
        result["server_tracebacks"] = sum("Traceback" in line for line in server.stderr_tail)
        return result
    finally:
        if server is not None:
            server.stop()
        if redis is not None:
            redis.stop()


def table(result: dict[str, Any]) -> str:
    """A human table of one result."""
    q, a = result["honest_quiet"], result["honest_attack"]
    rows = [
        ("attack", f"{result['attack_name']} ({result['store']} store)"),
        ("honest ack p50 quiet → attack", f"{q['p50_ms']} → {a['p50_ms']} ms"),
        ("honest ack p99 quiet → attack", f"{q['p99_ms']} → {a['p99_ms']} ms "
                                          f"(x{result['p99_ratio']})"),
        ("honest moves quiet / attack", f"{q['n']} / {a['n']} (lost {a['lost']}, "
                                        f"rejected {a['rejected']})"),
        ("server RSS before → after", f"{result['rss_before_mb']} → "
                                      f"{result['rss_after_mb']} MiB"),
        ("server alive", str(result["server_alive"])),
    ]
    if result["redis_after_mb"] is not None:
        rows.append(("redis used before → after",
                     f"{result['redis_before_mb']} → {result['redis_after_mb']} MiB"))
    for key, value in result["setup"].items():
        rows.append((f"  setup {key}", json.dumps(value) if isinstance(value, dict | list)
                     else str(value)))
    for key, value in result["attack"].items():
        rows.append((f"  {key}", json.dumps(value) if isinstance(value, dict | list)
                     else str(value)))
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
