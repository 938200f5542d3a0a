"""Shared fixtures: private Redis servers (standalone and a 3-master cluster) that the
tests start themselves on free loopback ports and stop by pid. Never the machine's 6379.

- ``redis_server``: a factory; ``redis_server()`` starts a fresh standalone server and
  returns a ``RedisProcess`` (``.url``, ``.stop()``, ``.start()``, ``.restart()``).
  Everything it started is stopped at the end of the test.
- ``shared_redis``: one standalone server for the whole session (flushed before each test
  that asks for ``redis_url``); cheaper when a test does not stop or restart Redis.
- ``redis_cluster``: a 3-master Redis Cluster for the session (``.url`` ends in
  ``?cluster=1``), flushed before each test that uses it.
- ``redis_cluster_with_replicas``: 3 masters + 3 replicas, for one test (failover tests).
- ``store_url``: parametrized over the backends ("memory" → ``""``, "redis" → a private
  standalone server) for suites that should pass on both.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

READY_TIMEOUT_S = 10.0


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port(with_bus: bool = False) -> int:
    """A loopback TCP port that is free now (and, ``with_bus``, port + 10000 too, for a
    cluster node's bus). Never 6379."""
    rng = random.Random()
    for _ in range(200):
        port = rng.randint(20000, 39999)
        if port != 6379 and _port_free(port) and (not with_bus or _port_free(port + 10000)):
            return port
    raise RuntimeError("no free loopback port found")


def _redis_command(port: int, *args: str, timeout: float = 0.5) -> bytes:
    """Send one command (RESP) and return the raw reply bytes (one-line or bulk replies)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        payload = "".join(f"${len(a)}\r\n{a}\r\n" for a in args)
        sock.sendall(f"*{len(args)}\r\n{payload}".encode())
        reply = b""
        while True:
            chunk = sock.recv(65536)
            reply += chunk
            if not chunk:
                return reply
            head, sep, _ = reply.partition(b"\r\n")
            if not sep:
                continue
            if not head.startswith(b"$") or int(head[1:]) < 0:
                return reply  # a one-line reply (+OK, :1, -ERR ...) or a nil
            if len(reply) >= len(head) + 2 + int(head[1:]) + 2:
                return reply  # a complete bulk string


class RedisProcess:
    """A private ``redis-server`` on a loopback port, started and stopped by this test
    run. ``stop()`` kills it (SIGKILL by default: an outage, not a shutdown);
    ``start()`` brings it back on the same port (empty: persistence is off)."""

    def __init__(self, workdir: Path, port: int, extra: list[str] | None = None) -> None:
        self.port = port
        self.dir = workdir
        self.extra = extra or []
        self.proc: subprocess.Popen[bytes] | None = None
        self.logfile = workdir / f"redis-{port}.log"

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:PORT/0``."""
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pid(self) -> int | None:
        """The server's pid while it runs."""
        return self.proc.pid if self.proc and self.proc.poll() is None else None

    def start(self) -> RedisProcess:
        """Start the server and wait (bounded) until it answers PING."""
        if self.pid is not None:
            return self
        redis = shutil.which("redis-server")
        if redis is None:
            pytest.fail("redis-server is not on PATH: install Debian's redis-server package")
        cmd = [
            redis, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
            # AOF on, as in production (solrace refuses a volatile Redis); a test that
            # wants a volatile one passes "--appendonly", "no" in ``extra``
            "--appendonly", "yes", "--appendfsync", "everysec",
            "--dir", str(self.dir), "--daemonize", "no",
            "--protected-mode", "yes", *self.extra,
        ]
        with open(self.logfile, "ab") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:  # readiness polling, bounded by the deadline
            if self.proc.poll() is not None:
                raise RuntimeError(f"redis-server exited: {self.logfile.read_text()[-2000:]}")
            with contextlib.suppress(OSError):
                if _redis_command(self.port, "PING").startswith(b"+PONG"):
                    return self
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server on {self.port} did not answer PING in time")
            time.sleep(0.02)

    def stop(self, sig: int = signal.SIGKILL) -> None:
        """Stop the server by its pid and wait for it to exit."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            os.kill(self.proc.pid, sig)
            self.proc.wait(timeout=10)
        self.proc = None

    def restart(self) -> None:
        """Stop, then start again on the same port."""
        self.stop()
        self.start()

    def command(self, *args: str) -> bytes:
        """One command's raw reply (for checks like ``TTL`` or ``CLUSTER INFO``)."""
        return _redis_command(self.port, *args, timeout=2.0)

    def flush(self) -> None:
        """FLUSHALL (keeps the server running)."""
        self.command("FLUSHALL")


class RedisClusterProcesses:
    """Three cluster-enabled masters joined with ``redis-cli --cluster create``."""

    def __init__(self, nodes: list[RedisProcess]) -> None:
        self.nodes = nodes

    @property
    def url(self) -> str:
        """A cluster URL (first node; the client discovers the rest)."""
        return f"redis://127.0.0.1:{self.nodes[0].port}/0?cluster=1"

    def flush(self) -> None:
        """FLUSHALL on every master."""
        for node in self.nodes:
            node.flush()

    def stop(self) -> None:
        """Stop every node by pid."""
        for node in self.nodes:
            node.stop()


def _start_cluster(
    workdir: Path, replicas: int = 0, node_timeout_ms: int = 2000
) -> RedisClusterProcesses:
    """Three masters (and ``replicas`` replicas of each), joined into one cluster."""
    nodes = []
    for i in range(3 * (1 + replicas)):
        port = free_port(with_bus=True)
        node_dir = workdir / f"node{i}"
        node_dir.mkdir()
        extra = [
            "--cluster-enabled", "yes", "--cluster-config-file", f"nodes-{port}.conf",
            "--cluster-node-timeout", str(node_timeout_ms),
        ]
        nodes.append(RedisProcess(node_dir, port, extra).start())
    cluster = RedisClusterProcesses(nodes)
    try:
        addresses = [f"127.0.0.1:{n.port}" for n in nodes]
        subprocess.run(
            ["redis-cli", "--cluster", "create", *addresses, "--cluster-replicas",
             str(replicas), "--cluster-yes"],
            check=True, capture_output=True, timeout=30,
        )
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not all(_cluster_ready(n) for n in nodes):
            if time.monotonic() > deadline:  # bounded readiness polling
                raise RuntimeError("redis cluster did not reach cluster_state:ok in time")
            time.sleep(0.05)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _cluster_ready(node: RedisProcess) -> bool:
    """The node sees the cluster ok and, if it is a replica, is in sync with its master."""
    if b"cluster_state:ok" not in node.command("CLUSTER", "INFO"):
        return False
    replication = node.command("INFO", "replication")
    return b"role:master" in replication or b"master_link_status:up" in replication


@pytest.fixture
def redis_cluster_with_replicas(tmp_path: Path) -> Iterator[RedisClusterProcesses]:
    """A private cluster of 3 masters with one replica each (fast failure detection: 1 s
    node timeout), for this test only (tests kill its nodes)."""
    cluster = _start_cluster(tmp_path, replicas=1, node_timeout_ms=1000)
    yield cluster
    cluster.stop()


@pytest.fixture
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., RedisProcess]]:
    """Factory: ``redis_server()`` starts a private standalone Redis for this test."""
    started: list[RedisProcess] = []

    def start(*extra: str) -> RedisProcess:
        workdir = tmp_path_factory.mktemp("redis")
        server = RedisProcess(workdir, free_port(), list(extra)).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="session")
def shared_redis() -> Iterator[RedisProcess]:
    """One private standalone Redis for the whole session."""
    workdir = Path(tempfile.mkdtemp(prefix="solrace-redis-"))
    server = RedisProcess(workdir, free_port()).start()
    yield server
    server.stop()
    shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture
def redis_url(shared_redis: RedisProcess) -> str:
    """The session's private Redis, emptied for this test."""
    shared_redis.flush()
    return shared_redis.url


@pytest.fixture(scope="session")
def _cluster_session() -> Iterator[RedisClusterProcesses]:
    workdir = Path(tempfile.mkdtemp(prefix="solrace-cluster-"))
    cluster = _start_cluster(workdir)
    yield cluster
    cluster.stop()
    shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture
def redis_cluster(_cluster_session: RedisClusterProcesses) -> RedisClusterProcesses:
    """A private 3-master Redis Cluster (shared by the session, emptied for this test)."""
    _cluster_session.flush()
    return _cluster_session


@pytest.fixture(params=["memory", "redis"])
def store_url(request: pytest.FixtureRequest) -> str:
    """A store URL for each backend: ``""`` (in-memory) and a private Redis."""
    if request.param == "memory":
        return ""
    url: str = request.getfixturevalue("redis_url")
    return url


# --------------------------------------------------------------------------- hangs
# pytest-timeout (pyproject.toml's ``timeout``) fails a stuck test with every *thread's*
# stack; a stuck asyncio test shows only an idle event loop there. So, shortly before
# that limit, this watchdog prints every pending asyncio *task's* stack: which await
# never returned. Diagnostics only: it changes nothing about the test.
TASK_DUMP_BEFORE_TIMEOUT_S = 20.0


def _dump_asyncio_tasks(nodeid: str) -> None:
    import asyncio
    import sys

    out = sys.__stderr__
    if out is None:
        return
    for _ in range(5):  # the set may change under us (another thread); retry
        try:
            tasks = list(asyncio.tasks._all_tasks)
            break
        except RuntimeError:
            continue
    else:
        return
    print(f"\n===== {nodeid}: still running; pending asyncio tasks =====", file=out)
    for task in tasks:
        if task.done():
            continue
        print(f"--- {task!r}", file=out)
        with contextlib.suppress(Exception):
            task.print_stack(file=out)
    out.flush()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    import threading

    marker = item.get_closest_marker("timeout")
    limit = float(marker.args[0]) if marker and marker.args else float(
        item.config.getini("timeout") or 0)
    watchdog = None
    if limit > TASK_DUMP_BEFORE_TIMEOUT_S:
        watchdog = threading.Timer(limit - TASK_DUMP_BEFORE_TIMEOUT_S, _dump_asyncio_tasks,
                                   (item.nodeid,))
        watchdog.daemon = True
        watchdog.start()
    try:
        yield
    finally:
        if watchdog is not None:
            watchdog.cancel()
