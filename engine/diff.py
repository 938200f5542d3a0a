"""Diffs: what one move changed, small enough to stream and enough to turn one view into
the next without the engine's hidden knowledge.

A diff is the move's canonical notation plus the cards it turned face up. Everything
else (which cards moved, where they went, how a redeal regroups the piles) follows from
the view the diff is applied to, so the receiver needs nothing secret and nothing extra.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .cards import SUITS, parse, rank, suit
from .errors import BadLayout, IllegalMove
from .moves import REDEAL, TABLEAU, TAKEBACK, TO_FOUNDATION, parse_move

REDEAL_GROUP = 4  # Perseverance redeals in groups of four


@dataclass(frozen=True, slots=True)
class Diff:
    """One accepted move: ``move`` in canonical notation, and ``revealed``, the cards it
    turned face up as ``(pile number, card code)`` pairs (empty for most moves)."""

    move: str
    revealed: tuple[tuple[int, str], ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """The diff as plain data: ``{"move": "3>7", "revealed": [[3, "QS"]]}``."""
        return {"move": self.move, "revealed": [list(r) for r in self.revealed]}


# Diffs without reveals, by move: a diff is immutable, so one instance per move string
# serves every game (building a frozen dataclass costs more than the move itself).
_PLAIN: dict[str, Diff] = {}
_PLAIN_MAX = 4096


def plain_diff(move: str) -> Diff:
    """``Diff(move)`` (nothing revealed), shared between calls."""
    diff = _PLAIN.get(move)
    if diff is None:
        diff = Diff(move)
        if len(_PLAIN) < _PLAIN_MAX:
            _PLAIN[move] = diff
    return diff


def apply_diff(view: dict[str, Any], diff: Diff) -> dict[str, Any]:
    """The view after ``diff``: a new dict, ``view`` itself is not changed.

    ``view`` is a player view (``Game.view()``: face-down cards as counts). Raises
    ``IllegalMove`` if the diff cannot apply to that view (a desynced receiver)."""
    # Copy only what a move can change (piles, foundations): a deep copy of the whole
    # view was most of a client's CPU per move.
    out = dict(view)
    out["tableau"] = [{**p, "up": list(p["up"])} for p in view["tableau"]]
    out["foundations"] = dict(view["foundations"])
    if isinstance(view.get("options"), dict):
        out["options"] = dict(view["options"])
    piles: list[dict[str, Any]] = out["tableau"]
    found: dict[str, int] = out["foundations"]
    mv = parse_move(diff.move)

    def pile(number: int) -> dict[str, Any]:
        if not 1 <= number <= len(piles):
            raise IllegalMove(f"diff {diff.move!r} names pile {number}, which does not exist")
        return piles[number - 1]

    def take(number: int, n: int) -> list[str]:
        up: list[str] = pile(number)["up"]
        if len(up) < n:
            raise IllegalMove(f"diff {diff.move!r}: pile {number} has {len(up)} face-up cards")
        moved = up[len(up) - n :]
        del up[len(up) - n :]
        return moved

    if mv.kind == TABLEAU:
        pile(mv.dst)["up"].extend(take(mv.src, mv.n))
    elif mv.kind == TO_FOUNDATION:
        (card,) = take(mv.src, 1)
        s = SUITS[suit(parse(card))]
        if found[s] != rank(parse(card)) - 1:
            raise IllegalMove(f"diff {diff.move!r}: {card} does not go on the {s} foundation")
        found[s] += 1
    elif mv.kind == TAKEBACK:
        s = SUITS[mv.src]
        if found[s] < 1:
            raise IllegalMove(f"diff {diff.move!r}: the {s} foundation is empty")
        pile(mv.dst)["up"].append("A23456789TJQK"[found[s] - 1] + s)
        found[s] -= 1
    elif mv.kind == REDEAL:
        cards = [c for p in piles for c in p["up"]]
        for i, p in enumerate(piles):
            p["down"], p["up"] = 0, cards[i * REDEAL_GROUP : (i + 1) * REDEAL_GROUP]
        out["redeals_left"] -= 1
    for number, code in diff.revealed:
        p = pile(number)
        if p["up"] or p["down"] < 1:
            raise IllegalMove(f"diff {diff.move!r} reveals a card on pile {number}, which has none")
        try:
            parse(code)
        except BadLayout as exc:
            raise IllegalMove(f"diff {diff.move!r} reveals a bad card: {exc}") from None
        p["down"] -= 1
        p["up"] = [code]
    return out
