"""Per-room events over Redis pub/sub, for ``RedisStore``.

One subscriber connection per process (on Redis Cluster: one per master that owns a room
this process listens to, with sharded pub/sub: ``SSUBSCRIBE``/``SPUBLISH``, so an event
only travels to the shard that owns the room). Events are fanned out locally to every
handler registered for the room.

Delivery is Redis pub/sub's: at most once, in publish order per room. A subscription is
confirmed by Redis before ``subscribe`` returns, so an event published after that is
delivered unless the connection drops. When it drops, the listener reconnects with a
short backoff and subscribes to every room again; events published meanwhile are lost,
so consumers must treat events as hints and read the store (logs, seats) to catch up.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

from .base import EventHandler, StoreUnavailable

log = logging.getLogger("solrace.store.redis")

Dispatch = Callable[[str, bytes], Awaitable[None]]

# How long ``subscribe`` waits for Redis to confirm a new subscription.
CONFIRM_TIMEOUT_S = 2.0
# Reconnect backoff bounds (seconds); short so that a Redis restart heals quickly.
BACKOFF_MIN_S = 0.05
BACKOFF_MAX_S = 1.0


class Listener:
    """One subscriber connection and the channels it should be subscribed to. A
    background task keeps it connected and subscribed, and passes messages on."""

    def __init__(self, client: Redis, sharded: bool, dispatch: Dispatch, name: str) -> None:
        self._client = client
        self._sharded = sharded
        self._dispatch = dispatch
        self.name = name
        self._channels: set[str] = set()
        self._waiters: dict[str, asyncio.Future[None]] = {}
        self._pubsub: Any = None  # the live PubSub, or None while (re)connecting
        self._lock = asyncio.Lock()  # serialises (un)subscribe commands and (re)connects
        self._wake = asyncio.Event()
        self._task = asyncio.create_task(self._run(), name=f"redis-listener-{name}")

    @property
    def connected(self) -> bool:
        """True while the subscriber connection is up."""
        return self._pubsub is not None

    async def add(self, channel: str) -> None:
        """Subscribe to ``channel`` and wait until Redis confirms it; StoreUnavailable if
        it cannot be confirmed in time (the channel is then dropped again)."""
        self._channels.add(channel)
        waiter = self._waiters.get(channel)
        if waiter is None or waiter.done():
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

    async def remove(self, channel: str) -> None:
        """Stop listening to ``channel`` (best effort on the wire: a reconnect forgets it)."""
        self._channels.discard(channel)
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

    async def _subscribe(self, pubsub: Any, channels: list[str]) -> None:
        if channels:
            if self._sharded:
                await pubsub.ssubscribe(*channels)
            else:
                await pubsub.subscribe(*channels)

    async def _run(self) -> None:
        backoff = BACKOFF_MIN_S
        while True:
            if not self._channels:
                self._wake.clear()
                await self._wake.wait()
                continue
            pubsub = self._client.pubsub()
            try:
                async with self._lock:
                    await self._subscribe(pubsub, sorted(self._channels))
                    self._pubsub = pubsub
                if backoff > BACKOFF_MIN_S:
                    log.info("redis subscriber %s reconnected", self.name)
                backoff = BACKOFF_MIN_S
                while True:
                    message = await pubsub.get_message(timeout=1.0)
                    if message is not None:
                        await self._handle(message)
            except (RedisError, OSError) as exc:
                log.warning("redis subscriber %s lost its connection: %s", self.name, exc)
                # whoever waits for a confirmation hears now, not at the timeout
                for channel, waiter in list(self._waiters.items()):
                    if not waiter.done():
                        waiter.set_exception(StoreUnavailable(f"redis unreachable: {exc}"))
                        self._waiters.pop(channel)
            finally:
                self._pubsub = None
                with contextlib.suppress(Exception):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]
            await asyncio.sleep(backoff)  # reconnect backoff, not synchronisation
            backoff = min(backoff * 2, BACKOFF_MAX_S)

    async def _handle(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        kind = kind.decode() if isinstance(kind, bytes) else kind
        channel = message["channel"]
        channel = channel.decode() if isinstance(channel, bytes) else channel
        if kind in ("message", "smessage"):
            await self._dispatch(channel, message["data"])
        elif kind in ("subscribe", "ssubscribe"):
            waiter = self._waiters.get(channel)
            if waiter is not None and not waiter.done():
                waiter.set_result(None)


async def call_handler(handler: EventHandler, event: bytes) -> None:
    """Run one handler; its failure is logged and never stops the listener."""
    try:
        result = handler(event)
        if inspect.isawaitable(result):
            await result
    except Exception:
        log.exception("event handler %r failed", handler)
