"""Perseverance: the Aces start on the foundations, the other 48 cards go 12 piles x 4
face up with Kings to the bottom; build down in suit, the top run moves as a unit; empty
piles stay empty; up to ``redeals`` redeals (by default only when stuck)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..cards import ACE, rank
from .base import (
    EMPTY_NEVER,
    RUN,
    OptionSpec,
    Rules,
    Variant,
    build_down_same_suit,
    deal_rows,
    kings_to_bottom,
)

_FITS = build_down_same_suit()


class Perseverance(Variant):
    name = "perseverance"
    title = "Perseverance"
    piles = 12
    options = {
        "kings_to_bottom": OptionSpec(True),
        "redeals": OptionSpec(2, minimum=0),
        "redeal_when": OptionSpec("stuck", choices=("stuck", "any_time")),
    }

    def deal(
        self, deck: list[int], options: Mapping[str, Any]
    ) -> tuple[list[list[int]], list[int], list[int]]:
        rest = [c for c in deck if rank(c) != ACE]
        piles, _ = deal_rows(rest, [4] * 12)
        if options["kings_to_bottom"]:
            piles = [kings_to_bottom(p) for p in piles]
        return piles, [0] * 12, [1, 1, 1, 1]

    def make_rules(self, options: Mapping[str, Any]) -> Rules:
        return Rules(
            12, RUN, EMPTY_NEVER, _FITS, False, int(options["redeals"]),
            options["redeal_when"] == "any_time", False,
        )
