"""A reference re-implementation of the seeded shuffle, the deals and the state hash,
written from docs/DEALS.md's words alone: it imports nothing from the engine, so tests
that take their expected values from it check the engine against a second method."""

from __future__ import annotations

import hashlib
from typing import Any

# Written from docs/DEALS.md: SplitMix64, rejection sampling, Fisher-Yates from the end.
M = 2**64


def ref_outputs(seed: int, count: int) -> list[int]:
    state, out = seed, []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) % M
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % M
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % M
        out.append(z ^ (z >> 31))
    return out


def ref_deck(seed: int) -> list[str]:
    draws = iter(ref_outputs(seed, 200))  # 51 draws, plus room for rejections
    deck = [r + s for s in "SHDC" for r in "A23456789TJQK"]
    for i in range(51, 0, -1):
        n = i + 1
        x = next(draws)
        while x >= M - M % n:
            x = next(draws)
        j = x % n
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def ref_rows(cards: list[str], counts: list[int]) -> list[list[str]]:
    piles: list[list[str]] = [[] for _ in counts]
    it = iter(cards)
    for row in range(max(counts)):
        for k, count in enumerate(counts):
            if row < count:
                piles[k].append(next(it))
    return piles


def ref_kings_down(pile: list[str]) -> list[str]:
    return [c for c in pile if c[0] == "K"] + [c for c in pile if c[0] != "K"]


def ref_deal(variant: str, seed: int, options: dict[str, Any]) -> list[tuple[list[str], list[str]]]:
    """(face-down, face-up) per pile."""
    deck = ref_deck(seed)
    if variant == "brisbane":
        down = ref_rows(deck[:21], [0, 1, 2, 3, 4, 5, 6])
        up = ref_rows(deck[21:], [5, 5, 5, 4, 4, 4, 4])
        return list(zip(down, up, strict=True))
    if variant == "fortress":
        piles = ref_rows(deck, [6, 6] + [5] * 8)
    elif variant == "perseverance":
        piles = ref_rows([c for c in deck if c[0] != "A"], [4] * 12)
    else:
        piles = ref_rows(deck, [4] * 13)
    if options.get("kings_to_bottom"):
        piles = [ref_kings_down(p) for p in piles]
    return [([], p) for p in piles]


def ref_hash(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("ascii")).digest()[:4], "big")


