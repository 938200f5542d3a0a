"""Real processes for the deployment tests: ``solrace serve`` on a chosen loopback
address, HAProxy with deploy/haproxy.cfg, and a tiny DNS server (dnslib) whose answers a
test changes, standing in for Docker's or Kubernetes' DNS. Everything is started on
127.0.0.0/8 and stopped by pid.
"""

from __future__ import annotations

import base64
import csv
import io
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from dnslib import QTYPE, RCODE, RR, A
from dnslib.server import BaseResolver, DNSLogger, DNSServer

ROOT = Path(__file__).resolve().parents[2]
HAPROXY_CFG = ROOT / "deploy" / "haproxy.cfg"
SOLRACE = str(Path(sys.executable).parent / "solrace")
STATS_USER, STATS_PASSWORD = "ops", "test-only-password"
T = TypeVar("T")


def wait_for(what: str, probe: Callable[[], T | None], timeout_s: float = 15.0,
              every_s: float = 0.1) -> T:
    """Poll ``probe`` until it returns something other than None (or False); fail with
    ``what`` after ``timeout_s``. A deadline on a condition, not a sleep."""
    deadline = time.monotonic() + timeout_s
    last: T | None = None
    while time.monotonic() < deadline:
        last = probe()
        if last is not None and last is not False:
            return last
        time.sleep(every_s)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what} (last: {last!r})")


def free_port_on(*hosts: str) -> int:
    """A TCP port free on every one of ``hosts`` (loopback addresses)."""
    for _ in range(100):
        with socket.socket() as probe:
            probe.bind((hosts[0], 0))
            port = int(probe.getsockname()[1])
        ok = True
        for host in hosts[1:]:
            with socket.socket() as other:
                try:
                    other.bind((host, port))
                except OSError:
                    ok = False
        if ok:
            return port
    raise RuntimeError(f"no port free on all of {hosts}")


def require(tool: str) -> str:
    """The path of ``tool``; fails the test (not skips) when it is not installed."""
    path = shutil.which(tool)
    if path is None:
        pytest.fail(f"{tool} is not on PATH: ./scripts/check installs it (apt-get install {tool})")
    return path


class _Resolver(BaseResolver):  # type: ignore[misc]
    def __init__(self) -> None:
        self.records: dict[str, str] = {}
        self.lock = threading.Lock()

    def resolve(self, request: Any, handler: Any) -> Any:
        reply = request.reply()
        name = str(request.q.qname).rstrip(".").lower()
        with self.lock:
            address = self.records.get(name)
        if address is None:
            reply.header.rcode = RCODE.NXDOMAIN
        elif request.q.qtype == QTYPE.A:
            reply.add_answer(RR(request.q.qname, QTYPE.A, rdata=A(address), ttl=1))
        return reply  # AAAA of a known name: no error, no answer


class Dns:
    """A UDP DNS server on 127.0.0.1 answering A records from ``set(name, address)``."""

    def __init__(self) -> None:
        self.resolver = _Resolver()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = int(probe.getsockname()[1])
        quiet = DNSLogger(log="-request,-reply,-truncated,-error,-recv,-send,-data",
                          logf=lambda _text: None)
        self.server = DNSServer(self.resolver, port=self.port, address="127.0.0.1",
                                logger=quiet)

    def set(self, name: str, address: str | None) -> None:
        """Answer ``name`` with ``address`` from now on (None: NXDOMAIN)."""
        with self.resolver.lock:
            if address is None:
                self.resolver.records.pop(name.lower(), None)
            else:
                self.resolver.records[name.lower()] = address

    def start(self) -> Dns:
        """Serve in a background thread."""
        self.server.start_thread()
        return self

    def stop(self) -> None:
        """Stop serving."""
        self.server.stop()


class Serve:
    """``solrace serve --host HOST --port PORT`` as a child process; stderr to a file."""

    def __init__(self, workdir: Path, name: str, host: str, port: int,
                 redis_url: str | None = None, extra: tuple[str, ...] = ()) -> None:
        self.name, self.host, self.port = name, host, port
        self.logfile = workdir / f"{name}.stderr"
        self.cmd = [SOLRACE, "serve", "--host", host, "--port", str(port), "--node-id", name,
                    "--one-host",  # every test client is this host
                    *(["--redis", redis_url] if redis_url else []), *extra]
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""

    def start(self, timeout_s: float = 15.0) -> Serve:
        """Start and wait (bounded) for the ``solrace listening on`` line."""
        with self.logfile.open("ab") as err:
            self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=err,
                                         env={**os.environ, "PYTHONUNBUFFERED": "1"})
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout_s)
        if not ready:
            self.stop(signal.SIGKILL)
            raise AssertionError(f"{self.name} did not start in {timeout_s} s:\n{self.log()}")
        text = self.proc.stdout.readline().decode().strip()
        assert text.startswith("solrace listening on ws://"), f"{text!r}\n{self.log()}"
        self.url = text.rsplit(" ", 1)[1]
        return self

    def log(self) -> str:
        """What the node wrote to stderr so far."""
        return self.logfile.read_text(errors="replace") if self.logfile.exists() else ""

    def stop(self, sig: int = signal.SIGTERM) -> int | None:
        """Send ``sig`` and wait for the exit; its status (None if it was not running)."""
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        os.kill(self.proc.pid, sig)
        try:
            return self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGKILL)
            return self.proc.wait(timeout=5)


class HAProxy:
    """HAProxy running deploy/haproxy.cfg with ``env`` (see the config's header)."""

    def __init__(self, workdir: Path, env: dict[str, str]) -> None:
        self.binary = require("haproxy")
        self.env = {**os.environ, "SOLRACE_LB_STATS_USER": STATS_USER,
                    "SOLRACE_LB_STATS_PASSWORD": STATS_PASSWORD, **env}
        self.stats = "http://" + self.env["SOLRACE_LB_STATS"] + "/stats"
        self.logfile = workdir / "haproxy.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def check(self) -> subprocess.CompletedProcess[str]:
        """``haproxy -c``: does HAProxy accept the configuration with this environment?"""
        return subprocess.run([self.binary, "-c", "-f", str(HAPROXY_CFG)], env=self.env,
                              capture_output=True, text=True, timeout=30)

    def start(self) -> HAProxy:
        """Run in the foreground (``-db``) as a child process."""
        with self.logfile.open("ab") as out:
            self.proc = subprocess.Popen([self.binary, "-db", "-f", str(HAPROXY_CFG)],
                                         env=self.env, stdout=out, stderr=subprocess.STDOUT)
        return self

    def servers(self, auth: bool = True) -> dict[str, dict[str, str]]:
        """The ``nodes`` backend's servers from the stats CSV: name → row."""
        request = urllib.request.Request(self.stats + ";csv")
        if auth:
            token = base64.b64encode(f"{STATS_USER}:{STATS_PASSWORD}".encode()).decode()
            request.add_header("Authorization", f"Basic {token}")
        with urllib.request.urlopen(request, timeout=2) as resp:
            text = resp.read().decode().lstrip("# ")
        return {row["svname"]: row for row in csv.DictReader(io.StringIO(text))
                if row["pxname"] == "nodes" and row["svname"] not in ("BACKEND", "FRONTEND")}

    def states(self) -> dict[str, str]:
        """name → status (UP, DOWN, MAINT, ...); empty while the stats page is not up."""
        try:
            return {name: row["status"] for name, row in self.servers().items()}
        except (OSError, urllib.error.URLError):
            return {}

    def log(self) -> str:
        """HAProxy's output so far."""
        return self.logfile.read_text(errors="replace") if self.logfile.exists() else ""

    def stop(self) -> None:
        """SIGTERM by pid and wait."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=10)
