"""Brisbane: 7 piles, pile k with k-1 face-down cards under 5 (piles 1-3) or 4 (piles
4-7) face-up ones; Yukon group moves building down regardless of suit; a King (or, with
``empty_pile=any``, any card) fills an empty pile; a face-down top card turns up at once."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import (
    EMPTY_ANY,
    EMPTY_KING,
    YUKON,
    OptionSpec,
    Rules,
    Variant,
    build_down_any_suit,
    deal_rows,
)

_FITS = build_down_any_suit()
DOWN_COUNTS = [0, 1, 2, 3, 4, 5, 6]
UP_COUNTS = [5, 5, 5, 4, 4, 4, 4]


class Brisbane(Variant):
    name = "brisbane"
    title = "Brisbane"
    piles = 7
    options = {"empty_pile": OptionSpec("king", choices=("king", "any"))}

    def deal(
        self, deck: list[int], options: Mapping[str, Any]
    ) -> tuple[list[list[int]], list[int], list[int]]:
        down, pos = deal_rows(deck, DOWN_COUNTS)
        up, _ = deal_rows(deck, UP_COUNTS, pos)
        return [d + u for d, u in zip(down, up, strict=True)], list(DOWN_COUNTS), [0, 0, 0, 0]

    def make_rules(self, options: Mapping[str, Any]) -> Rules:
        empty = EMPTY_ANY if options["empty_pile"] == "any" else EMPTY_KING
        return Rules(7, YUKON, empty, _FITS, False, 0, False, True)
