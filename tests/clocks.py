"""Clocks that tests move by hand (docs/TESTING.md: code that reads time takes its clock
as an input, e.g. ``ServerConfig.monotonic``)."""

from __future__ import annotations


class HandClock:
    """A monotonic clock (seconds) that moves only when the test says so."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
