"""A seat's standing at the start of a race, from the deal alone.

Every seat races the same deal, so every seat starts with the deal's progress (the cards
the deal itself puts on the foundations: 4 in Perseverance, whose Aces start there) and,
if the deal offers no legal move at all, is stuck from the first instant.
"""

from __future__ import annotations

from dataclasses import dataclass

import engine
from protocol.messages import SeatStatus


@dataclass(frozen=True)
class Opening:
    """What every seat's record says when the race starts."""

    status: SeatStatus  # "playing", or "stuck" when the deal has no legal move
    progress: int  # cards on the foundations before any move


def opening(fresh: engine.Game) -> Opening:
    """The standing of a seat that has not moved yet on the deal ``fresh``."""
    return Opening("stuck" if fresh.stuck else "playing", fresh.progress)
