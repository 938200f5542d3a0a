"""The compose topology as real processes (this machine has no Docker daemon): Redis,
two ``solrace serve`` nodes on their own loopback addresses, HAProxy with
deploy/haproxy.cfg, and a DNS server that names the nodes (as Docker's DNS does).

The point: a node that comes back on a NEW address (a recreated container) is found by
HAProxy's resolvers and put back in rotation without restarting or reloading HAProxy.
Also: the stats page refuses requests without its password, and the nodes get the
forwarded headers. Deselect with ``-m "not ops"``.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
import urllib.error
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from protocol import PROTOCOL_VERSION, decode_server, encode
from protocol import messages as m

from ..conftest import RedisProcess
from .procs import Dns, HAProxy, Serve, free_port_on, wait_for

pytestmark = pytest.mark.ops

ADDR = {"node1": "127.0.0.2", "node2": "127.0.0.3", "node1-moved": "127.0.0.4"}


async def welcome_through(lb: str) -> tuple[ClientConnection, str]:
    """Open a websocket through the balancer, say hello; (the open socket, node id).
    It sends forged forwarding headers: HAProxy must replace them."""
    ws = await connect(lb, open_timeout=5, compression=None, additional_headers={
        "X-Request-ID": "forged-id", "X-Forwarded-For": "192.0.2.1"})
    await ws.send(encode(m.Hello(version=PROTOCOL_VERSION, name="ops")))
    welcome = decode_server(await asyncio.wait_for(ws.recv(), 5))
    assert isinstance(welcome, m.Welcome), welcome
    return ws, welcome.node


def test_a_node_back_on_a_new_address_rejoins_without_a_proxy_restart(
    tmp_path: Path, redis_server: Callable[[], RedisProcess], dns: Dns
) -> None:
    redis = redis_server()
    port1 = free_port_on(ADDR["node1"], ADDR["node1-moved"])
    port2 = free_port_on(ADDR["node2"])
    dns.set("node1.solrace.test", ADDR["node1"])
    dns.set("node2.solrace.test", ADDR["node2"])  # node3: not in DNS (NXDOMAIN)
    debug = ("--log-level", "DEBUG", "--log-format", "json")
    nodes = [Serve(tmp_path, "n1", ADDR["node1"], port1, redis.url, debug),
             Serve(tmp_path, "n2", ADDR["node2"], port2, redis.url, debug)]
    lb_port, stats_port = free_port_on("127.0.0.1"), free_port_on("127.0.0.1")
    proxy = HAProxy(tmp_path, {
        "SOLRACE_LB_BIND": f"127.0.0.1:{lb_port}",
        "SOLRACE_LB_STATS": f"127.0.0.1:{stats_port}",
        "SOLRACE_DNS": f"127.0.0.1:{dns.port}",
        "SOLRACE_NODE1": f"node1.solrace.test:{port1}",
        "SOLRACE_NODE2": f"node2.solrace.test:{port2}",
        "SOLRACE_NODE3": f"node3.solrace.test:{port1}",
    })
    try:
        checked = proxy.check()
        assert checked.returncode == 0, checked.stderr
        for node in nodes:
            node.start()
        proxy.start()
        wait_for("node1 and node2 UP", lambda: (s := proxy.states()).get("node1") == "UP"
                 and s.get("node2") == "UP" and s)
        assert proxy.states()["node3"].startswith("MAINT")  # never resolved: no traffic

        with pytest.raises(urllib.error.HTTPError) as refused:
            proxy.servers(auth=False)
        assert refused.value.code == 401

        # node1 dies; it comes back as a new process on a new address, same name
        nodes[0].stop(signal.SIGKILL)
        wait_for("node1 DOWN", lambda: proxy.states().get("node1", "").startswith("DOWN"))
        moved = Serve(tmp_path, "n1-moved", ADDR["node1-moved"], port1, redis.url, debug)
        moved.start()
        nodes.append(moved)
        dns.set("node1.solrace.test", ADDR["node1-moved"])
        changed = time.monotonic()
        # UP means a health check passed, and the old address has nothing listening
        wait_for("node1 UP at its new address", lambda: proxy.states().get("node1") == "UP")
        rejoined_s = time.monotonic() - changed
        assert proxy.proc is not None and proxy.proc.poll() is None  # never restarted

        seen = asyncio.run(_nodes_reached(f"ws://127.0.0.1:{lb_port}", 4))
        assert "n1-moved" in seen and "n2" in seen, seen
        def closed_lines() -> list[dict[str, Any]] | None:
            found = [line for node in nodes for line in _json_lines(node.log())
                     if line["event"] == "connection closed"]
            return found if len(found) >= 4 else None

        closed = wait_for("the nodes to log the 4 closed connections", closed_lines)
        # every connection went through HAProxy, which replaced the forged headers
        assert len(closed) == 4, closed
        ids = {line["request_id"] for line in closed}
        assert len(ids) == 4 and all(len(i) == 36 and i.count("-") == 4 for i in ids), ids
        assert {line["peer"] for line in closed} == {"127.0.0.1"}
        print(f"node1 back in rotation {rejoined_s:.1f} s after its DNS record changed")
    except BaseException:
        print(proxy.log()[-3000:])
        for node in nodes:
            print(node.name, node.log()[-2000:])
        raise
    finally:
        proxy.stop()
        for node in nodes:
            node.stop()


def _json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


async def _nodes_reached(lb: str, count: int) -> list[str]:
    """Hold ``count`` connections through the balancer at once: leastconn spreads them
    over every UP node. The node ids they landed on."""
    sockets: list[ClientConnection] = []
    names: list[str] = []
    try:
        for _ in range(count):
            ws, node = await welcome_through(lb)
            sockets.append(ws)
            names.append(node)
    finally:
        for ws in sockets:
            await ws.close()
    return names
