"""Server benchmark: move→ack latency (p50/p99) and moves/s of one server process, against
a bare websockets echo server measured in the same run (same client, same frame sizes,
same loopback), so the figures say what the game logic costs on top of the transport.
The echo answers each move with an ack-sized frame (``bench/baselines.py``); the fuller
comparison of issue #16, with server CPU from /proc, is ``python -m bench.compare``.

    .venv/bin/python bench/server_bench.py [--moves 3000] [--clients 16] [--seconds 3]
                                           [--window 8] [--redis]

Each server runs in its own process (uvloop when installed); the load generator is this
process. A player alternates a pair of moves that undo each other (found on a fixed
Spanish deal), so every move is legal, judged by the engine, appended to the store
(memory) and acknowledged, for as long as the run lasts. Phases, for each server:

1. latency: one client, one move in flight, ``--moves`` moves; p50/p99 of send→ack.
2. throughput: ``--clients`` clients (one room each), each keeping ``--window`` moves
   in flight (pipelined: a move's sequence number lets it be sent before the previous
   ack), for ``--seconds``; total acks per second. The load generator is one Python
   process, so on a small machine it, not the server, may be the limit: the echo row
   shows that ceiling.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.players import Player, find_cycle

VARIANT = "spanish"
SEED = 1


# --------------------------------------------------------------------------- servers
async def _run_solrace() -> None:
    from server.app import Server
    from server.config import ONE_HOST, ServerConfig

    config = ServerConfig(**ONE_HOST, port=0, rate_burst=1_000_000, rate_per_s=1_000_000.0,
                          seed_source=lambda: SEED, outbound_queue=100_000,
                          max_outbound_bytes=1 << 30,  # the bench measures, it does not cut
                          store_url=os.environ.get("BENCH_STORE_URL") or None,
                          allow_volatile_store=True)  # the bench's Redis runs without AOF
    server = Server(config)
    await server.start()
    print(f"listening {server.port}", flush=True)
    await asyncio.Event().wait()


async def _run_echo() -> None:
    from websockets.asyncio.server import serve

    from bench.baselines import echo_handler  # answers every frame with an ack-sized frame

    async with serve(echo_handler(), "127.0.0.1", 0, compression=None) as server:
        print(f"listening {server.sockets[0].getsockname()[1]}", flush=True)
        await asyncio.Event().wait()


def _serve(role: str) -> None:
    coro = _run_echo() if role == "echo" else _run_solrace()
    try:
        import uvloop
    except ImportError:
        asyncio.run(coro)
    else:
        uvloop.run(coro)


# --------------------------------------------------------------------------- clients
async def measure(url: str, echo: bool, moves: int, clients: int, seconds: float,
                  window: int, cycle: tuple[str, str]) -> dict[str, float]:
    """Latency (one client) then throughput (many clients) against ``url``."""
    solo = await Player.solo(url, cycle, solrace=not echo)
    for _ in range(200):  # warm up
        await solo.one_move()
    solo.acks.clear()
    for _ in range(moves):
        await solo.one_move()
    samples = sorted(solo.acks)
    await solo.ws.close()
    players = [await Player.solo(url, cycle, solrace=not echo) for _ in range(clients)]
    deadline = time.perf_counter() + seconds
    counts = [0] * clients

    async def loop(i: int) -> None:
        counts[i] = await players[i].pipelined(deadline, window)

    started = time.perf_counter()
    await asyncio.gather(*(loop(i) for i in range(clients)))
    elapsed = time.perf_counter() - started
    for p in players:
        await p.ws.close()
    return {
        "p50_us": statistics.median(samples) * 1e6,
        "p99_us": samples[int(len(samples) * 0.99) - 1] * 1e6,
        "per_s": sum(counts) / elapsed,
    }


def _start(role: str, store_url: str = "") -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "BENCH_STORE_URL": store_url}
    proc = subprocess.Popen([sys.executable, __file__, "--serve", role], stdout=subprocess.PIPE,
                            text=True, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("listening"):
        proc.kill()
        raise SystemExit(f"{role} server did not start: {line!r}")
    return proc, f"ws://127.0.0.1:{line.split()[1]}"


def _start_redis() -> tuple[subprocess.Popen[bytes], str]:
    """A private redis-server on a free loopback port (never 6379), no persistence."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return proc, f"redis://127.0.0.1:{port}/0"
        except OSError:
            time.sleep(0.05)
    proc.terminate()
    raise SystemExit("redis-server did not start")


def main() -> None:
    """Run both servers, measure each, print a table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=3000, help="latency samples")
    parser.add_argument("--clients", type=int, default=16, help="throughput clients")
    parser.add_argument("--seconds", type=float, default=3.0, help="throughput duration")
    parser.add_argument("--window", type=int, default=8, help="moves in flight per client")
    parser.add_argument("--redis", action="store_true",
                        help="also measure solrace on a private redis-server (started here)")
    parser.add_argument("--serve", choices=["solrace", "echo"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        _serve(args.serve)
        return
    cycle = find_cycle(VARIANT, SEED)
    runs = [("echo", ""), ("solrace", "")]
    redis = _start_redis() if args.redis else None
    if redis is not None:
        runs.append(("solrace", redis[1]))
    rows = []
    try:
        for role, store_url in runs:
            proc, url = _start(role, store_url)
            try:
                result = asyncio.run(measure(url, role == "echo", args.moves, args.clients,
                                             args.seconds, args.window, cycle))
            finally:
                proc.terminate()  # our own child, by its handle
                proc.wait(10)
            name = ("websockets echo (baseline)" if role == "echo" else
                    "solrace (redis store)" if store_url else "solrace (memory store)")
            rows.append((name, result))
    finally:
        if redis is not None:
            redis[0].terminate()
            redis[0].wait(10)
    print(f"{'server':<28} {'p50 µs':>8} {'p99 µs':>8} {'moves/s':>10}")
    for name, r in rows:
        print(f"{name:<28} {r['p50_us']:>8.0f} {r['p99_us']:>8.0f} {r['per_s']:>10.0f}")
    echo, race = rows[0][1], rows[1][1]  # memory store vs echo
    print(f"solrace/echo: p50 x{race['p50_us'] / echo['p50_us']:.2f}, "
          f"p99 x{race['p99_us'] / echo['p99_us']:.2f}, "
          f"throughput x{race['per_s'] / echo['per_s']:.2f}")


if __name__ == "__main__":
    main()
