"""Spanish Patience: 13 piles of 4 face up with Kings to the bottom, build down
regardless of suit, one card at a time, any card fills an empty pile."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import (
    EMPTY_ANY,
    SINGLE,
    OptionSpec,
    Rules,
    Variant,
    build_down_any_suit,
    deal_rows,
    kings_to_bottom,
)

_FITS = build_down_any_suit()


class Spanish(Variant):
    name = "spanish"
    title = "Spanish Patience"
    piles = 13
    options = {"kings_to_bottom": OptionSpec(True), "foundation_takeback": OptionSpec(False)}

    def deal(
        self, deck: list[int], options: Mapping[str, Any]
    ) -> tuple[list[list[int]], list[int], list[int]]:
        piles, _ = deal_rows(deck, [4] * 13)
        if options["kings_to_bottom"]:
            piles = [kings_to_bottom(p) for p in piles]
        return piles, [0] * 13, [0, 0, 0, 0]

    def make_rules(self, options: Mapping[str, Any]) -> Rules:
        return Rules(
            13, SINGLE, EMPTY_ANY, _FITS, bool(options["foundation_takeback"]), 0, False, False
        )
