"""Keepalive pings for every connection of the node, from one timer.

websockets' own keepalive runs a task per connection (the task, its coroutine, a sleep
future and its timer: ~1.7 KiB and ~15 garbage-collected objects per idle connection,
docs/BENCHMARKS.md "Idle connections: fewer objects"). This does the same work with one
repeating timer for the whole node:

- every connection that is open gets an empty ping about every ``interval_s`` seconds
  (``GuardedConnection.send_keepalive_ping``); any pong it sends answers it;
- a connection whose ping is still unanswered ``timeout_s`` after it was sent is failed
  as websockets' keepalive fails it: close code 1011, "keepalive ping timeout", the TCP
  connection dropped after the close timeout (``GuardedConnection.ping_timed_out``).

The connections are visited in ``SLICES`` slices per interval, one slice per timer
call, so a node holding 10,000 connections never writes 10,000 pings in one loop turn;
a connection stays in one slice for its life (``slice_of``), so it is visited once per
interval. Its first ping goes out within one interval of its opening (websockets: one
interval after); an unanswered ping is found at the first visit at least ``timeout_s``
after it: one interval after it at the defaults (20 s, 20 s), as websockets (20 s).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Protocol


class Pingable(Protocol):
    """A connection as the keepalive sees it (``guard.GuardedConnection``)."""

    ping_sent: float | None

    def send_keepalive_ping(self, now: float) -> None:
        """Send a ping and set ``ping_sent`` to ``now``."""

    def ping_timed_out(self) -> None:
        """Fail the connection: its ping went unanswered."""


# Timer calls per interval. 20 at the default 20 s interval: one call a second, each
# visiting a twentieth of the connections (500 of 10,000: ~5 ms of writes).
SLICES = 20


def slice_of(conn: object) -> int:
    """The slice a connection belongs to, for its life: so it is visited once per
    interval, whatever connections come and go. From its address (stable), mixed by a
    Fibonacci hash: objects allocated one after another have evenly spaced addresses,
    which taken modulo SLICES alone would crowd a few slices."""
    mixed = ((id(conn) >> 4) * 0x9E3779B97F4A7C15) & 0xFFFF_FFFF_FFFF_FFFF
    return (mixed >> 32) % SLICES


class Keepalive:
    """Pings ``connections()`` (see the module docstring) while started."""

    def __init__(self, connections: Callable[[], Iterable[Pingable]], interval_s: float,
                 timeout_s: float | None) -> None:
        if interval_s <= 0:
            raise ValueError(f"keepalive interval must be positive, not {interval_s}")
        self.connections = connections
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self._slice = 0  # the slice of the connections the next call visits
        self._timer: asyncio.TimerHandle | None = None

    def start(self) -> None:
        """Start the timer on the running loop (idempotent)."""
        if self._timer is None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(self.interval_s / SLICES, self._tick)

    def stop(self) -> None:
        """Stop the timer; connections are left as they are."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._slice = 0

    def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(self.interval_s / SLICES, self._tick)
        i = self._slice % SLICES
        # The connections of this slice among those connected now (no snapshot is kept
        # for the round: it would keep closed connections alive until the round ends).
        self.visit([c for c in self.connections() if slice_of(c) == i], loop.time())
        self._slice = i + 1

    def visit(self, connections: Iterable[Pingable], now: float) -> None:
        """Fail each connection whose ping is overdue; ping each with none outstanding."""
        timeout = self.timeout_s
        for conn in connections:
            sent = conn.ping_sent
            if sent is None or timeout is None:  # no timeout: ping on, as websockets does
                conn.send_keepalive_ping(now)
            elif now - sent >= timeout:
                conn.ping_timed_out()
