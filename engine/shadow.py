"""A playable stand-in for a masked view, for clients.

A client knows only its view (face-down cards as counts), yet bots and UIs need the legal
moves. Legal moves never depend on which cards are face down, only on how many, so a game
whose face-down slots are filled with the unseen cards in a fixed order has exactly the
real game's legal moves. Its ``play()`` is exact too except for the card a flip reveals:
clients take that from the server's diff, never from this game.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import cards as C
from .errors import BadLayout
from .game import Game


def game_from_view(view: Mapping[str, Any]) -> Game:
    """A ``Game`` with the view's face-up cards and foundations; face-down cards are the
    unseen ones in card order. ``legal_moves()``, ``progress``, ``won`` and ``stuck`` are
    those of the real game. Raises ``BadLayout`` for a malformed view."""
    if not isinstance(view, Mapping) or not isinstance(view.get("tableau"), list):
        raise BadLayout("a view must be an object with a 'tableau' list")
    seen: set[int] = set()
    for pile in view["tableau"]:
        if not isinstance(pile, Mapping) or not isinstance(pile.get("up"), list):
            raise BadLayout("each pile of a view must have an 'up' list")
        seen.update(C.parse(code) for code in pile["up"])
    found = view.get("foundations")
    if isinstance(found, Mapping):
        for s_index, s in enumerate(C.SUITS):
            height = found.get(s, 0)
            if isinstance(height, int):
                seen.update(C.make(r, s_index) for r in range(1, min(height, 13) + 1))
    unseen = [C.CODES[c] for c in range(52) if c not in seen]
    tableau = []
    for pile in view["tableau"]:
        down = pile.get("down", 0)
        count = len(down) if isinstance(down, list) else down
        if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= len(unseen):
            raise BadLayout(f"a view's face-down count must be a small integer, not {down!r}")
        tableau.append({"down": unseen[:count], "up": list(pile["up"])})
        del unseen[:count]
    keys = ("variant", "options", "foundations", "redeals_left")
    layout: dict[str, Any] = {k: view[k] for k in keys if k in view}
    layout["tableau"] = tableau
    return Game.from_layout(layout)
