"""The body of deploy/check_haproxy.sh (see there): HAProxy with deploy/haproxy.cfg in
front of two real ``solrace serve`` nodes on a private Redis, all on loopback."""

from __future__ import annotations

import asyncio
import base64
import csv
import io
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from websockets.exceptions import ConnectionClosed  # noqa: E402

from protocol import messages as m  # noqa: E402
from tests.conftest import RedisProcess, free_port  # noqa: E402
from tests.multinode.harness import Node, Racer, Watcher, audit  # noqa: E402

CONFIG = ROOT / "deploy" / "haproxy.cfg"
STATS_USER, STATS_PASSWORD = "check", secrets.token_urlsafe(12)


def step(text: str) -> None:
    print(f"check_haproxy: {text}", flush=True)


def server_states(stats_port: int) -> dict[str, str]:
    """HAProxy's view of the backend servers: name → UP/DOWN/..."""
    request = urllib.request.Request(f"http://127.0.0.1:{stats_port}/stats;csv")
    token = base64.b64encode(f"{STATS_USER}:{STATS_PASSWORD}".encode()).decode()
    request.add_header("Authorization", f"Basic {token}")
    with urllib.request.urlopen(request, timeout=2) as resp:
        text = resp.read().decode().lstrip("# ")
    return {row["svname"]: row["status"] for row in csv.DictReader(io.StringIO(text))
            if row["pxname"] == "nodes" and row["svname"] not in ("BACKEND", "FRONTEND")}


def wait_for_states(stats_port: int, wanted: dict[str, str], timeout_s: float = 20) -> None:
    deadline = time.monotonic() + timeout_s
    states: dict[str, str] = {}
    while time.monotonic() < deadline:  # bounded polling of HAProxy's health checks
        try:
            states = server_states(stats_port)
        except OSError:
            states = {}
        if all(states.get(k, "").startswith(v) for k, v in wanted.items()):
            return
        time.sleep(0.2)
    raise SystemExit(f"check_haproxy: FAIL: servers {states}, wanted {wanted}")


async def race_through(lb: str, nodes: dict[str, Node]) -> str:
    p1, p2, spectator = Racer("p1", 21), Racer("p2", 22), Watcher("spec")
    await p1.open(lb)
    code = (await p1.create(variant="brisbane", countdown_s=0, max_players=2)).code
    await p2.open(lb)
    await p2.join(code)
    assert p1.welcome and p2.welcome
    n1, n2 = p1.welcome.node, p2.welcome.node
    assert n1 != n2, f"leastconn put both players on {n1}"
    step(f"p1 is on {n1}, p2 on {n2} (through HAProxy)")
    for _ in range(10):  # the spectator must survive p1's node: land it on p2's
        await spectator.open(lb)
        assert spectator.welcome
        if spectator.welcome.node == n2:
            break
        await spectator.close()
    else:
        raise SystemExit("check_haproxy: FAIL: the spectator never reached the other node")
    await spectator.send(m.Join(code=code, role="spectator"))
    await spectator.expect(m.Joined)
    watching = asyncio.create_task(spectator.watch_until_results())
    await asyncio.gather(p1.ready_and_start(), p2.ready_and_start())
    await asyncio.gather(p1.play(6), p2.play(6))
    before = len(p1.acked)
    await nodes[n1].kill()
    step(f"killed {n1} (SIGKILL) mid-race after {before} acknowledged moves of p1")
    try:
        await p1.play(5)
        raise SystemExit("check_haproxy: FAIL: p1 kept playing on a dead node")
    except ConnectionClosed:
        pass
    await p1.resume(lb)
    step(f"p1 resumed through HAProxy at move {p1.seq}")
    await asyncio.gather(p1.play(6), p2.play(6))
    r1, r2 = await asyncio.gather(p1.resign_and_results(), p2.resign_and_results())
    await asyncio.wait_for(watching, 20)
    assert r1 == r2 == spectator.results
    checked = audit(r1, [p1, p2])
    logs = {log.seat: log.moves for log in r1.logs}
    assert spectator.moves == logs, "the spectator missed moves"
    return f"{checked} acknowledged moves all in the results; the spectator saw every board"


def start_haproxy(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """Validate the config, then run HAProxy in the foreground (``-db``) with it."""
    subprocess.run(["haproxy", "-c", "-f", str(CONFIG)], env=env, check=True)
    step("haproxy -c: configuration valid")
    with log.open("wb") as out:
        return subprocess.Popen(["haproxy", "-db", "-f", str(CONFIG)], env=env,
                                stdout=out, stderr=subprocess.STDOUT)


def check_balancer(stats_port: int, lb_port: int) -> None:
    """Health checks see the two nodes UP and the empty address DOWN; /healthz passes."""
    wait_for_states(stats_port, {"node1": "UP", "node2": "UP", "node3": "DOWN"})
    step("health checks: node1 UP, node2 UP, node3 (nothing there) DOWN")
    with urllib.request.urlopen(f"http://127.0.0.1:{lb_port}/healthz", timeout=5) as resp:
        assert resp.status == 200
    step("/healthz through HAProxy: 200")


async def main() -> int:
    workdir = Path(tempfile.mkdtemp(prefix="solrace-haproxy-"))
    redis = RedisProcess(workdir, free_port()).start()
    nodes = {f"n{i}": Node(redis.url, workdir, f"n{i}") for i in (1, 2)}
    haproxy: subprocess.Popen[bytes] | None = None
    try:
        await asyncio.gather(*(node.start() for node in nodes.values()))
        lb_port, stats_port, dead_port = free_port(), free_port(), free_port()
        env = {
            **os.environ,
            "SOLRACE_LB_BIND": f"127.0.0.1:{lb_port}",
            "SOLRACE_LB_STATS": f"127.0.0.1:{stats_port}",
            "SOLRACE_LB_STATS_USER": STATS_USER,
            "SOLRACE_LB_STATS_PASSWORD": STATS_PASSWORD,
            # the nodes are given as addresses here: nothing to resolve (the DNS side
            # is tests/ops/test_topology.py)
            "SOLRACE_DNS": f"127.0.0.1:{free_port()}",
            "SOLRACE_NODE1": nodes["n1"].url.removeprefix("ws://"),
            "SOLRACE_NODE2": nodes["n2"].url.removeprefix("ws://"),
            # nothing listens there: the health check must keep traffic away from it
            "SOLRACE_NODE3": f"127.0.0.1:{dead_port}",
        }
        haproxy = await asyncio.to_thread(start_haproxy, env, workdir / "haproxy.log")
        await asyncio.to_thread(check_balancer, stats_port, lb_port)
        summary = await race_through(f"ws://127.0.0.1:{lb_port}", nodes)
        step(f"race through HAProxy: {summary}")
        step("OK")
        return 0
    except BaseException:
        log = workdir / "haproxy.log"
        if log.exists():
            print(log.read_text(errors="replace")[-3000:], file=sys.stderr)
        raise
    finally:
        if haproxy is not None and haproxy.poll() is None:
            os.kill(haproxy.pid, signal.SIGTERM)
            haproxy.wait(timeout=10)
        await asyncio.gather(*(node.stop() for node in nodes.values()))
        redis.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
