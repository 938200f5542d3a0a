"""The parts every attack shares: a real server process (and a private Redis), loopback
source addresses, a protocol client, the honest player whose move→ack latency is the
yardstick, and the server's memory as the kernel reports it.

Everything here talks only to 127.0.0.0/8 and every wait is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import selectors
import shutil
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import engine
from bench.attack.layout import Layout
from bench.attack.rawws import BUSY_PATIENCE_S, BUSY_STATUSES, busy_backoff
from bench.players import reversible_pair
from protocol import PROTOCOL_VERSION, decode_server, encode
from protocol import messages as m

LOST = -1.0  # an honest sample with no ack in time (bench/attack/honest.py)
REJECTED = -2.0  # an honest move rejected
REPLY_TIMEOUT_S = 10.0  # a reply slower than this counts as lost (the attack may stall it)
START_TIMEOUT_S = 20.0  # a server or redis-server that is not up by then is a failure


# --------------------------------------------------------------------------- processes
def free_port() -> int:
    """A loopback TCP port free now (never 6379)."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port: int = sock.getsockname()[1]
        if port != 6379:
            return port


def rss_kb(pid: int) -> int:
    """Resident memory of ``pid`` in KiB (VmRSS from /proc), 0 once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return 0
    return 0


def stop_child(proc: subprocess.Popen[Any]) -> int | None:
    """SIGTERM a child we started (by its handle), SIGKILL if it has not stopped within
    15 s; its exit code."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    return proc.returncode


class RedisProc:
    """A private redis-server on a free loopback port, no persistence; stopped by pid."""

    def __init__(self, maxmemory: str = "") -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            raise SystemExit("redis-server is not on PATH (Debian package redis-server)")
        self.port = free_port()
        extra = ["--maxmemory", maxmemory] if maxmemory else []
        self.proc = subprocess.Popen(
            [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--protected-mode", "yes", *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:  # readiness polling, bounded
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                break
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.stop()
                raise SystemExit("redis-server did not start")
            time.sleep(0.05)

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:PORT/0``."""
        return f"redis://127.0.0.1:{self.port}/0"

    def used_memory(self) -> int:
        """Bytes Redis says it uses (INFO memory), -1 when it does not answer."""
        import redis

        try:
            client = redis.Redis.from_url(self.url, socket_timeout=2)
            used = int(client.info("memory")["used_memory"])
            client.close()
            return used
        except Exception:  # an attack may have filled it: report, do not crash the run
            return -1

    def info(self, section: str) -> dict[str, Any]:
        """Redis ``INFO section`` as a dict (empty when it does not answer)."""
        import redis

        try:
            client = redis.Redis.from_url(self.url, socket_timeout=2)
            info: dict[str, Any] = client.info(section)
            client.close()
            return info
        except Exception:  # a full or busy Redis: report nothing rather than fail the run
            return {}

    def commands(self) -> int:
        """Commands Redis has processed since it started (``total_commands_processed``;
        -1 when it does not answer): differences count a phase's store traffic."""
        return int(self.info("stats").get("total_commands_processed", -1))

    def stop(self) -> None:
        """Stop our own child by its handle."""
        stop_child(self.proc)


# ``solrace serve`` with the node's event-loop-lag probe waking every argv[1] seconds
# instead of the production interval (``server.metrics.LOOP_LAG_INTERVAL_S``, read by the
# probe at each wake-up): short stalls then show in ``solrace_event_loop_lag_seconds``.
# Inline, not a module of the kit, so that it runs against another tree's server too.
LAG_PROBE_MAIN = (
    "import sys\n"
    "import server.metrics\n"
    "server.metrics.LOOP_LAG_INTERVAL_S = float(sys.argv.pop(1))\n"
    "from client_cli.main import main\n"
    "sys.argv[0] = 'solrace'\n"
    "sys.exit(main())\n"
)


class ServerProc:
    """``solrace serve --host 127.0.0.1 --port 0`` as a child process; its URL comes from
    the one line it prints when ready."""

    def __init__(self, redis_url: str = "", extra: list[str] | None = None,
                 profile: str = "", tree: str = "", lag_probe_s: float = 0.0) -> None:
        exe = Path(sys.executable).with_name("solrace")
        cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "client_cli.main"]
        if lag_probe_s:  # the same server, its loop-lag probe at this interval
            cmd = [sys.executable, "-c", LAG_PROBE_MAIN, str(lag_probe_s)]
        if profile:  # cProfile writes the stats when serve returns (it does on SIGTERM)
            cmd = [sys.executable, "-m", "cProfile", "-o", profile, "-m", "client_cli.main"]
        cmd += ["serve", "--host", "127.0.0.1", "--port", "0", *(extra or [])]
        if redis_url:
            cmd += ["--redis", redis_url]
        self.cmd = cmd
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        if tree:  # another tree's server (a base commit) under this kit: on its path
            # first, and its working directory (``-c`` puts the cwd first on sys.path)
            env["PYTHONPATH"] = os.pathsep.join([tree, *filter(None, [env.get("PYTHONPATH")])])
            if profile:
                profile = os.path.abspath(profile)
                cmd[cmd.index("-o") + 1] = profile
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=env, cwd=tree or None)
        self.url = self._read_url()
        self.port = int(self.url.rsplit(":", 1)[1])
        # Drain stderr in the background so a chatty server never blocks on a full pipe.
        self.stderr_tail: list[str] = []
        self._stderr_task: asyncio.Task[None] | None = None

    def _read_url(self) -> str:
        line = read_line(self.proc, "solrace listening on ", START_TIMEOUT_S)
        if line is None:
            self.stop()
            raise SystemExit(f"server did not start: {' '.join(self.cmd)}")
        return line.split()[-1].strip()

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self.proc.pid

    def rss_mb(self) -> float:
        """The server's resident memory now, MiB."""
        return rss_kb(self.pid) / 1024

    def cpu_s(self) -> float:
        """CPU seconds the server and its live child processes (the verdict workers)
        have used so far (user + system, from /proc)."""
        ticks = 0
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # a process that just ended
            if stat.parent.name == str(self.pid) or fields[1] == str(self.pid):
                ticks += int(fields[11]) + int(fields[12])
        return ticks / os.sysconf("SC_CLK_TCK")

    def alive(self) -> bool:
        """True while the process runs."""
        return self.proc.poll() is None

    def start_stderr_drain(self) -> None:
        """Keep the last lines of the server's stderr (tracebacks) without blocking it."""
        import threading

        def drain() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.stderr_tail.append(line.rstrip())
                del self.stderr_tail[:-200]

        threading.Thread(target=drain, daemon=True).start()

    def stop(self) -> int | None:
        """Stop our own child by its handle; its exit code."""
        return stop_child(self.proc)


# --------------------------------------------------------------------------- addresses
def source_addr(i: int) -> str:
    """The ``i``-th loopback source address other than 127.0.0.1 (127.0.0.2, .3, …,
    then 127.0.1.x, …): many client addresses on one machine, all in 127.0.0.0/8."""
    hi, lo = divmod(i, 250)
    return f"127.0.{hi}.{lo + 2}"


# --------------------------------------------------------------------------- client
class Client:
    """One protocol connection (websockets), optionally from a chosen loopback address."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.inbox: list[Any] = []
        self.joined: m.Joined | None = None

    @property
    def code(self) -> str:
        """The code of the room this client last entered ("" before)."""
        return self.joined.code if self.joined else ""

    @classmethod
    async def open(cls, url: str, name: str = "x", *, source: str = "", hello: bool = True,
                   bot: bool = False, batched: bool = False,
                   patience_s: float = BUSY_PATIENCE_S) -> Client:
        """Connect (from ``source`` when given) and say hello unless told not to;
        ``batched``: a spectator taking Diffs frames (hello.ds). A handshake refused 503
        or 429 is tried again with ``busy_backoff`` for ``patience_s``, as the SDK does
        (a set-up under the node's admission budget); a flood that counts its refusals
        passes ``patience_s=0``. Raises websockets' ``InvalidStatus`` past the patience."""
        from websockets.asyncio.client import connect
        from websockets.exceptions import InvalidStatus

        kwargs: dict[str, Any] = {"local_addr": (source, 0)} if source else {}
        give_up = time.monotonic() + patience_s
        attempt = 0
        while True:
            try:
                ws = await asyncio.wait_for(
                    connect(url, compression=None, max_queue=None, max_size=None,
                            open_timeout=REPLY_TIMEOUT_S, **kwargs), REPLY_TIMEOUT_S)
                break
            except InvalidStatus as exc:
                if (exc.response.status_code not in BUSY_STATUSES
                        or time.monotonic() >= give_up):
                    raise
            attempt += 1
            await asyncio.sleep(busy_backoff(attempt))
        client = cls(ws)
        if hello:
            await client.send(m.Hello(version=PROTOCOL_VERSION, name=name, bot=bot,
                                      batched=batched))
            await client.expect(m.Welcome)
        return client

    async def send(self, message: Any) -> None:
        """Send one protocol message."""
        await self.ws.send(encode(message))

    async def recv(self, wait: float = REPLY_TIMEOUT_S) -> Any:
        """The next message (inbox first)."""
        if self.inbox:
            return self.inbox.pop(0)
        return decode_server(await asyncio.wait_for(self.ws.recv(), wait))

    async def expect(self, kind: Any, wait: float = REPLY_TIMEOUT_S,
                     fail_on: Any = m.Closing) -> Any:
        """The first message of ``kind``; others are kept. An ``Error`` (or ``fail_on``)
        arriving first raises ``RuntimeError``."""
        for i, message in enumerate(self.inbox):
            if isinstance(message, kind):
                return self.inbox.pop(i)
        deadline = time.monotonic() + wait
        while True:
            message = decode_server(await asyncio.wait_for(
                self.ws.recv(), max(0.001, deadline - time.monotonic())))
            if isinstance(message, kind):
                return message
            if isinstance(message, m.Error | fail_on):
                raise RuntimeError(f"expected {kind}, got {message}")
            if len(self.inbox) < 10_000:  # keep what others may ask for, bounded
                self.inbox.append(message)

    async def create(self, **settings: Any) -> m.Joined:
        """Create a room and return ``Joined``."""
        await self.send(m.CreateRoom(settings=m.RoomSettings(**settings)))
        self.joined = await self.expect(m.Joined)
        return self.joined

    async def join(self, code: str, role: str = "player") -> m.Joined:
        """Join a room and return ``Joined``."""
        await self.send(m.Join(code=code, role=role))  # type: ignore[arg-type]
        self.joined = await self.expect(m.Joined)
        return self.joined

    async def close(self) -> None:
        """Close, never raising."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.ws.close(), 5)


def cycle_from_view(view: dict[str, Any]) -> tuple[str, str] | None:
    """Two moves that undo each other on this board and turn no card up (the source pile
    keeps a face-up card): a player can repeat them forever at a steady pace."""
    return reversible_pair(engine.game_from_view(view), min_up=2)


async def racing_player(url: str, *, name: str = "cycler", source: str = "",
                        bot: bool = False, variant: str = "spanish",
                        **settings: Any) -> tuple[Client, tuple[str, str]]:
    """A player alone in a fresh private room of its own, racing, with a move cycle
    (rooms are recreated until the deal has one; bounded)."""
    for _ in range(20):
        client = await Client.open(url, name, source=source, bot=bot)
        await client.create(variant=variant, countdown_s=0, public=False, **settings)
        await client.send(m.Ready())
        started = await client.expect(m.Started)
        cycle = cycle_from_view(started.boards[0].view)
        if cycle is not None:
            return client, cycle
        await client.close()
    raise RuntimeError("no deal with a move cycle in 20 rooms")


@dataclass
class Latency:
    """Move→ack samples (seconds) and the moves that got no ack in time."""

    samples: list[float] = field(default_factory=list)
    lost: int = 0
    rejected: int = 0

    def summary(self) -> dict[str, Any]:
        """p50/p99/max in ms, sample count, lost and rejected moves."""
        s = sorted(self.samples)
        if not s:
            return {"n": 0, "p50_ms": None, "p99_ms": None, "max_ms": None,
                    "lost": self.lost, "rejected": self.rejected}
        p99 = s[min(len(s) - 1, max(0, round(len(s) * 0.99) - 1))]
        return {"n": len(s), "p50_ms": round(statistics.median(s) * 1000, 2),
                "p99_ms": round(p99 * 1000, 2), "max_ms": round(s[-1] * 1000, 2),
                "lost": self.lost, "rejected": self.rejected}


def read_line(proc: subprocess.Popen[str], prefix: str, seconds: float) -> str | None:
    """The first line of ``proc``'s stdout that starts with ``prefix`` within ``seconds``
    (other lines are skipped); None if the time passes or the output ends first."""
    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            if sel.select(0.2):
                line = proc.stdout.readline()
                if line.startswith(prefix):
                    return line
                if not line:
                    return None
        return None
    finally:
        sel.close()


def honest_source(i: int) -> str:
    """The client address of the ``i``-th honest player: 127.0.0.1 for the first (as
    before ``--honest``), then 127.254.0.2, .3, …: outside the floods' 127.0.x.y range."""
    return "127.0.0.1" if i == 0 else f"127.254.{(i - 1) // 250}.{(i - 1) % 250 + 2}"


class HonestProc:
    """The yardstick in its own process (``bench/attack/honest.py``): started racing by
    the constructor, from ``source`` (127.0.0.1 if empty), its moves on the pace's grid
    at ``offset_s``, playing until ``finish()``, which returns its samples as
    ``(send time on time.monotonic(), ms or LOST/REJECTED)``."""

    def __init__(self, url: str, pace_s: float, source: str = "",
                 offset_s: float = 0.0) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench.attack.honest", url, str(pace_s),
             source or "127.0.0.1", str(offset_s)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        if read_line(self.proc, "READY", 60.0) is None:
            stop_child(self.proc)
            raise RuntimeError("the honest player did not start racing")

    def finish(self) -> list[tuple[float, float]]:
        """Tell the player to stop; its samples (empty if it died)."""
        assert self.proc.stdin is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.write("stop\n")
            self.proc.stdin.close()
        line = read_line(self.proc, "SAMPLES ", 90.0)
        stop_child(self.proc)
        if line is None:
            return []
        return [(float(t), float(ms)) for t, ms in json.loads(line.split(" ", 1)[1])]


def latency_in(samples: list[tuple[float, float]],
               windows: list[tuple[float, float]]) -> Latency:
    """The samples sent inside any of ``windows`` (``[start, end)`` on time.monotonic())."""
    lat = Latency()
    for t, ms in samples:
        if not any(start <= t < end for start, end in windows):
            continue
        if ms == LOST:
            lat.lost += 1
        elif ms == REJECTED:
            lat.rejected += 1
        else:
            lat.samples.append(ms / 1000)
    return lat


# --------------------------------------------------------------------------- the run
@dataclass
class Ctx:
    """What an attack gets: the server under attack, its Redis (if any) and the options."""

    server: ServerProc
    redis: RedisProc | None
    args: Any
    counters: dict[str, Any] = field(default_factory=dict)
    layout: Layout = field(default_factory=lambda: Layout(isolate=False))

    @property
    def url(self) -> str:
        """The server's ``ws://`` URL."""
        return self.server.url


async def gather_bounded(coros: list[Any], limit: int) -> list[Any]:
    """Run coroutines at most ``limit`` at a time; results (or exceptions) in order."""
    sem = asyncio.Semaphore(limit)

    async def one(c: Any) -> Any:
        async with sem:
            return await c

    return await asyncio.gather(*(one(c) for c in coros), return_exceptions=True)


async def play_cycle(client: Client, cycle: tuple[str, str], moves: int, seconds: float,
                     window: int = 32, first_seq: int = 1) -> int:
    """Play the move cycle pipelined (``window`` moves in flight) until ``moves`` are
    acknowledged or ``seconds`` pass; the number acknowledged. Needs a server whose rate
    limit allows it (the attacks that use it raise ``--rate``)."""
    deadline = time.monotonic() + seconds
    acked = in_flight = 0
    seq = first_seq - 1
    while acked < moves:
        while in_flight < window and seq - first_seq + 1 < moves and time.monotonic() < deadline:
            seq += 1
            await client.send(m.Move(seq=seq, move=cycle[(seq - 1) % 2]))
            in_flight += 1
        if in_flight == 0:
            break
        reply = await client.expect(m.Accepted | m.Rejected)
        if isinstance(reply, m.Rejected):
            raise RuntimeError(f"cycle move refused: {reply}")
        in_flight -= 1
        acked += 1
        client.inbox.clear()
    return acked
