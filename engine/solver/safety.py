"""Which foundation moves are safe to play at once, per variant (see docs/SOLVER.md).

A move is *safe* when it dominates: if the position before it is winnable, so is the
position after it. Safe moves are played automatically, which prunes the search without
losing solutions. The rules below are proven in docs/SOLVER.md ("Safe foundation
moves"); each is a bound on the rank index (rank - 1) of a card that may go up at once,
on top of the card being the next one its foundation needs.

- ``NONE``: nothing is played automatically (Fortress with foundation takeback,
  Perseverance with ``redeal_when=any_time`` and a redeal left: there a foundation move
  shifts how the next redeal groups the cards).
- ``ACES``: Aces only (Spanish with foundation takeback: nothing is ever built on an Ace).
- ``BELOW_MIN``: a card whose rank is at most one above every foundation, i.e. every
  card one rank lower is already up, so nothing can ever be built on it again (Brisbane:
  building down regardless of suit with group moves, no takeback).
- ``OTHERS_PLUS_2``: a card whose rank is at most two above each *other* foundation
  (building down regardless of suit, one card at a time, no takeback: Portuguese,
  Spanish). A card that could still be built on it is one rank lower and is itself the
  next card of its foundation, with nothing ever buildable on it: it can go up instead.
  (This is Solvitaire's rule for any-suit building.)
- ``ANY``: every foundation move (building in suit without takeback: Fortress,
  Perseverance). Only same-suit neighbours interact with a card, and those can follow
  it to the foundation.
"""

from __future__ import annotations

from enum import IntEnum


class AutoRule(IntEnum):
    """Which foundation moves a variant plays automatically."""

    NONE = 0
    ACES = 1
    BELOW_MIN = 2
    OTHERS_PLUS_2 = 3
    ANY = 4


def rank_limits(rule: AutoRule, found: list[int]) -> list[int]:
    """Per suit, the highest rank index (rank - 1) that may go up automatically now
    (-1: none). The card must also be the next one its foundation needs."""
    if rule == AutoRule.ANY:
        return [12, 12, 12, 12]
    if rule == AutoRule.OTHERS_PLUS_2:
        s, h, d, c = found
        # rank <= min(other heights) + 2, as a rank index: <= min(others) + 1
        return [min(h, d, c) + 1, min(s, d, c) + 1, min(s, h, c) + 1, min(s, h, d) + 1]
    if rule == AutoRule.BELOW_MIN:
        m = min(found)
        return [m, m, m, m]
    if rule == AutoRule.ACES:
        return [0, 0, 0, 0]
    return [-1, -1, -1, -1]
