"""Real ``solrace serve`` processes and a small auditing client for the multi-node tests.

``Node`` runs ``solrace serve --host 127.0.0.1 --port 0 --redis URL`` and waits for its
``solrace listening on ws://…`` line. ``Racer`` is a player (websockets + the protocol
codec) that keeps its board with ``engine.apply_diff``, checks every state hash, and
records every move it saw ``Accepted`` — the audit: each of them must be in the final
``Results`` log, in order. It resumes on another node (``Hello{token, seen}``) when its
connection drops, and retries a move rejected as retryable (``store_unavailable``).
``Watcher`` is a spectator that rebuilds every board from ``Started`` + ``Diff``s.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

import engine
from protocol import PROTOCOL_VERSION, decode_server, encode
from protocol import messages as m

READY_TIMEOUT_S = 15.0
REPLY_TIMEOUT_S = 10.0
SOLRACE = str(Path(sys.executable).parent / "solrace")


class NodeRefused(Exception):
    """The node exited before listening: its exit status and its log."""

    def __init__(self, status: int, log: str) -> None:
        super().__init__(f"exit {status}: {log[-2000:]}")
        self.status, self.log = status, log


class Node:
    """One ``solrace serve`` process on a loopback port. Its log goes to ``logfile``."""

    def __init__(self, redis_url: str, workdir: Path, name: str, *extra: str) -> None:
        self.redis_url = redis_url
        self.name = name
        self.extra = extra  # more ``solrace serve`` flags
        self.logfile = workdir / f"{name}.log"
        self.proc: asyncio.subprocess.Process | None = None
        self.url = ""

    @property
    def http(self) -> str:
        """``http://host:port`` of the node (for /healthz)."""
        return self.url.replace("ws://", "http://", 1)

    async def start(self) -> Node:
        """Start the process and wait (bounded) for its listening line."""
        with self.logfile.open("ab") as log:  # a local file: opening it does not block
            self.proc = await asyncio.create_subprocess_exec(
                SOLRACE, "serve", "--host", "127.0.0.1", "--port", "0",
                "--redis", self.redis_url, "--node-id", self.name, "--log-level", "INFO",
                "--one-host",  # every test client is 127.0.0.1
                *self.extra,
                stdout=asyncio.subprocess.PIPE, stderr=log,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        assert self.proc.stdout is not None
        try:
            line = await asyncio.wait_for(self.proc.stdout.readline(), READY_TIMEOUT_S)
            if not line:  # it exited before listening (e.g. refused a volatile store)
                await asyncio.wait_for(self.proc.wait(), READY_TIMEOUT_S)
                raise NodeRefused(self.proc.returncode or 0, self.log())
        except TimeoutError:
            await self.kill()
            raise AssertionError(f"{self.name} did not start: {self.log()[-3000:]}") from None
        text = line.decode().strip()
        assert text.startswith("solrace listening on ws://"), f"{text!r}\n{self.log()[-3000:]}"
        self.url = text.rsplit(" ", 1)[1]
        return self

    def log(self) -> str:
        """Everything the node wrote to stderr."""
        return self.logfile.read_text(errors="replace") if self.logfile.exists() else ""

    async def kill(self) -> None:
        """SIGKILL (a crash: no goodbye to anyone)."""
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGKILL)
            await self.proc.wait()

    async def stop(self) -> int:
        """SIGTERM (graceful) and wait; the exit status."""
        if self.proc is None:
            return 0
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 15)
            except TimeoutError:
                await self.kill()
        return self.proc.returncode or 0

    def healthz(self) -> tuple[int, str]:
        """GET /healthz: (status, body). Blocking: call it via ``asyncio.to_thread``."""
        try:
            with urllib.request.urlopen(self.http + "/healthz", timeout=5) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()


class _Client:
    """A websocket session speaking the protocol."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.ws: ClientConnection | None = None
        self.inbox: list[Any] = []
        self.history: list[Any] = []  # every message received, in order
        self.welcome: m.Welcome | None = None
        self.retryable_rejections: list[str] = []  # store_unavailable answers met on the way

    async def open(self, url: str, token: str | None = None, seen: int = 0) -> None:
        self.ws = await connect(url, max_size=None, compression=None, open_timeout=5)
        self.inbox.clear()
        await self.send(m.Hello(version=PROTOCOL_VERSION, name=self.name, token=token, seen=seen))
        if token is None:
            self.welcome = await self.expect(m.Welcome)

    async def send(self, message: Any) -> None:
        assert self.ws is not None
        await self.ws.send(encode(message))

    async def recv(self, wait: float = REPLY_TIMEOUT_S) -> Any:
        if self.inbox:
            return self.inbox.pop(0)
        assert self.ws is not None
        frame = await asyncio.wait_for(self.ws.recv(), wait)
        assert isinstance(frame, bytes)
        message = decode_server(frame)
        self.on_message(message)
        return message

    def on_message(self, message: Any) -> None:
        """Every message as it arrives (subclasses add to this)."""
        self.history.append(message)

    async def expect(self, kind: Any, wait: float = REPLY_TIMEOUT_S) -> Any:
        """The first message of ``kind``; others stay in the inbox (errors fail)."""
        for i, message in enumerate(self.inbox):
            if isinstance(message, kind):
                return self.inbox.pop(i)
        deadline = time.monotonic() + wait
        assert self.ws is not None
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{self.name}: no {kind}; inbox {self.inbox[-5:]!r}")
            frame = await asyncio.wait_for(self.ws.recv(), left)
            assert isinstance(frame, bytes)
            message = decode_server(frame)
            self.on_message(message)
            if isinstance(message, kind):
                return message
            if isinstance(message, m.Error):
                if message.code == "store_unavailable" and message.retryable:
                    # the documented answer to a request caught by a store outage (the
                    # fault tests cause them); anything else while waiting is a failure
                    self.retryable_rejections.append(message.code)
                    continue
                raise AssertionError(f"{self.name}: error while waiting for {kind}: {message}")
            self.inbox.append(message)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()


def pick_move(view: dict[str, Any], rng: random.Random) -> str | None:
    """A legal move: to a foundation when possible, else a random one; None if none."""
    legal = [str(mv) for mv in engine.game_from_view(view).legal_moves()]
    if not legal:
        return None
    home = [mv for mv in legal if mv.endswith(">f")]
    return home[0] if home else rng.choice(legal)


class Racer(_Client):
    """A player that audits its acknowledged moves (see the module docstring)."""

    def __init__(self, name: str, seed: int = 0) -> None:
        super().__init__(name)
        self.rng = random.Random(seed)
        self.token: str | None = None
        self.seat = 0
        self.view: dict[str, Any] | None = None
        self.seq = 0  # last acknowledged
        self.acked: dict[int, str] = {}  # every move seen Accepted: seq -> notation
        self.resumes = 0
        self.done = False  # won, stuck or finished
        self.on_ack: Callable[[Racer], object] | None = None  # called after each ack

    async def create(self, **settings: Any) -> m.Joined:
        await self.send(m.CreateRoom(settings=m.RoomSettings(**settings)))
        return await self._joined()

    async def join(self, code: str) -> m.Joined:
        await self.send(m.Join(code=code))
        return await self._joined()

    async def _joined(self) -> m.Joined:
        joined: m.Joined = await self.expect(m.Joined)
        self.seat = joined.seat
        self.token = joined.token or self.token
        return joined

    async def ready_and_start(self) -> None:
        await self.send(m.Ready())
        started: m.Started = await self.expect(m.Started, wait=20)
        self.view = started.boards[0].view

    async def resume(self, url: str) -> None:
        """Reconnect to ``url`` with the token; the board is the one the server has
        (``seen`` 0 asks for the whole board rather than the moves after ``seq``)."""
        await self.open(url, token=self.token, seen=0)
        joined: m.Joined = await self.expect(m.Joined)
        board = next(b for b in joined.boards if b.seat == self.seat)
        # moves the server stored but whose ack we never saw are in the board already
        assert board.seq >= self.seq, (board.seq, self.seq)
        self.view, self.seq = board.view, board.seq
        self.resumes += 1

    def next_move(self) -> str:
        """The move ``play`` would choose now (there must be one)."""
        assert self.view is not None
        move = pick_move(self.view, self.rng)
        assert move is not None, f"{self.name}: no legal move"
        return move

    async def play(self, count: int, retry_for_s: float = 20.0) -> int:
        """Play up to ``count`` moves (each retried while rejected as retryable, up to
        ``retry_for_s``); returns how many were accepted. Raises ``ConnectionClosed`` if
        the connection drops (the caller resumes elsewhere)."""
        played = 0
        for _ in range(count):
            assert self.view is not None
            move = pick_move(self.view, self.rng)
            if move is None:
                self.done = True
                break
            reply = await self._move_with_retry(move, retry_for_s)
            if reply is None:
                break
            played += 1
        return played

    async def _move_with_retry(self, move: str, retry_for_s: float) -> m.Accepted | None:
        deadline = time.monotonic() + retry_for_s
        seq = self.seq + 1
        while True:
            await self.send(m.Move(seq=seq, move=move))
            reply = await self.expect(m.Accepted | m.Rejected | m.Error)
            if isinstance(reply, m.Error):  # rate_limited: the move was not looked at
                assert reply.retryable, f"{self.name}: move {move}: {reply}"
                self.retryable_rejections.append(reply.code)
                await asyncio.sleep(0.1)  # wait for credits (backoff, not a sync)
                continue
            if isinstance(reply, m.Accepted):
                assert reply.seq == seq
                assert self.view is not None
                diff = engine.Diff(move, tuple(tuple(r) for r in reply.revealed))
                self.view = engine.apply_diff(self.view, diff)
                assert engine.view_hash(self.view) == reply.hash, "board desynced"
                self.acked[seq] = move
                self.seq = seq
                if self.on_ack is not None:
                    self.on_ack(self)
                return reply
            if reply.code == "finished":
                self.done = True
                return None
            assert reply.retryable, f"{self.name}: move {move} rejected: {reply}"
            self.retryable_rejections.append(reply.code)
            assert time.monotonic() < deadline, f"{self.name}: still rejected: {reply}"
            await asyncio.sleep(0.05)  # retry backoff (the store is down), not a sync

    async def resign_and_results(self) -> m.Results:
        """Resign (unless already out of the race) and wait for the results."""
        await self.send(m.Resign())
        deadline = time.monotonic() + 20
        while True:
            message = await self.recv(wait=max(0.1, deadline - time.monotonic()))
            if isinstance(message, m.Results):
                return message
            if isinstance(message, m.Error):  # finished already: no resign needed
                assert message.code in ("finished", "rate_limited"), message


class Watcher(_Client):
    """A spectator rebuilding every board from Started/Joined boards and Diffs."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.views: dict[int, dict[str, Any]] = {}
        self.seqs: dict[int, int] = {}
        self.moves: dict[int, list[str]] = {}
        self.results: m.Results | None = None
        self.results_seen = asyncio.Event()

    def on_message(self, message: Any) -> None:
        super().on_message(message)
        if isinstance(message, m.Started | m.Joined):
            for board in message.boards:
                self.views[board.seat], self.seqs[board.seat] = board.view, board.seq
                self.moves.setdefault(board.seat, [])
        elif isinstance(message, m.Diff):
            assert message.seq == self.seqs[message.seat] + 1, "diffs out of order"
            diff = engine.Diff(message.move, tuple(tuple(r) for r in message.revealed))
            view = engine.apply_diff(self.views[message.seat], diff)
            assert engine.view_hash(view) == message.hash, "spectator board desynced"
            self.views[message.seat], self.seqs[message.seat] = view, message.seq
            self.moves[message.seat].append(message.move)
        elif isinstance(message, m.Results):
            self.results = message
            self.results_seen.set()

    async def watch_until_results(self) -> None:
        """Read until the results arrive (run it as a task once joined)."""
        with contextlib.suppress(ConnectionClosed):
            while self.results is None:
                await self.recv(wait=60)


def audit(results: m.Results, racers: list[Racer]) -> int:
    """Every move any racer saw Accepted is in the Results log, at its sequence. Returns
    how many acknowledged moves were checked."""
    logs = {log.seat: log.moves for log in results.logs}
    checked = 0
    for racer in racers:
        log = logs[racer.seat]
        for seq, move in sorted(racer.acked.items()):
            assert seq <= len(log), f"{racer.name}: acked move {seq} missing (log {len(log)})"
            assert log[seq - 1] == move, f"{racer.name}: move {seq} is {log[seq - 1]}, not {move}"
            checked += 1
    return checked
