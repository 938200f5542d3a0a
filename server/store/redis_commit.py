"""Group commit of move appends on a standalone Redis (``RedisStore.append_move``).

A node's moves of one loop tick share one pipelined round trip instead of one each: the
way databases batch their log writes. Kept apart from ``redis.py`` because it is a
mechanism of its own (batching, per-item replies, deadlines, script reload), not a store
operation.

The appends have a connection of their own, spoken to directly (an ``asyncio.Protocol``
and hiredis' reply parser), not through redis-py: a move is the node's hottest path, and
redis-py's pipeline (a task, a pool checkout, an ``asyncio.timeout``, per-argument
encoding, a ``StreamReader`` read per reply) cost more CPU per move than the rest of the
Redis path together. Here a move costs one future and its command's bytes; a tick's
commands are one write; the replies resolve the callers' futures from the protocol's
``data_received`` (no task in between).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import socket
from collections import deque
from collections.abc import Callable
from typing import Any

import hiredis
from redis.asyncio.connection import SSLConnection, UnixDomainSocketConnection

from .base import StoreUnavailable

log = logging.getLogger("solrace.store.redis")

Reply = Any  # a parsed reply: int, bytes, list, or hiredis.ReplyError


def pack(args: tuple[Any, ...] | list[Any]) -> bytes:
    """One command in the Redis protocol (RESP: an array of bulk strings). Arguments
    are bytes, str (UTF-8), int or float (their decimal text, as redis-py sends them)."""
    return b"*%d\r\n" % len(args) + bulk(args)


def bulk(args: tuple[Any, ...] | list[Any]) -> bytes:
    """``args`` as RESP bulk strings, back to back (a command's body, without its array
    header): see ``pack``."""
    # Every move's ~18 arguments pass through here on the node's one core: the exact
    # types (bytes, str, int) are tested first, by identity (a move's arguments are
    # always those; 0.8 µs less per move than isinstance first), the rest as before.
    out: list[bytes] = []
    append = out.append
    for arg in args:
        kind = type(arg)
        if kind is bytes:
            append(b"$%d\r\n%s\r\n" % (len(arg), arg))
            continue
        if kind is str:
            data = arg.encode()
        elif kind is int:
            data = b"%d" % arg
        elif isinstance(arg, bytes):
            data = arg
        elif isinstance(arg, str):
            data = arg.encode()
        elif isinstance(arg, int | float) and not isinstance(arg, bool):
            data = repr(arg).encode()
        else:
            raise TypeError(f"not a Redis argument: {type(arg).__name__}")
        append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


async def open_connection(pool: Any, protocol: asyncio.Protocol, timeout_s: float
                          ) -> tuple[Any, list[bytes]]:
    """A connection for ``protocol`` to the Redis of redis-py's ``pool`` (TCP, TLS or a
    Unix socket, as the store's URL said), within the pool's connect timeout (else
    ``timeout_s``); and the commands to send first (AUTH, SELECT), each answered OK.
    The transport is asyncio's or uvloop's (uvloop's is not an ``asyncio.Transport``
    subclass, so it is not typed as one)."""
    loop = asyncio.get_running_loop()
    kwargs = pool.connection_kwargs
    async with asyncio.timeout(kwargs.get("socket_connect_timeout") or timeout_s):
        cls = pool.connection_class
        if issubclass(cls, UnixDomainSocketConnection):
            transport, _ = await loop.create_unix_connection(lambda: protocol, kwargs["path"])
        else:
            host, port = kwargs.get("host", "localhost"), kwargs.get("port", 6379)
            ssl = (pool.make_connection().ssl_context.get()
                   if issubclass(cls, SSLConnection) else None)
            transport, _ = await loop.create_connection(lambda: protocol, host, port, ssl=ssl)
            sock = transport.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    setup: list[bytes] = []
    password = kwargs.get("password")
    if password:
        username = kwargs.get("username")
        setup.append(pack(("AUTH", username, password) if username else ("AUTH", password)))
    db = int(kwargs.get("db") or 0)
    if db:
        setup.append(pack(("SELECT", db)))
    return transport, setup


class _Call:
    """One APPEND_MOVE call: its command (kept to send it again) and who hears its
    outcome: its caller's future (``submit``), or a callback (``submit_later``)."""

    __slots__ = ("args", "callback", "context", "future", "keys", "packed_keys", "tries")

    def __init__(self, keys: list[str], args: list[Any], future: asyncio.Future[Any] | None,
                 packed_keys: bytes, callback: Callable[[Any], None] | None = None,
                 context: contextvars.Context | None = None) -> None:
        self.keys = keys
        self.packed_keys = packed_keys  # bulk(keys)
        self.args = args
        self.future = future
        self.callback = callback  # (with no future) called once, with the reply or exception
        self.context = context  # the callback runs in it (as asyncio runs a callback)
        self.tries = 0  # connections this call was sent on

    def done(self) -> bool:
        """Whether the call's outcome was given already."""
        future = self.future
        return self.callback is None if future is None else future.done()

    def settle(self, outcome: Any) -> None:
        """Give the call's outcome (a reply, or an exception), once."""
        future = self.future
        if future is not None:
            if not future.done():
                if isinstance(outcome, BaseException):
                    future.set_exception(outcome)
                else:
                    future.set_result(outcome)
            return
        callback, self.callback = self.callback, None
        if callback is not None:
            try:
                if self.context is None:
                    callback(outcome)
                else:
                    self.context.run(callback, outcome)
            except Exception:  # the caller's own failure: the batch's other calls go on
                log.exception("redis append_move: the caller's callback failed")


class _Batch:
    """Calls written together (then WAIT, if asked): answered together, when the last
    of their replies is in."""

    __slots__ = ("calls", "deadline", "evals", "expected", "replies")

    def __init__(self, calls: list[_Call], expected: int, deadline: float,
                 evals: bool) -> None:
        self.calls = calls
        self.replies: list[Reply] = []
        self.expected = expected  # replies to read: one per call (+ WAIT's)
        self.deadline = deadline
        self.evals = evals  # sent with the script's text (EVAL), after a NOSCRIPT


class _Setup:
    """The connection's first commands (AUTH, SELECT): each must answer OK."""

    __slots__ = ("deadline", "expected", "replies")

    def __init__(self, expected: int, deadline: float) -> None:
        self.expected = expected
        self.replies: list[Reply] = []
        self.deadline = deadline


class GroupCommit(asyncio.Protocol):
    """Group commit of ``append_move`` on a standalone Redis: the appends submitted in
    one loop tick (any seats, any rooms of this node) go to Redis as one write of
    APPEND_MOVE calls (``EVALSHA``) — one round trip — followed, with ``wait_replicas``,
    by one ``WAIT`` that covers them all. Each caller gets its own script reply (so a
    stale epoch or a sequence conflict fails only its own move); a failure of the round
    trip itself (connection, deadline, too few replicas) is ``StoreUnavailable`` for the
    moves of that batch, and none of them is acknowledged.

    Batches are pipelined on the one connection: a tick's batch goes out at once even if
    earlier ones are still on the wire (Redis answers in order). A connection lost with
    calls on the wire sends them once more on a new connection (every APPEND_MOVE call
    is idempotent: a stored move is recognised, nothing doubles), like redis-py's one
    retry; a second loss, or a batch past its deadline (the connection is then dropped,
    since its replies are no longer known to line up), fails them. A ``NOSCRIPT`` reply
    (Redis restarted or flushed its scripts: the call did nothing) sends that call again
    with the script's text (``EVAL``, which also caches it)."""

    MAX_BATCH = 512  # calls per batch (bounds one reply's size and one WAIT's wait)
    EARLY_WRITE = 8  # callback calls queued in one tick written at once (Redis starts on them)
    # (and a callback call when nothing is on the wire: ``submit_later``)

    def __init__(self, pool: Any, script: Any, wait_replicas: int, timeout_s: float,
                 wait_timeout_ms: int) -> None:
        self._pool = pool  # redis-py's pool: its connection settings, not its connections
        self._sha: str = script.sha
        self._text: str = script.script
        self._wait = wait_replicas
        self._timeout_s = timeout_s  # one deadline per batch, from its write
        self._wait_timeout_ms = wait_timeout_ms
        self._queue: list[_Call] = []  # submitted, not written yet
        self._scheduled = False
        self._transport: Any = None  # asyncio's or uvloop's transport (same methods)
        self._connecting: asyncio.Task[None] | None = None
        self._reader = hiredis.Reader()
        self._on_wire: deque[_Batch | _Setup] = deque()  # written, replies awaited, in order
        self._timer: asyncio.TimerHandle | None = None
        self._idle: asyncio.Event | None = None  # set when nothing is on the wire (close)
        self._closed = False
        self._prefixes: dict[int, bytes] = {}  # arguments count → "*N EVALSHA sha 5" bytes

    async def submit(self, keys: list[str], args: list[Any],
                     packed_keys: bytes | None = None) -> Any:
        """Queue one APPEND_MOVE call for the next batch; its reply (or StoreUnavailable).
        ``packed_keys``, if given, must be ``bulk(keys)`` (a caller that sends the same
        keys often keeps it, so it is not packed again per call)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._queue.append(_Call(keys, args, future,
                                 bulk(keys) if packed_keys is None else packed_keys))
        if not self._scheduled:
            # After the callbacks already due in this tick: the moves they read join too.
            self._scheduled = True
            loop.call_soon(self._flush)
        return await future

    def submit_later(self, keys: list[str], args: list[Any], packed_keys: bytes,
                     callback: Callable[[Any], None]) -> None:
        """``submit`` without a future: queue the call for the next batch, and call
        ``callback`` once with its reply or its ``StoreUnavailable`` — from the reply's
        ``data_received`` (or a later callback of the loop on failure), never before
        this returns, in the context current now (the caller's log fields, as
        ``loop.call_soon`` would). ``packed_keys`` must be ``bulk(keys)``."""
        queue = self._queue
        queue.append(_Call(keys, args, None, packed_keys, callback, contextvars.copy_context()))
        # Written now: a batch's worth (Redis starts on them while the node judges the
        # rest), or a call with nothing on the wire (Redis is idle: a loop callback more
        # would only delay it, behind whatever the loop has queued, e.g. a slice of a
        # spectators' tick; the calls that follow in this tick go as one batch, as
        # Nagle's algorithm holds back only what comes while something is in flight).
        if len(queue) >= self.EARLY_WRITE or not self._on_wire:
            transport = self._transport
            if transport is not None and not self._closed and not transport.is_closing():
                self._write(transport, self._take(), evals=False)
                return
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    # ------------------------------------------------------------------ sending

    def _flush(self) -> None:
        self._scheduled = False
        if not self._queue:
            return
        if self._closed:
            self._fail(self._take(), "the store is closed")
            return
        transport = self._transport
        if transport is None or transport.is_closing():
            if self._connecting is None:
                self._connecting = asyncio.get_running_loop().create_task(self._connect())
            return  # written once connected (or failed)
        self._write(transport, self._take(), evals=False)

    def _take(self) -> list[_Call]:
        calls, self._queue = self._queue, []
        return calls

    def _write(self, transport: Any, calls: list[_Call], evals: bool) -> None:
        """Write ``calls`` in batches of at most ``MAX_BATCH`` (each then WAIT, if asked),
        all in one write."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._timeout_s
        wait = pack(("WAIT", self._wait, self._wait_timeout_ms)) if self._wait else b""
        out: list[bytes] = []
        for start in range(0, len(calls), self.MAX_BATCH):
            part = calls[start:start + self.MAX_BATCH]
            for call in part:
                call.tries += 1
                out.append(self._command(call, evals))
            out.append(wait)
            self._on_wire.append(_Batch(part, len(part) + (1 if self._wait else 0),
                                        deadline, evals))
        transport.write(b"".join(out))
        if self._timer is None:
            self._timer = loop.call_at(deadline, self._check_deadline)

    def _command(self, call: _Call, evals: bool) -> bytes:
        keys, args = call.keys, call.args
        if evals:
            return pack(("EVAL", self._text, len(keys), *keys, *args))
        count = 3 + len(keys) + len(args)
        prefix = self._prefixes.get(count)
        if prefix is None:  # "*N\r\n" then EVALSHA, the sha, the key count (5: one script)
            prefix = b"*%d\r\n" % count + bulk(("EVALSHA", self._sha, len(keys)))
            self._prefixes[count] = prefix
        return prefix + call.packed_keys + bulk(args)

    # ------------------------------------------------------------------ connecting

    async def _connect(self) -> None:
        """Open the connection (AUTH and SELECT as the store's URL says), then write what
        was queued meanwhile; a failure fails those calls."""
        loop = asyncio.get_running_loop()
        try:
            transport, setup = await open_connection(self._pool, self, self._timeout_s)
        except Exception as exc:  # refused, unreachable, timed out: the batch fails
            self._connecting = None
            detail = str(exc) or type(exc).__name__
            self._fail(self._take(), f"cannot connect: {detail}")
            return
        self._connecting = None
        self._transport = transport
        self._reader = hiredis.Reader()
        if setup:
            self._on_wire.append(_Setup(len(setup), loop.time() + self._timeout_s))
            transport.write(b"".join(setup))
        if self._queue:
            self._write(transport, self._take(), evals=False)

    # ------------------------------------------------------------------ asyncio.Protocol

    def data_received(self, data: bytes) -> None:
        reader = self._reader
        reader.feed(data)
        on_wire = self._on_wire
        while on_wire:
            try:
                reply = reader.gets()
            except hiredis.HiredisError as exc:  # not the Redis protocol: start afresh
                self._drop(f"unreadable reply: {exc}")
                return
            if reply is False:
                return
            head = on_wire[0]
            head.replies.append(reply)
            if len(head.replies) == head.expected:
                on_wire.popleft()
                if isinstance(head, _Batch):
                    self._answer(head)
                elif not all(r == b"OK" for r in head.replies):
                    self._drop(f"connection setup refused: {head.replies}")
                    return
        if not on_wire and self._idle is not None:
            self._idle.set()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._transport is None:
            return
        self._transport = None
        self._lost(f"connection lost: {exc}" if exc else "connection closed by Redis")

    # ------------------------------------------------------------------ replies

    def _answer(self, batch: _Batch) -> None:
        replies = batch.replies
        if self._wait:
            replicas = replies.pop()
            if isinstance(replicas, Exception) or int(replicas) < self._wait:
                # Stored on the master but not acknowledged; the client's retry (same
                # seq, same move) is recognised by the script and waits again.
                short = StoreUnavailable(
                    f"redis append_move failed: {replicas}" if isinstance(replicas, Exception)
                    else f"moves on {replicas} replica(s), not {self._wait}, within "
                         f"{self._wait_timeout_ms} ms")
                replies = [short if not isinstance(r, Exception) and int(r[0]) >= 0 else r
                           for r in replies]
        again: list[_Call] = []
        for call, reply in zip(batch.calls, replies, strict=True):
            if call.done():
                continue
            if isinstance(reply, hiredis.ReplyError):
                if str(reply).startswith("NOSCRIPT") and not batch.evals:
                    again.append(call)  # nothing ran: send it with the script's text
                else:
                    call.settle(StoreUnavailable(f"redis append_move failed: {reply}"))
            else:
                call.settle(reply)  # a reply, or the StoreUnavailable of a short WAIT
        if again:
            log.info("redis append_move: script not cached (Redis restarted?); sending it")
            transport = self._transport
            if transport is None or transport.is_closing():
                self._fail(again, "connection lost")
            else:
                self._write(transport, again, evals=True)

    def _check_deadline(self) -> None:
        """The oldest batch on the wire is past its deadline: drop the connection and
        fail what was on it. Otherwise look again at the (new) oldest one's deadline."""
        self._timer = None
        if not self._on_wire:
            return
        loop = asyncio.get_running_loop()
        oldest = self._on_wire[0].deadline
        if loop.time() >= oldest:
            self._drop(f"no reply within {self._timeout_s:g} s", retry=False)
        else:
            self._timer = loop.call_at(oldest, self._check_deadline)

    def _drop(self, why: str, retry: bool = True) -> None:
        transport, self._transport = self._transport, None
        if transport is not None:
            transport.abort()
        self._lost(why, retry)

    def _lost(self, why: str, retry: bool = True) -> None:
        """The connection is gone: what was on it is sent once more on a new one (or
        failed when it was sent twice already, or ``retry`` is off)."""
        on_wire, self._on_wire = self._on_wire, deque()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        again: list[_Call] = []
        for item in on_wire:
            if not isinstance(item, _Batch):
                continue
            for call in item.calls:
                if call.done():
                    continue
                if retry and call.tries < 2 and not self._closed:
                    again.append(call)
                else:
                    call.settle(StoreUnavailable(f"redis append_move failed: {why}"))
        if again:
            self._queue[:0] = again  # before anything submitted since: they were first
            if not self._scheduled:
                self._scheduled = True
                asyncio.get_running_loop().call_soon(self._flush)
        if self._idle is not None:
            self._idle.set()

    @staticmethod
    def _fail(calls: list[_Call], why: str) -> None:
        for call in calls:
            if not call.done():
                call.settle(StoreUnavailable(f"redis append_move failed: {why}"))

    async def close(self) -> None:
        """Wait (bounded by the batches' own deadline) for the batches on the wire, then
        close the connection."""
        self._closed = True
        if self._on_wire:
            self._idle = asyncio.Event()
            await self._idle.wait()
        if self._connecting is not None:
            self._connecting.cancel()
            self._connecting = None
        self._fail(self._take(), "the store is closed")  # queued for a connection never made
        transport, self._transport = self._transport, None
        if transport is not None:
            transport.close()

