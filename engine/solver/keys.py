"""Zobrist keys for the transposition table.

A tableau is a set of piles; a pile is a chain of cards, each lying on the card below it
or on the table. The set of pairs (card, what it lies on) therefore fixes the tableau up
to the order of the piles, so the XOR of one random key per pair is a position key that
ignores pile order. Foundations need no key of their own: every card not in the tableau
is on its foundation. Variants where pile order matters (Perseverance's redeal) key a
bottom card by its pile number instead of "the table" (``ON_PILE + pile``).

Moving a group of cards changes one pair (its bottom card's support), so a key is
updated in O(1) per move. Keys are 120 bits: with n positions in one search the chance
that two distinct ones share a key is about n**2 / 2**121 (below 1e-23 for n = 10**7),
so a false "already searched" -- the only way a collision could mislead the search --
is not a practical concern.
"""

from __future__ import annotations

import random

BITS = 120
ON_TABLE = 52  # the support of a pile's bottom card in an order-free key
ON_PILE = 52  # ON_PILE + pile index: the support of a bottom card in an ordered key
SUPPORTS = ON_PILE + 16  # card supports (52 cards, table or one of up to 16 piles)

_rng = random.Random(0x50_1A_CE)  # fixed: keys are only compared within one process
PAIR: tuple[int, ...] = tuple(_rng.getrandbits(BITS) for _ in range(52 * SUPPORTS))
FACE_DOWN: tuple[int, ...] = tuple(_rng.getrandbits(BITS) for _ in range(52))
_REDEAL_MULTIPLIER = _rng.getrandbits(BITS) | 1  # odd: distinct counts get distinct keys


def pair(card: int, support: int) -> int:
    """The key of ``card`` lying on ``support`` (a card 0..51, or ``ON_TABLE``)."""
    return PAIR[card * SUPPORTS + support]


def redeals_key(left: int) -> int:
    """The key of having ``left`` redeals left: an odd multiplier makes it one-to-one
    for every count below 2**120."""
    return (left * _REDEAL_MULTIPLIER) & ((1 << BITS) - 1)


def order_free_key(piles: list[list[int]]) -> int:
    """The key of a tableau where pile order does not matter."""
    h = 0
    for p in piles:
        below = ON_TABLE
        for c in p:
            h ^= PAIR[c * SUPPORTS + below]
            below = c
    return h


def ordered_key(piles: list[list[int]]) -> int:
    """The key of a tableau where pile order matters (bottom cards keyed by pile)."""
    h = 0
    for i, p in enumerate(piles):
        below = ON_PILE + i
        for c in p:
            h ^= PAIR[c * SUPPORTS + below]
            below = c
    return h
