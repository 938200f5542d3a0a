"""Fortress: 10 piles face up (6, 6, then 5 each), build up or down by one rank in the
same suit, one card at a time, any card fills an empty pile."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import (
    EMPTY_ANY,
    SINGLE,
    OptionSpec,
    Rules,
    Variant,
    build_up_or_down_same_suit,
    deal_rows,
)

_FITS = build_up_or_down_same_suit()


class Fortress(Variant):
    name = "fortress"
    title = "Fortress"
    piles = 10
    options = {"foundation_takeback": OptionSpec(False)}

    def deal(
        self, deck: list[int], options: Mapping[str, Any]
    ) -> tuple[list[list[int]], list[int], list[int]]:
        piles, _ = deal_rows(deck, [6, 6] + [5] * 8)
        return piles, [0] * 10, [0, 0, 0, 0]

    def make_rules(self, options: Mapping[str, Any]) -> Rules:
        return Rules(
            10, SINGLE, EMPTY_ANY, _FITS, bool(options["foundation_takeback"]), 0, False, False
        )
