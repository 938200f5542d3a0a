"""Failover stalls, measured with real processes on loopback: how long a player cannot
get a move acknowledged when (a) Redis is SIGKILLed and restarted at once, (b) the
player's node is SIGKILLed, (c) its node is drained with SIGTERM; and (d) how long
HAProxy (deploy/haproxy.cfg) takes to mark a killed node DOWN, and (e) a Redis Cluster
master owning the player's room is SIGKILLed (its replica takes over). The figures go into
deploy/README.md ("Runbook").

    .venv/bin/python bench/failover_bench.py --repeat 3
    .venv/bin/python bench/failover_bench.py --json

How: two ``solrace serve`` nodes on a private ``redis-server`` (AOF, appendfsync always),
one player racing on node 1 (the multi-node test harness's ``Racer``: it resumes with its
token and retries moves rejected as ``store_unavailable`` every 50 ms). Each stall is
the time from the fault to the next move ``Accepted``, including the client's own
reaction (resume on the other node right away: a real client adds its backoff). The
baseline measured in the same run is one move's round trip with no fault. Every figure
is a median over ``--repeat`` runs (min and max shown); the machine may be shared and
loaded, so compare with the baseline, not across machines.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import csv
import io
import json
import os
import signal
import statistics
import sys
import tempfile
import time
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from redis.cluster import RedisCluster  # noqa: E402
from websockets.exceptions import ConnectionClosed  # noqa: E402

from tests.conftest import RedisProcess, _start_cluster, free_port  # noqa: E402
from tests.multinode.harness import Node, Racer  # noqa: E402

Scenario = Callable[[Path], Awaitable[dict[str, float]]]


async def _race(redis: RedisProcess, workdir: Path, tag: str) -> tuple[list[Node], Racer]:
    nodes = [Node(redis.url, workdir, f"{tag}-n{i}") for i in (1, 2)]
    await asyncio.gather(*(n.start() for n in nodes))
    racer = Racer(f"{tag}-p", seed=7)
    await racer.open(nodes[0].url)
    await racer.create(variant="brisbane", countdown_s=0, max_players=1)
    await racer.ready_and_start()
    await racer.play(3)
    return nodes, racer


async def _stop_all(nodes: list[Node], redis: RedisProcess) -> None:
    await asyncio.gather(*(n.stop() for n in nodes))
    redis.stop()


async def _round_trip(racer: Racer) -> float:
    started = time.perf_counter()
    await racer.play(1)
    return time.perf_counter() - started


async def redis_restart(workdir: Path) -> dict[str, float]:
    """Redis SIGKILLed and started again at once (same port, AOF): fault → next ack."""
    redis = RedisProcess(workdir, free_port(), ["--appendonly", "yes",
                                                "--appendfsync", "always"]).start()
    nodes, racer = await _race(redis, workdir, "redis")
    try:
        baseline = await _round_trip(racer)
        fault = time.perf_counter()
        redis.stop()  # SIGKILL
        await asyncio.to_thread(redis.start)  # back on the same port, AOF replayed
        restarted = time.perf_counter() - fault
        await racer.play(1, retry_for_s=30)
        stall = time.perf_counter() - fault
        healthy = await _healthy_again(nodes[0])
        return {"baseline_s": baseline, "redis_down_s": restarted, "stall_s": stall,
                "healthz_200_after_s": healthy + restarted}
    finally:
        await racer.close()
        await _stop_all(nodes, redis)


async def _healthy_again(node: Node) -> float:
    started = time.perf_counter()
    deadline = started + 30
    while time.perf_counter() < deadline:  # bounded polling of the node's health
        status, _ = await asyncio.to_thread(node.healthz)
        if status == 200:
            return time.perf_counter() - started
        await asyncio.sleep(0.05)
    raise RuntimeError("/healthz never came back")


async def node_kill(workdir: Path, sig: int = signal.SIGKILL) -> dict[str, float]:
    """The player's node SIGKILLed (or drained: SIGTERM): fault → resumed on the other
    node → next ack."""
    redis = RedisProcess(workdir, free_port()).start()
    tag = "kill" if sig == signal.SIGKILL else "drain"
    nodes, racer = await _race(redis, workdir, tag)
    try:
        baseline = await _round_trip(racer)
        fault = time.perf_counter()
        assert nodes[0].proc is not None
        nodes[0].proc.send_signal(sig)
        try:
            while True:  # read until the node goes (Closing, then the close)
                await racer.recv(wait=15)
        except ConnectionClosed:
            pass
        noticed = time.perf_counter() - fault
        await racer.resume(nodes[1].url)
        await racer.play(1)
        stall = time.perf_counter() - fault
        exited = await asyncio.wait_for(nodes[0].proc.wait(), 15)
        return {"baseline_s": baseline, "noticed_s": noticed, "stall_s": stall,
                "exit_status": float(exited)}
    finally:
        await racer.close()
        await _stop_all(nodes, redis)


async def node_drain(workdir: Path) -> dict[str, float]:
    """SIGTERM: Closing{shutting_down}, resume elsewhere."""
    return await node_kill(workdir, signal.SIGTERM)


async def haproxy_down(workdir: Path) -> dict[str, float]:
    """A node SIGKILLed behind HAProxy: fault → HAProxy's health checks mark it DOWN
    (until then new connections may still be sent to it and are redispatched). The
    kill falls anywhere in the 2 s check interval; then fastinter (0.5 s) applies."""
    redis = RedisProcess(workdir, free_port()).start()
    nodes = [Node(redis.url, workdir, f"lb-n{i}") for i in (1, 2)]
    await asyncio.gather(*(n.start() for n in nodes))
    stats_port, user, password = free_port(), "bench", "bench"
    env = {**os.environ, "SOLRACE_LB_BIND": f"127.0.0.1:{free_port()}",
           "SOLRACE_LB_STATS": f"127.0.0.1:{stats_port}", "SOLRACE_LB_STATS_USER": user,
           "SOLRACE_LB_STATS_PASSWORD": password, "SOLRACE_DNS": f"127.0.0.1:{free_port()}",
           "SOLRACE_NODE1": nodes[0].url.removeprefix("ws://"),
           "SOLRACE_NODE2": nodes[1].url.removeprefix("ws://"),
           "SOLRACE_NODE3": f"127.0.0.1:{free_port()}"}
    proxy = await asyncio.create_subprocess_exec(
        "haproxy", "-db", "-f", str(ROOT / "deploy" / "haproxy.cfg"), env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
    token = base64.b64encode(f"{user}:{password}".encode()).decode()

    def state(name: str) -> str:
        """HAProxy's status of server ``name``, with ``+`` once it has been UP 6 s (its
        health counter is full then: a fresh UP falls at the first failed check)."""
        request = urllib.request.Request(f"http://127.0.0.1:{stats_port}/stats;csv")
        request.add_header("Authorization", f"Basic {token}")
        try:
            with urllib.request.urlopen(request, timeout=2) as resp:
                rows = csv.DictReader(io.StringIO(resp.read().decode().lstrip("# ")))
                row = next((r for r in rows if r["svname"] == name), None)
        except OSError:
            return ""
        if row is None:
            return ""
        steady = row["status"] == "UP" and int(row["lastchg"] or 0) >= 6
        return row["status"] + ("+" if steady else "")

    async def until(name: str, prefix: str) -> float:
        started = time.perf_counter()
        while time.perf_counter() < started + 30:  # bounded polling of HAProxy's view
            if (await asyncio.to_thread(state, name)).startswith(prefix):
                return time.perf_counter() - started
            await asyncio.sleep(0.02)
        raise RuntimeError(f"{name} never {prefix}")

    try:
        await until("node1", "UP+")
        await nodes[0].kill()
        return {"marked_down_s": await until("node1", "DOWN")}
    finally:
        proxy.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proxy.wait(), 10)
        await _stop_all(nodes, redis)


async def cluster_master_kill(workdir: Path) -> dict[str, float]:
    """Redis Cluster (3 masters + 3 replicas, cluster-node-timeout 2 s): the master
    owning the player's room SIGKILLed; fault → its replica promoted → next ack."""
    cluster = await asyncio.to_thread(_start_cluster, workdir, 1, CLUSTER_NODE_TIMEOUT_MS)
    nodes = [Node(cluster.url, workdir, f"cl-n{i}") for i in (1, 2)]
    racer = Racer("cl-p", seed=7)
    try:
        await asyncio.gather(*(n.start() for n in nodes))
        await racer.open(nodes[0].url)
        joined = await racer.create(variant="brisbane", countdown_s=0, max_players=1)
        await racer.ready_and_start()
        await racer.play(3)
        baseline = await _round_trip(racer)
        client = RedisCluster(host="127.0.0.1", port=cluster.nodes[0].port)
        owner = client.get_node_from_key(f"solrace:{{{joined.code}}}:room")
        client.close()
        victim = next(n for n in cluster.nodes if n.port == owner.port)
        fault = time.perf_counter()
        victim.stop()  # SIGKILL
        await racer.play(1, retry_for_s=60)
        return {"baseline_s": baseline, "stall_s": time.perf_counter() - fault,
                "retryable_rejections": float(len(racer.retryable_rejections))}
    finally:
        await racer.close()
        await asyncio.gather(*(n.stop() for n in nodes))
        cluster.stop()


SCENARIOS: dict[str, Scenario] = {
    "redis_restart": redis_restart,
    "node_kill": node_kill,
    "node_drain": node_drain,
    "haproxy_marks_down": haproxy_down,
    "cluster_master_kill": cluster_master_kill,
}
CLUSTER_NODE_TIMEOUT_MS = 2000  # tests/conftest.py's; Redis' default is 15000


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--only", choices=sorted(SCENARIOS), action="append",
                        help="run only this scenario (repeatable)")
    args = parser.parse_args()
    figures: dict[str, dict[str, list[float]]] = {}
    for name, scenario in SCENARIOS.items():
        if args.only and name not in args.only:
            continue
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory(prefix="solrace-failover-") as tmp:
                for key, value in (await scenario(Path(tmp))).items():
                    figures.setdefault(name, {}).setdefault(key, []).append(value)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"failover stalls, {args.repeat} runs each, median (min..max), seconds; "
          f"cpus={os.cpu_count()} load={os.getloadavg()[0]:.1f}")
    print("| scenario | figure | median | min..max |\n|---|---|---|---|")
    for name, values in figures.items():
        for key, series in values.items():
            print(f"| {name} | {key} | {statistics.median(series):.3f} | "
                  f"{min(series):.3f}..{max(series):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
