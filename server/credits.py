"""Token buckets: the per-connection message budget and the ping budget."""

from __future__ import annotations

from collections.abc import Callable


class Credits:
    """A token bucket: ``burst`` credits, refilled at ``per_s`` a second (lila-ws style),
    as seconds pass on ``clock`` (monotonic; injectable so tests control the refill)."""

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
