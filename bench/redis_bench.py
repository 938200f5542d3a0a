"""Moves per second and move→ack latency of solrace on Redis, one node and two, against a
baseline measured in the same run: a bare websockets server doing one Redis EVALSHA per
message (the least any Redis-backed move path must do). Everything on loopback, with a
private redis-server on a free port; bounded: every player plays ``--moves`` moves.

    .venv/bin/python bench/redis_bench.py                # defaults: 16 rooms x 2 players
    .venv/bin/python bench/redis_bench.py --rooms 32 --moves 200

Each room has two players; with two nodes its players are on different nodes (so every
move's event crosses Redis pub/sub to the rival's node). Players are closed loops (send a
move, wait for its ack, send the next), so moves/s is what the system sustains at that
concurrency and the latency is what each player sees. The nodes run with the per-client
rate limit raised (it caps a human at 10 moves/s; here it would cap the benchmark).
Variant: Spanish Patience (all cards face up, so the load generator keeps a real game of
its own cheaply and only sends legal moves).

The machine is shared and noisy, and the load generator, Redis and the nodes share its
cores: compare rows of one run, not runs of different days.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from protocol import PROTOCOL_VERSION, decode_server, encode  # noqa: E402
from protocol import messages as m  # noqa: E402

BASELINE_SCRIPT = "return redis.call('RPUSH', KEYS[1], ARGV[1])"


# ---------------------------------------------------------------------------- servers


async def run_node(redis_url: str, name: str) -> None:
    """A solrace node with the rate limit raised; prints its URL, runs until SIGTERM."""
    from server.app import Server
    from server.config import ONE_HOST, ServerConfig

    config = ServerConfig(**ONE_HOST, port=0, store_url=redis_url or None, node_id=name,
                          rate_burst=10**9, rate_per_s=1e9,
                          allow_volatile_store=True)  # measured without AOF; see --help
    server = Server(config)
    await server.start()
    await _serve_until_term(server.url, server.stop)


async def run_baseline(redis_url: str) -> None:
    """The baseline: per message, one EVALSHA (RPUSH to a per-connection list), then a
    small reply. Prints its URL, runs until SIGTERM."""
    from redis.asyncio import Redis
    from websockets.asyncio.server import ServerConnection, serve

    client = Redis.from_url(redis_url)
    script = client.register_script(BASELINE_SCRIPT)

    async def handler(ws: ServerConnection) -> None:
        key = f"bench:{{{id(ws)}}}:log"
        async for frame in ws:
            seq = await script(keys=[key], args=[frame])
            await ws.send(str(seq).encode())

    server = await serve(handler, "127.0.0.1", 0, compression=None)
    port = server.sockets[0].getsockname()[1]

    async def stop() -> None:
        server.close()
        await server.wait_closed()
        await client.aclose()

    await _serve_until_term(f"ws://127.0.0.1:{port}", stop)


async def _serve_until_term(url: str, stop: object) -> None:
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, done.set)
    print(f"listening on {url}", flush=True)
    await done.wait()
    await stop()  # type: ignore[operator]


class Process:
    """A child process of this script (a node or the baseline), stopped by pid."""

    def __init__(self, *args: str) -> None:
        self.args = args
        self.proc: asyncio.subprocess.Process | None = None
        self.url = ""

    async def start(self) -> Process:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, __file__, *self.args, stdout=asyncio.subprocess.PIPE
        )
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), 20)
        self.url = line.decode().split()[-1]
        assert self.url.startswith("ws://"), line
        return self

    async def stop(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            await asyncio.wait_for(self.proc.wait(), 20)


# ---------------------------------------------------------------------------- load


@dataclass
class Result:
    """One scenario's figures."""

    name: str
    moves: int = 0
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)

    def row(self) -> str:
        lat = sorted(self.latencies)
        p50 = statistics.median(lat) * 1000
        p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000
        rate = self.moves / self.seconds
        return f"| {self.name} | {self.moves} | {rate:,.0f} | {p50:.2f} | {p99:.2f} |"


async def _connect(url: str, name: str):  # type: ignore[no-untyped-def]
    from websockets.asyncio.client import connect

    ws = await connect(url, compression=None, max_size=None)
    await ws.send(encode(m.Hello(version=PROTOCOL_VERSION, name=name, bot=True)))
    while not isinstance(decode_server(await ws.recv()), m.Welcome):  # type: ignore[arg-type]
        pass
    return ws


async def _until(ws, kind: type) -> object:  # type: ignore[no-untyped-def]
    while True:
        message = decode_server(await ws.recv())
        if isinstance(message, kind):
            return message
        if isinstance(message, m.Error):
            raise RuntimeError(f"server error: {message}")


async def _player(ws, view: dict, moves: int, seed: int, result: Result) -> None:  # type: ignore[no-untyped-def,type-arg]
    game = engine.game_from_view(view)  # Spanish: every card face up, so this is the game
    rng = random.Random(seed)
    for seq in range(1, moves + 1):
        legal = game.legal_moves()
        if not legal:
            break
        move = rng.choice(legal)
        started = time.perf_counter()
        await ws.send(encode(m.Move(seq=seq, move=str(move))))
        reply = await _until(ws, m.Accepted | m.Rejected)  # type: ignore[arg-type]
        result.latencies.append(time.perf_counter() - started)
        if not isinstance(reply, m.Accepted):
            break  # won: the race is over for this player
        game.play(move)
        result.moves += 1


async def solrace_load(name: str, urls: list[str], rooms: int, moves: int) -> Result:
    """``rooms`` rooms of two players (on urls[0] and urls[-1]); every player plays."""
    result = Result(name)
    sockets = []
    boards = []
    for r in range(rooms):
        a = await _connect(urls[0], f"a{r}")
        b = await _connect(urls[-1], f"b{r}")
        settings = m.RoomSettings(variant="spanish", countdown_s=0, max_players=2)
        await a.send(encode(m.CreateRoom(settings=settings)))
        joined = await _until(a, m.Joined)
        await b.send(encode(m.Join(code=joined.code)))  # type: ignore[attr-defined]
        await _until(b, m.Joined)
        for ws in (a, b):
            await ws.send(encode(m.Ready()))
        for ws in (a, b):
            started = await _until(ws, m.Started)
            boards.append(started.boards[0].view)  # type: ignore[attr-defined]
            sockets.append(ws)
    began = time.perf_counter()
    pairs = enumerate(zip(sockets, boards, strict=True))
    await asyncio.gather(*(_player(ws, view, moves, i, result) for i, (ws, view) in pairs))
    result.seconds = time.perf_counter() - began
    for ws in sockets:
        await ws.close()
    return result


async def baseline_load(url: str, clients: int, moves: int) -> Result:
    """``clients`` connections, each sending ``moves`` Move frames (closed loop)."""
    from websockets.asyncio.client import connect

    result = Result("baseline: websockets + 1 EVALSHA per message")
    sockets = [await connect(url, compression=None) for _ in range(clients)]

    async def one(ws) -> None:  # type: ignore[no-untyped-def]
        for seq in range(1, moves + 1):
            started = time.perf_counter()
            await ws.send(encode(m.Move(seq=seq, move="12>f")))
            await ws.recv()
            result.latencies.append(time.perf_counter() - started)
            result.moves += 1

    began = time.perf_counter()
    await asyncio.gather(*(one(ws) for ws in sockets))
    result.seconds = time.perf_counter() - began
    for ws in sockets:
        await ws.close()
    return result


async def bench(args: argparse.Namespace) -> None:
    from tests.conftest import RedisProcess, free_port

    workdir = Path(tempfile.mkdtemp(prefix="solrace-bench-"))
    redis = RedisProcess(workdir, free_port()).start()
    results: list[Result] = []
    try:
        for _ in range(args.repeat):
            base = await Process("baseline", "--redis", redis.url).start()
            results.append(await baseline_load(base.url, 2 * args.rooms, args.moves))
            await base.stop()
            for count in (1, 2):
                redis.flush()
                nodes = [await Process("node", "--redis", redis.url, "--name", f"n{i}").start()
                         for i in range(count)]
                label = f"solrace, {count} node{'s' if count > 1 else ''} on Redis"
                urls = [n.url for n in nodes]
                results.append(await solrace_load(label, urls, args.rooms, args.moves))
                for node in nodes:
                    await node.stop()
            if args.memory:
                node = await Process("node", "--redis", "", "--name", "mem").start()
                results.append(await solrace_load("solrace, 1 node in memory", [node.url],
                                                  args.rooms, args.moves))
                await node.stop()
    finally:
        redis.stop()
    print(f"\n{args.rooms} rooms x 2 players, up to {args.moves} moves each, "
          f"{os.cpu_count()} CPUs\n")
    print("| scenario | moves | moves/s | move→ack p50 ms | p99 ms |")
    print("|---|---:|---:|---:|---:|")
    for result in results:
        print(result.row())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd")
    node = sub.add_parser("node", help="(internal) run one node")
    node.add_argument("--redis", required=True)
    node.add_argument("--name", default="n")
    base = sub.add_parser("baseline", help="(internal) run the baseline server")
    base.add_argument("--redis", required=True)
    parser.add_argument("--rooms", type=int, default=16, help="rooms (2 players each)")
    parser.add_argument("--moves", type=int, default=150, help="moves per player")
    parser.add_argument("--repeat", type=int, default=1, help="run every scenario N times")
    parser.add_argument("--memory", action="store_true",
                        help="also run one node on the in-memory store, for reference")
    args = parser.parse_args()
    try:
        import uvloop

        run = uvloop.run
    except ImportError:
        run = asyncio.run
    if args.cmd == "node":
        run(run_node(args.redis, args.name))
    elif args.cmd == "baseline":
        run(run_baseline(args.redis))
    else:
        run(bench(args))


if __name__ == "__main__":
    main()
