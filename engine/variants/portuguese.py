"""Portuguese Solitaire: 13 piles of 4 face up, build down regardless of suit, one card
at a time, only a King fills an empty pile."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import (
    EMPTY_KING,
    SINGLE,
    OptionSpec,
    Rules,
    Variant,
    build_down_any_suit,
    deal_rows,
    kings_to_bottom,
)

_FITS = build_down_any_suit()


class Portuguese(Variant):
    name = "portuguese"
    title = "Portuguese Solitaire"
    piles = 13
    options = {"kings_to_bottom": OptionSpec(False)}

    def deal(
        self, deck: list[int], options: Mapping[str, Any]
    ) -> tuple[list[list[int]], list[int], list[int]]:
        piles, _ = deal_rows(deck, [4] * 13)
        if options["kings_to_bottom"]:
            piles = [kings_to_bottom(p) for p in piles]
        return piles, [0] * 13, [0, 0, 0, 0]

    def make_rules(self, options: Mapping[str, Any]) -> Rules:
        return Rules(13, SINGLE, EMPTY_KING, _FITS, False, 0, False, False)
