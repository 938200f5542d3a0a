"""Per-room events over Redis, for ``RedisStore``: pub/sub for speed, a short numbered
history per room so that nothing is lost when a subscriber reconnects.

Publishing (one Lua script) numbers the room's event (``INCR``), appends ``N:event`` to
the room's capped history list and publishes it (``SPUBLISH`` on Redis Cluster: sharded
pub/sub, so an event travels only within the shard that owns the room).

Each process has one subscriber connection (on Cluster: one per master owning a room it
listens to). Events are fanned out locally to every handler of the room, in order,
each exactly once: the listener remembers the last number it delivered per room; a gap
(a message it never got) or a reconnect makes it read the history and deliver what it
missed before going on. Only a gap longer than the history (at least ``HISTORY_LEN``
events: it is trimmed in steps, ``redis_scripts.HISTORY_TRIM_EVERY``) or data lost by
Redis itself can lose events; both are logged.

``subscribe`` returns once Redis confirmed the subscription; every event published after
the subscriber read the room's counter (just before subscribing) is delivered.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import hiredis
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError

from .base import EventHandler, StoreUnavailable, call_handler
from .redis_commit import open_connection, pack

log = logging.getLogger("solrace.store.redis")

Dispatch = Callable[[str, bytes], Awaitable[None]]
Numbered = tuple[bytes, int, bytes]  # (numbering, number, event)
# (channel) -> (numbering, the room's event counter, its history)
History = Callable[[str], Awaitable[tuple[bytes, int, list[Numbered]]]]

# Events kept per room for subscribers that catch up: at least this many, at most
# HISTORY_LEN + redis_scripts.HISTORY_TRIM_EVERY - 1 (the trim runs in steps: one Redis
# command fewer per move). The catch-up picks entries by number, not by position.
HISTORY_LEN = 512
CONFIRM_TIMEOUT_S = 2.0  # how long ``subscribe`` waits for Redis to confirm
BACKOFF_MIN_S = 0.05  # reconnect backoff bounds: short, so a Redis restart heals fast
BACKOFF_MAX_S = 0.5
CONNECT_TIMEOUT_S = 1.0  # a subscriber's connect, unless the URL says otherwise
# Messages read from Redis and not yet handled, per subscriber connection: beyond this the
# connection stops reading (Redis keeps them, up to its pub/sub output buffer limit; past
# that it drops the connection and the catch-up reads the history), below half it reads
# again.
MAX_PENDING_MESSAGES = 10_000


def split_message(message: bytes) -> Numbered:
    """``b"E:N:event"`` → ``(E, N, event)``: E names the room's numbering (it changes
    only if Redis lost the room's events), N is the event's number in it."""
    numbering, number, event = message.split(b":", 2)
    return numbering, int(number), event


class Subscriber(asyncio.Protocol):
    """One subscriber connection, spoken to directly (hiredis parses what arrives), with
    the part of redis-py's ``PubSub`` that ``Listener`` uses: (s)subscribe,
    (s)unsubscribe, ``get_message`` and ``aclose``. Every event of every room a node
    listens to arrives here; redis-py's ``get_message`` cost a timeout, a retry wrapper
    and several coroutine layers per message, here a message already read costs a
    ``popleft``. It connects at its first (s)subscribe; once the connection is lost,
    every call raises (``Listener`` then opens a new one)."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool  # redis-py's pool: its connection settings, not its connections
        self._transport: Any = None
        self._reader = hiredis.Reader()
        self._setup = 0  # replies still due to the connection's AUTH/SELECT
        self._messages: deque[Any] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._lost: Exception | None = None
        self._paused = False

    async def _send(self, *args: Any) -> None:
        if self._lost is not None:
            raise self._lost
        if self._transport is None:
            try:
                transport, setup = await open_connection(self._pool, self, CONNECT_TIMEOUT_S)
            except OSError as exc:  # refused, unreachable, timed out (TimeoutError too)
                self._lost = RedisConnectionError(f"subscriber cannot connect: {exc}")
                raise self._lost from exc
            self._transport = transport
            self._setup = len(setup)
            if setup:
                transport.write(b"".join(setup))
        self._transport.write(pack(args))

    async def subscribe(self, *channels: str) -> None:
        """SUBSCRIBE (the confirmation arrives as a message)."""
        await self._send("SUBSCRIBE", *channels)

    async def ssubscribe(self, channel: str) -> None:
        """SSUBSCRIBE: sharded pub/sub, on Cluster."""
        await self._send("SSUBSCRIBE", channel)

    async def unsubscribe(self, channel: str) -> None:
        """UNSUBSCRIBE."""
        await self._send("UNSUBSCRIBE", channel)

    async def sunsubscribe(self, channel: str) -> None:
        """SUNSUBSCRIBE."""
        await self._send("SUNSUBSCRIBE", channel)

    async def get_message(self, wait_s: float) -> dict[str, Any] | None:
        """The next message (``type``, ``channel``, ``data``, as redis-py gives them),
        waiting at most ``wait_s`` for one; None if none came. Raises once the
        connection is lost (``ConnectionError``) or on an error reply."""
        if not self._messages:
            if self._lost is not None:
                raise self._lost
            waiter = self._waiter = asyncio.get_running_loop().create_future()
            try:
                async with asyncio.timeout(wait_s):
                    await waiter
            except TimeoutError:
                return None
            finally:
                self._waiter = None
            if not self._messages:
                if self._lost is not None:
                    raise self._lost
                return None
        reply = self._messages.popleft()
        if self._paused and len(self._messages) < MAX_PENDING_MESSAGES // 2:
            self._paused = False
            if self._transport is not None:
                self._transport.resume_reading()
        if isinstance(reply, hiredis.ReplyError):
            raise ResponseError(str(reply))
        if not isinstance(reply, list) or len(reply) < 3:
            raise ResponseError(f"not a pub/sub message: {reply!r}")
        return {"type": reply[0], "channel": reply[1], "data": reply[2]}

    async def aclose(self) -> None:
        """Close the connection; later calls raise."""
        if self._lost is None:
            self._lost = RedisConnectionError("subscriber closed")
        transport, self._transport = self._transport, None
        if transport is not None:
            transport.close()

    # -- asyncio.Protocol
    def data_received(self, data: bytes) -> None:
        reader = self._reader
        reader.feed(data)
        try:
            while (reply := reader.gets()) is not False:
                if self._setup:
                    self._setup -= 1
                    if reply != b"OK":
                        self._fail(RedisConnectionError(f"subscriber setup refused: {reply}"))
                        return
                    continue
                self._messages.append(reply)
        except hiredis.HiredisError as exc:  # not the Redis protocol
            self._fail(RedisConnectionError(f"unreadable reply: {exc}"))
            return
        if len(self._messages) >= MAX_PENDING_MESSAGES and not self._paused:
            self._paused = True
            if self._transport is not None:
                self._transport.pause_reading()
        # The listener is woken one callback later: a move's reply read in the same loop
        # turn (another socket) resumes its caller first, so the player's ack is not
        # queued behind the node handling the move's own event.
        if self._waiter is not None:
            asyncio.get_running_loop().call_soon(self._wake)

    def connection_lost(self, exc: Exception | None) -> None:
        self._transport = None
        if self._lost is None:
            self._lost = RedisConnectionError(f"subscriber connection lost: {exc}" if exc
                                              else "subscriber connection closed by Redis")
        self._wake()

    def _fail(self, error: Exception) -> None:
        self._lost = error
        transport, self._transport = self._transport, None
        if transport is not None:
            transport.abort()
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


class Listener:
    """One subscriber connection and the channels it should be subscribed to. A
    background task keeps it connected and subscribed, and delivers events in order."""

    def __init__(
        self, client: Redis, sharded: bool, dispatch: Dispatch, history: History, name: str,
        on_failure: Callable[[Listener], Awaitable[None]] | None = None,
    ) -> None:
        self._client = client
        self._on_failure = on_failure
        self._sharded = sharded
        self._dispatch = dispatch
        self._history = history
        self.name = name
        # channel -> (numbering, last event number delivered)
        self._last: dict[str, tuple[bytes, int]] = {}
        self._waiters: dict[str, asyncio.Future[None]] = {}
        self._pubsub: Subscriber | None = None  # the live one, or None while (re)connecting
        self._lock = asyncio.Lock()  # serialises (un)subscribe commands and (re)connects
        self._wake = asyncio.Event()
        self._task = asyncio.create_task(self._run(), name=f"redis-listener-{name}")

    @property
    def connected(self) -> bool:
        """True while the subscriber connection is up."""
        return self._pubsub is not None

    @property
    def channels(self) -> list[str]:
        """The channels this listener serves."""
        return list(self._last)

    def position(self, channel: str) -> tuple[bytes, int] | None:
        """(numbering, last event number delivered) for ``channel``."""
        return self._last.get(channel)

    async def add(self, channel: str, since: tuple[bytes, int] | None = None) -> None:
        """Subscribe to ``channel`` and wait until Redis confirms it; StoreUnavailable if
        it cannot (then nothing changed). Events after ``since`` (a ``position`` of
        another listener, when a channel moves) or else after now are delivered."""
        if since is None:
            numbering, counter, _ = await self._history(channel)
            since = (numbering, counter)
        self._last[channel] = since
        waiter = asyncio.get_running_loop().create_future()
        self._waiters[channel] = waiter
        self._wake.set()
        async with self._lock:
            if self._pubsub is not None:
                with contextlib.suppress(RedisError, OSError):  # the run loop reconnects
                    await self._subscribe(self._pubsub, [channel])
        try:
            await asyncio.wait_for(asyncio.shield(waiter), CONFIRM_TIMEOUT_S)
        except TimeoutError:
            await self.remove(channel)
            message = f"redis did not confirm the subscription to {channel}"
            raise StoreUnavailable(message) from None
        except StoreUnavailable:
            await self.remove(channel)
            raise

    def restore(self, channel: str, since: tuple[bytes, int]) -> None:
        """Take ``channel`` back without waiting (its next reconnect subscribes it)."""
        self._last[channel] = since
        self._wake.set()

    async def remove(self, channel: str) -> None:
        """Stop listening to ``channel`` (best effort on the wire: a reconnect forgets it).
        A channel this listener does not serve is left alone (on Cluster, unsubscribing
        from another master's channel is answered with MOVED)."""
        if channel not in self._last and channel not in self._waiters:
            return
        self._last.pop(channel, None)
        waiter = self._waiters.pop(channel, None)
        if waiter is not None and not waiter.done():
            waiter.cancel()
        async with self._lock:
            if self._pubsub is not None:
                with contextlib.suppress(RedisError, OSError):
                    if self._sharded:
                        await self._pubsub.sunsubscribe(channel)
                    else:
                        await self._pubsub.unsubscribe(channel)

    async def close(self) -> None:
        """Stop the task and drop the connection."""
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _subscribe(self, pubsub: Subscriber, channels: list[str]) -> None:
        if self._sharded:
            # one SSUBSCRIBE per channel: a master serves many slots, and one command
            # naming channels of two slots is refused (CROSSSLOT)
            for channel in channels:
                await pubsub.ssubscribe(channel)
        elif channels:
            await pubsub.subscribe(*channels)

    async def _run(self) -> None:
        backoff = BACKOFF_MIN_S
        while True:
            if not self._last:
                self._wake.clear()
                await self._wake.wait()
                continue
            pubsub = Subscriber(self._client.connection_pool)
            try:
                async with self._lock:
                    await self._subscribe(pubsub, sorted(self._last))
                    self._pubsub = pubsub
                if backoff > BACKOFF_MIN_S:
                    log.info("redis subscriber %s reconnected", self.name)
                backoff = BACKOFF_MIN_S
                while True:
                    message = await pubsub.get_message(1.0)
                    if message is not None:
                        await self._handle(message)
            except Exception as exc:  # any failure: RedisError, OSError, a closed handler
                log.warning("redis subscriber %s lost its connection: %s: %s", self.name,
                            type(exc).__name__, exc)
                # whoever waits for a confirmation hears now, not at the timeout
                for channel, waiter in list(self._waiters.items()):
                    if not waiter.done():
                        waiter.set_exception(StoreUnavailable(f"redis unreachable: {exc}"))
                        self._waiters.pop(channel)
            finally:
                self._pubsub = None
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
            if self._on_failure is not None:
                try:
                    await self._on_failure(self)
                except Exception:
                    log.exception("redis subscriber %s: failure handling failed", self.name)
            await asyncio.sleep(backoff)  # reconnect backoff, not synchronisation
            backoff = min(backoff * 2, BACKOFF_MAX_S)

    async def _handle(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        kind = kind.decode() if isinstance(kind, bytes) else kind
        channel = message["channel"]
        channel = channel.decode() if isinstance(channel, bytes) else channel
        if kind in ("message", "smessage"):
            try:
                numbering, number, event = split_message(message["data"])
            except ValueError:
                log.error("malformed event on %s dropped", channel)
                return
            state = self._last.get(channel)
            if state is None:
                return  # not (or no longer) subscribed
            if numbering != state[0] or number > state[1] + 1:
                await self._catch_up(channel)  # a gap: deliver what was missed first
            elif number == state[1] + 1:
                self._last[channel] = (numbering, number)
                await self._dispatch(channel, event)
            # else: already delivered by a catch-up
        elif kind in ("subscribe", "ssubscribe"):
            # (re)subscribed: events published while we were not listening are in the
            # history; deliver them before anything newer
            await self._catch_up(channel)
            waiter = self._waiters.pop(channel, None)
            if waiter is not None and not waiter.done():
                waiter.set_result(None)

    async def _catch_up(self, channel: str) -> None:
        state = self._last.get(channel)
        if state is None:
            return
        numbering, counter, history = await self._history(channel)
        known, last = state
        if numbering != known:  # a new numbering (first event, or Redis lost the room's)
            if known:
                log.warning("events of %s were lost by redis (new numbering)", channel)
            last = 0
        elif counter < last:
            log.warning("events of %s were lost by redis (counter %d < %d)", channel, counter, last)
        self._last[channel] = (numbering, last)
        if history and history[0][1] > last + 1 and known == numbering:
            lost = history[0][1] - last - 1
            log.warning("%d events of %s fell out of the history", lost, channel)
        for entry_numbering, number, event in history:
            if entry_numbering == numbering and number > last and channel in self._last:
                last = number
                self._last[channel] = (numbering, number)
                await self._dispatch(channel, event)


class Bus:
    """The handlers of every room this process listens to, and the listeners that feed
    them: one for a standalone Redis; on Cluster one per master, chosen by the room's
    slot. When a Cluster master fails over (or a slot moves), the listener that lost its
    master refreshes the slot map and moves its rooms to their new masters' listeners,
    from the last event it delivered (so the catch-up covers the switch)."""

    def __init__(
        self, client: Redis | RedisCluster, cluster: bool, history: History,
        node_options: dict[str, Any],
    ) -> None:
        self._client: Any = client
        self._cluster = cluster
        self._history = history
        self._node_options = node_options
        self._handlers: dict[str, list[EventHandler]] = {}
        self._listeners: dict[str, Listener] = {}
        self._node_clients: list[Redis] = []

    async def subscribe(self, channel: str, handler: EventHandler) -> None:
        """Register ``handler``; the room's first handler subscribes (see Listener.add)."""
        handlers = self._handlers.setdefault(channel, [])
        handlers.append(handler)
        if len(handlers) > 1:
            return
        try:
            listener = await self._listener_for(channel)
            await listener.add(channel)
        except BaseException:
            handlers.remove(handler)
            if not handlers:
                del self._handlers[channel]
            raise

    async def unsubscribe(self, channel: str, handler: EventHandler) -> None:
        """Forget ``handler``; the room's last one unsubscribes."""
        handlers = self._handlers.get(channel)
        if not handlers or handler not in handlers:
            return
        handlers.remove(handler)
        if not handlers:
            del self._handlers[channel]
            for listener in list(self._listeners.values()):
                await listener.remove(channel)

    async def close(self) -> None:
        """Stop every listener and close their connections."""
        for listener in self._listeners.values():
            await listener.close()
        self._listeners.clear()
        for client in self._node_clients:
            await client.aclose()

    async def _dispatch(self, channel: str, event: bytes) -> None:
        for handler in list(self._handlers.get(channel, ())):
            await call_handler(handler, event)

    async def _listener_for(self, channel: str) -> Listener:
        if not self._cluster:
            if "main" not in self._listeners:
                self._listeners["main"] = Listener(
                    self._client, False, self._dispatch, self._history, "main"
                )
            return self._listeners["main"]
        try:
            async with asyncio.timeout(CONFIRM_TIMEOUT_S):
                await self._client.initialize()
        except Exception as exc:  # RedisError, OSError, timeout, a closed handler...
            raise StoreUnavailable(f"redis cluster unreachable: {exc!r}") from exc
        return self._node_listener(self._client.get_node_from_key(channel))

    def _node_listener(self, node: Any) -> Listener:
        if node.name not in self._listeners:
            client = Redis(host=node.host, port=node.port, **self._node_options)
            self._node_clients.append(client)
            self._listeners[node.name] = Listener(
                client, True, self._dispatch, self._history, node.name, self._reroute
            )
        return self._listeners[node.name]

    async def _reroute(self, listener: Listener) -> None:
        """``listener`` lost its master: if the slot map now names other masters for its
        rooms, move them there."""
        if not listener.channels:
            return
        try:
            async with asyncio.timeout(CONFIRM_TIMEOUT_S):
                await self._client.nodes_manager.initialize()
        except Exception as exc:  # RedisError, OSError, timeout, a closed handler...
            log.info("cluster slot map not refreshed (%r); retrying", exc)
            return
        for channel in listener.channels:
            node = self._client.get_node_from_key(channel)
            since = listener.position(channel)
            if node.name == listener.name or since is None:
                continue
            log.warning("room channel %s moved from %s to %s", channel, listener.name, node.name)
            await listener.remove(channel)
            try:
                await self._node_listener(node).add(channel, since=since)
            except StoreUnavailable:
                listener.restore(channel, since)  # the next failure tries again
