"""What the play screen's key line offers, for the variant being played: only the keys
that do something in it (no redeal key outside Perseverance, no hint key in a room without
hints, pile keys only up to the last pile)."""

from __future__ import annotations

from .render import PILE_KEYS

# Variants whose moves can carry several cards (a Yukon group, a same-suit run): the
# ones where + and - choose how many cards a pile key moves.
GROUP_VARIANTS = frozenset({"brisbane", "perseverance"})
REDEAL_VARIANTS = frozenset({"perseverance"})

KEYS_LOBBY = "y ready · s start now (creator) · ? rules · q quit"
KEYS_DONE = "n next deal (rematch) · ? rules · q quit"


def pile_range(piles: int) -> str:
    """The pile keys of a board with ``piles`` piles: ``1-7``, ``1-9 0``, ``1-9 0 a-c``."""
    piles = max(1, min(piles, len(PILE_KEYS)))
    if piles <= 9:
        return f"1-{piles}"
    if piles == 10:
        return "1-9 0"
    last = PILE_KEYS[piles - 1]
    return "1-9 0 a" if last == "a" else f"1-9 0 a-{last}"


def race_keys(variant: str, piles: int, hints: bool) -> str:
    """The keys while racing, for ``variant`` with ``piles`` piles (``fit`` folds them
    into the screen's width)."""
    parts = [f"{pile_range(piles)} pile"]
    if variant in GROUP_VARIANTS:
        parts.append("+/- cards")
    parts.append("f found.")
    if variant in REDEAL_VARIANTS:
        parts.append("r redeal")
    if hints:
        parts.append("h hint")
    parts += [": type", "t auto", "x resign", "? rules", "q quit"]
    return SEP.join(parts)


SEP = " · "


def fit(keys: str, width: int) -> str:
    """``keys`` folded into lines of at most ``width`` cells, breaking only between
    items, so no key is ever cut off."""
    lines: list[str] = []
    for part in keys.split(SEP):
        if lines and len(lines[-1]) + len(SEP) + len(part) <= width:
            lines[-1] += SEP + part
        else:
            lines.append(part)
    return "\n".join(lines)
