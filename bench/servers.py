"""The servers a comparison runs, each its own child process on 127.0.0.1, stopped by its
pid: solrace as users run it (``solrace serve``: the benchmark treats it as a black box),
the bare baselines of ``bench/baselines.py``, and a private ``redis-server``.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 30.0  # a node on a loaded 2-core machine can take seconds to import
STOP_TIMEOUT_S = 20.0  # solrace's graceful shutdown waits up to 5 s for its writers
RATE = "1000000000"  # the per-connection rate limit, raised: it caps humans, not benchmarks


class Child:
    """A server process that prints a line ending in its ``ws://`` URL once ready."""

    def __init__(self, name: str, argv: list[str]) -> None:
        self.name = name
        self.argv = argv
        self.proc: asyncio.subprocess.Process | None = None
        self.url = ""
        self.port = 0
        self.gc_log = Path(tempfile.mkstemp(prefix="solrace-bench-gc-")[1])

    def gc_pauses(self) -> dict[int, list[tuple[float, float]]]:
        """Every garbage collection of the process so far, by generation: (wall seconds,
        CPU seconds) each (recorded by ``bench/gcwatch/sitecustomize.py``)."""
        pauses: dict[int, list[tuple[float, float]]] = {0: [], 1: [], 2: []}
        for line in self.gc_log.read_text().splitlines():
            generation, wall, cpu = line.split()
            pauses[int(generation)].append((float(wall), float(cpu)))
        return pauses

    @property
    def pid(self) -> int:
        """The process id (of the server itself, even under a profiler: see ``solrace``)."""
        assert self.proc is not None
        return self.proc.pid

    async def start(self) -> Child:
        """Start it and wait (bounded) for its URL line."""
        env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'bench' / 'gcwatch'}",
               "PYTHONUNBUFFERED": "1", "BENCH_GC_LOG": str(self.gc_log)}
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv, stdout=asyncio.subprocess.PIPE, cwd=ROOT, env=env
        )
        assert self.proc.stdout is not None
        while True:
            line = await asyncio.wait_for(self.proc.stdout.readline(), START_TIMEOUT_S)
            if not line:
                raise RuntimeError(f"{self.name} exited before listening")
            text = line.decode().strip()
            if "ws://" in text:
                self.url = text.split()[-1]
                self.port = int(self.url.rsplit(":", 1)[1])
                return self

    async def stop(self) -> None:
        """SIGTERM by pid, then wait (SIGKILL if it does not exit in time)."""
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), STOP_TIMEOUT_S)
        except TimeoutError:
            proc.kill()
            await proc.wait()
        self.gc_log.unlink(missing_ok=True)


def solrace(redis_url: str = "") -> Child:
    """``solrace serve`` on a free port, rate limit raised, on Redis when ``redis_url``."""
    argv = [sys.executable, "-m", "client_cli.main", "serve", "--port", "0",
            "--rate", RATE, "--burst", RATE, "--one-host"]  # every bench client is this host
    if redis_url:
        argv += ["--redis", redis_url]
    return Child("solrace" + (" (redis)" if redis_url else ""), argv)


def baseline(kind: str, redis_url: str = "") -> Child:
    """One of ``bench/baselines.py``'s servers."""
    argv = [sys.executable, "-m", "bench.baselines", kind]
    if redis_url:
        argv += ["--redis", redis_url]
    return Child(kind, argv)


class Redis:
    """A private redis-server (no persistence) on a free loopback port, never 6379."""

    def __init__(self) -> None:
        sys.path.insert(0, str(ROOT))
        from tests.conftest import RedisProcess, free_port

        self.process = RedisProcess(Path(tempfile.mkdtemp(prefix="solrace-bench-")), free_port())

    def __enter__(self) -> Redis:
        self.process.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.stop()

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:PORT/0``."""
        return self.process.url

    @property
    def pid(self) -> int:
        """redis-server's pid (its CPU is read too: per move, Redis works as well)."""
        pid = self.process.pid
        assert pid is not None
        return pid

    def flush(self) -> None:
        """Empty it between runs, so every run starts from the same state."""
        self.process.flush()

    def counters(self) -> tuple[int, int, int]:
        """(script calls: EVALSHA/EVAL, commands run in all: those inside scripts
        included, read events: one per burst of requests a client's socket delivered)
        since start, from ``INFO commandstats`` and ``INFO stats``."""
        calls = {part.split(":", 1)[0]: int(part.split("calls=", 1)[1].split(",", 1)[0])
                 for part in self.process.command("INFO", "commandstats").decode().split()
                 if part.startswith("cmdstat_")}
        scripts = sum(calls.get(f"cmdstat_{c}", 0) for c in ("evalsha", "eval", "evalsha_ro"))
        reads = 0
        for line in self.process.command("INFO", "stats").decode().splitlines():
            if line.startswith("total_reads_processed:"):
                reads = int(line.split(":", 1)[1])
        return scripts, sum(calls.values()), reads
