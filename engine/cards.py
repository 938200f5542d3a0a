"""Cards as small integers, and their two-letter codes.

A card is ``suit * 13 + (rank - 1)``: suits in the order S H D C, ranks 1 (Ace) .. 13
(King). Integers keep the hot paths (legal moves, play) cheap; codes such as ``"TD"``
are what crosses every boundary (layouts, diffs, the wire).
"""

from __future__ import annotations

from .errors import BadLayout

SUITS = "SHDC"
RANKS = "A23456789TJQK"
ACE = 1
KING = 13

CODES: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
_BY_CODE: dict[str, int] = {code: i for i, code in enumerate(CODES)}


def rank(card: int) -> int:
    """The card's rank, 1 (Ace) .. 13 (King)."""
    return card % 13 + 1


def suit(card: int) -> int:
    """The card's suit index: 0 S, 1 H, 2 D, 3 C."""
    return card // 13


def make(rank_: int, suit_: int) -> int:
    """The card of that rank (1..13) and suit index (0..3)."""
    return suit_ * 13 + rank_ - 1


def code(card: int) -> str:
    """The two-letter code of a card, e.g. ``"KH"``."""
    return CODES[card]


def parse(text: object) -> int:
    """The card with this code; raises ``BadLayout`` naming the bad code otherwise."""
    if not isinstance(text, str):
        raise BadLayout(f"a card must be a two-letter code like 'TD', not {text!r}")
    card = _BY_CODE.get(text)
    if card is None:
        raise BadLayout(
            f"{text!r} is not a card code: use a rank of {RANKS} then a suit of {SUITS}, "
            "upper case (e.g. 'TD')"
        )
    return card
