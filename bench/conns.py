"""Idle connections: the server's resident memory per connection and the longest stall
a connected client sees while thousands connect and sit idle.

Connections are ``bench/rawws.py`` clients spread over loopback source addresses
127.0.0.2 … (each address has its own ephemeral ports). On solrace each says hello and
stays (a connection in no room); on the echo baseline each only connects. RSS per
connection is (RSS at N - RSS before the first) / N, from ``/proc/PID/status``.

The stall: a probe connection sends ``Ping`` every ``PROBE_INTERVAL_S`` from before the
first connection until the end and keeps its largest ping → pong time. A full garbage
collection of a process holding 10,000 connections stops its event loop, so the probe's
worst round trip bounds the longest GC pause from above (it also includes the load
generator's own pauses; the baseline in the same run shows that floor). A server metric
named like ``*gc*pause*`` on ``/metrics``, when the server has one, is read as well.

The GC pause itself is timed inside the server process by ``bench/gcwatch`` (a
``sitecustomize`` hooking ``gc.callbacks``, on the server's ``PYTHONPATH`` only in
benchmarks): the longest collection while the connections opened and sat idle.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import urllib.request
from collections.abc import Callable

from protocol import PROTOCOL_VERSION, decode_server, encode
from protocol import messages as m

from .cpu import rss_bytes
from .players import Player
from .rawws import RawClient, source_address

# (wall, CPU) seconds of each collection so far, by GC generation
GcPauses = Callable[[], dict[int, list[tuple[float, float]]]]
CONNECT_BATCH = 200  # connections opened at once
PROBE_INTERVAL_S = 0.01


class Probe:
    """A full client pinging the server on a fixed interval; the worst round trip."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.worst = 0.0
        self.task: asyncio.Task[None] | None = None

    async def run(self) -> None:
        ws = await Player.connect(self.url)
        try:
            nonce = 0
            while True:
                nonce += 1
                started = time.perf_counter()
                await ws.send(encode(m.Ping(nonce=nonce)))
                while True:
                    reply = decode_server(await ws.recv())
                    if isinstance(reply, m.Pong) and reply.nonce == nonce:
                        break
                self.worst = max(self.worst, time.perf_counter() - started)
                await asyncio.sleep(PROBE_INTERVAL_S)  # pacing, not synchronisation
        finally:
            await ws.close()

    def __enter__(self) -> Probe:
        self.task = asyncio.get_running_loop().create_task(self.run())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.task is not None
        self.task.cancel()


def gc_pause_metric(url: str) -> str:
    """The server's GC-pause metric lines from ``/metrics``, or a note that it has none."""
    http = url.replace("ws://", "http://") + "/metrics"
    try:
        with urllib.request.urlopen(http, timeout=5) as response:  # loopback only
            text = response.read().decode()
    except OSError as exc:
        return f"no /metrics ({exc})"
    lines = [line for line in text.splitlines()
             if "gc" in line.lower() and "pause" in line.lower() and not line.startswith("#")]
    return "; ".join(lines[:6]) if lines else "the server exports no GC-pause metric"


async def idle_connections(url: str, port: int, solrace: bool, pid: int,
                           counts: list[int], hold_s: float,
                           gc_pauses: GcPauses) -> dict[str, float | str]:
    """Open connections up to each of ``counts`` (ascending), holding ``hold_s`` at each;
    RSS per connection at each count, the longest GC pause of the server while they
    connected and sat idle (ms, and how many full collections), the probe's worst round
    trip (ms), and the server's own GC metric if it has one."""
    setup = [encode(m.Hello(version=PROTOCOL_VERSION, name="idle", bot=True))] if solrace else []
    result: dict[str, float | str] = {}
    clients: list[RawClient] = []
    rss_before = rss_bytes(pid)
    seen = {gen: len(p) for gen, p in gc_pauses().items()}  # collections before the window
    try:
        with Probe(url) as probe:
            for target in counts:
                while len(clients) < target:
                    batch = range(len(clients), min(target, len(clients) + CONNECT_BATCH))
                    clients += await asyncio.gather(*(
                        RawClient.open(port, setup, nonce=i + 1, source=source_address(i))
                        for i in batch))
                await asyncio.sleep(hold_s)  # idle time at this count: timers, GC
                result[f"rss_kib_per_conn_{target}"] = (rss_bytes(pid) - rss_before) / 1024 / target
            result["probe_worst_ms"] = probe.worst * 1e3
        pauses = {gen: p[seen[gen]:] for gen, p in gc_pauses().items()}
        every = [(wall, cpu, gen) for gen, p in pauses.items() for wall, cpu in p]
        worst = max(every, default=(0.0, 0.0, -1))
        result["gc_worst_ms"] = worst[0] * 1e3
        result["gc_worst_generation"] = float(worst[2])
        result["gc_collections"] = float(len(every))
        result["gc_worst_cpu_ms"] = max((cpu for _, cpu, _ in every), default=0.0) * 1e3
        result["gc_full_collections"] = float(len(pauses[2]))
        result["gc_metric"] = gc_pause_metric(url) if solrace else ""
    finally:
        for c in clients:
            with contextlib.suppress(Exception):
                c.close()
    return result
