"""The move path of one server process, measured the same way on solrace and on a bare
baseline: move → ack latency with one move in flight, and saturated throughput with the
server's CPU per acknowledged move read from ``/proc`` over the measured window.
"""

from __future__ import annotations

import asyncio
import time

from .cpu import CpuWindow
from .players import Player, find_cycle, median, percentile
from .servers import Redis

WARMUP_MOVES = 100  # before the latency samples: connection and code paths warm


async def ack_latency(url: str, solrace: bool, moves: int) -> dict[str, float]:
    """One player, one move in flight: p50/p99 µs of send → ack over ``moves`` moves."""
    player = await Player.solo(url, find_cycle(), solrace)
    try:
        for _ in range(WARMUP_MOVES):
            await player.one_move()
        player.acks.clear()
        for _ in range(moves):
            await player.one_move()
    finally:
        await player.ws.close()
    return {"p50_us": median(player.acks) * 1e6, "p99_us": percentile(player.acks, 0.99) * 1e6}


async def saturated(url: str, solrace: bool, pid: int, clients: int, window: int,
                    seconds: float, redis: Redis | None = None) -> dict[str, float]:
    """``clients`` players (one room each), ``window`` moves in flight each, for
    ``seconds``: acks/s, the server's CPU µs per ack, its CPU share of the window (1.0 =
    one full core) and the load generator's (this process), and, with ``redis``,
    redis-server's CPU µs, script calls and commands per ack, and acks per read event
    of Redis (how many moves reach Redis in one socket read: the node's batch size)."""
    redis_pid = redis.pid if redis is not None else 0
    cycle = find_cycle()
    players = [await Player.solo(url, cycle, solrace) for _ in range(clients)]
    try:
        for p in players:  # warm-up: a few moves each, outside the window
            for _ in range(5):
                await p.one_move()
        server, redis_cpu = CpuWindow(pid), CpuWindow(redis_pid)
        scripts = ran = reads = 0
        server.start()
        generator = time.process_time()  # this process: the load generator's own CPU
        counted = (0, 0, 0)
        if redis is not None:
            redis_cpu.start()
            counted = redis.counters()
        started = time.perf_counter()
        deadline = started + seconds
        counts = await asyncio.gather(*(p.pipelined(deadline, window) for p in players))
        elapsed = time.perf_counter() - started
        server.stop()
        generator = time.process_time() - generator
        if redis is not None:
            redis_cpu.stop()
            now = redis.counters()
            scripts, ran, reads = (now[0] - counted[0], now[1] - counted[1],
                                   now[2] - counted[2])
    finally:
        for p in players:
            await p.ws.close()
    acks = sum(counts)
    return {
        "moves_per_s": acks / elapsed,
        "cpu_us_per_move": server.us_per(acks),
        "redis_cpu_us_per_move": redis_cpu.us_per(acks) if redis_pid else float("nan"),
        "redis_scripts_per_move": scripts / acks if redis_pid and acks else float("nan"),
        "redis_ops_per_move": ran / acks if redis_pid and acks else float("nan"),
        "server_cores": server.seconds / elapsed,
        "generator_cores": generator / elapsed,
        "moves_per_redis_read": acks / reads if redis_pid and reads else float("nan"),
    }
