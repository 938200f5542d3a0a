"""Token buckets: the per-connection message budget, the ping budget and the node's
handshake budget."""

from __future__ import annotations

from collections.abc import Callable


class Credits:
    """A token bucket: ``burst`` credits, refilled at ``per_s`` a second (lila-ws style),
    as seconds pass on ``clock`` (monotonic; injectable so tests control the refill)."""

    # Two per connection (messages, pings): slots keep them ~200 bytes smaller each.
    __slots__ = ("at", "burst", "clock", "credits", "per_s")

    def __init__(self, burst: int, per_s: float, clock: Callable[[], float]) -> None:
        self.burst, self.per_s, self.clock = burst, per_s, clock
        self.credits = float(burst)
        self.at = clock()

    def take(self, cost: int = 1) -> bool:
        """Spend ``cost`` credits if there are that many (else spend none)."""
        now = self.clock()
        self.credits = min(self.burst, self.credits + (now - self.at) * self.per_s)
        self.at = now
        if self.credits >= cost:
            self.credits -= cost
            return True
        return False


# An address with fewer handshakes than this in the last minute is "light": a person
# connecting or reconnecting a few times, or a health checker (the k8s manifest's
# readiness and liveness probes make 18 a minute from the kubelet's address; HAProxy is a
# trusted proxy, light by rule). Only light addresses may use the reserve.
LIGHT_HANDSHAKES = 20
RESERVE_SHARE = 4  # a quarter of the handshake budget is kept for light addresses


class Handshakes:
    """The node's budget of admitted connections (each one a websocket handshake):
    ``per_s`` a second, bursts of ``burst``, whatever address they come from.

    Three quarters of it is shared by everyone; a quarter (``RESERVE_SHARE``) is kept for
    addresses with fewer than ``LIGHT_HANDSHAKES`` handshakes in the last minute, so a
    few addresses opening connections as fast as they are admitted cannot starve a player
    who reconnects once: they empty the shared part, never the reserve. Together the two
    never admit more than ``per_s`` a second (``burst`` at once)."""

    def __init__(self, burst: int, per_s: float, clock: Callable[[], float]) -> None:
        reserve = burst // RESERVE_SHARE
        self.shared = Credits(burst - reserve, per_s - per_s / RESERVE_SHARE, clock)
        self.reserve = Credits(reserve, per_s / RESERVE_SHARE, clock)

    def take(self, recent: int) -> bool:
        """Spend one handshake for an address that made ``recent`` handshakes in the last
        minute: True if the shared budget, or (for a light address) the reserve, had
        one; False spends nothing."""
        if self.shared.take():
            return True
        return recent < LIGHT_HANDSHAKES and self.reserve.take()
