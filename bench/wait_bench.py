"""Cost of ``--redis-wait-replicas 1``: append_move latency on a private master + one
replica (no AOF), with and without WAIT, measured in the same run.

    .venv/bin/python bench/wait_bench.py [--moves 2000]

Starts two redis-servers on free loopback ports and stops them (by pid) at the end.
One writer, one move in flight: the figure is the per-move round trip the store adds.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server.store import LogEntry, SeatRecord
from server.store.records import RoomRecord
from server.store.redis import RedisStore


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _redis(port: int, workdir: str, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", workdir, *extra], stdout=subprocess.DEVNULL)


def _wait_synced(port: int) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:  # bounded readiness polling
        out = subprocess.run(["redis-cli", "-p", str(port), "INFO", "replication"],
                             capture_output=True, text=True).stdout
        if "master_link_status:up" in out:
            return
        time.sleep(0.05)
    raise SystemExit("the replica did not sync")


async def _measure(url: str, wait: int, moves: int, code: str) -> list[float]:
    store = RedisStore.from_url(url, wait_replicas=wait)
    try:
        await store.create_room(RoomRecord(code=code, settings={}, seed=1, salt="0",
                                           commitment="c"))
        await store.add_seat(code, SeatRecord(seat=0, name="p"), 1)
        out = []
        for seq in range(1, moves + 1):
            t0 = time.perf_counter()
            await store.append_move(code, 1, 1, seq, LogEntry("1>2", seq), moves=seq)
            out.append((time.perf_counter() - t0) * 1e6)
        return out
    finally:
        await store.close()


def main() -> None:
    """Measure both modes, alternating, and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=2000)
    args = parser.parse_args()
    master_port, replica_port = _free_port(), _free_port()
    with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
        master = _redis(master_port, d1)
        replica = _redis(replica_port, d2, "--replicaof", "127.0.0.1", str(master_port))
        try:
            _wait_synced(replica_port)
            url = f"redis://127.0.0.1:{master_port}/0"
            rows: dict[int, list[float]] = {0: [], 1: []}
            for round_ in range(2):  # alternate, so load changes hit both alike
                for wait in (0, 1):
                    rows[wait] += asyncio.run(
                        _measure(url, wait, args.moves, f"B{round_}{wait}"))
            print("append_move          p50 µs   p99 µs")
            for wait, label in ((0, "no WAIT"), (1, "WAIT 1")):
                values = sorted(rows[wait])
                p50 = statistics.median(values)
                p99 = values[int(len(values) * 0.99) - 1]
                print(f"{label:<18} {p50:8.0f} {p99:8.0f}")
        finally:
            for proc in (replica, master):
                proc.terminate()
                proc.wait()


if __name__ == "__main__":
    main()
