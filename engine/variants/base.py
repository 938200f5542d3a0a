"""What a variant is: its options, its deal and its rules, as data the game loop reads.

A ``Variant`` is stateless. ``Variant.rules(options)`` resolves validated options into a
``Rules`` object whose fields the hot paths read directly (no option look-ups per move).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ..cards import KING, rank, suit
from ..errors import BadOption

# How many cards may move as a unit from one pile to another.
SINGLE = "single"  # only the top card
YUKON = "yukon"  # any face-up card with everything on top of it
RUN = "run"  # the descending same-suit run at the top (Perseverance)

# What an empty pile accepts.
EMPTY_ANY = "any"
EMPTY_KING = "king"
EMPTY_NEVER = "never"


@dataclass(frozen=True)
class OptionSpec:
    """One option: its default and what it accepts (a bool, an int >= minimum, or one of
    ``choices``)."""

    default: bool | int | str
    choices: tuple[str, ...] = ()
    minimum: int = 0

    def check(self, variant: str, name: str, value: object) -> bool | int | str:
        """The value if it is allowed, else ``BadOption`` saying what is allowed."""
        d = self.default
        if isinstance(d, bool):
            if isinstance(value, bool):
                return value
            raise BadOption(f"{variant} option {name} takes true or false, not {value!r}")
        if isinstance(d, int):
            if isinstance(value, int) and not isinstance(value, bool) and value >= self.minimum:
                return value
            raise BadOption(
                f"{variant} option {name} takes an integer >= {self.minimum}, not {value!r}"
            )
        if isinstance(value, str) and value in self.choices:
            return value
        raise BadOption(
            f"{variant} option {name} takes one of {', '.join(self.choices)}, not {value!r}"
        )

    def parse_text(self, variant: str, name: str, text: str) -> bool | int | str:
        """Parse a command-line value: ``true``/``false``/``on``/``off``/``yes``/``no``/
        ``1``/``0`` for a flag, decimal digits for a number, a choice in any case. Raises
        ``BadOption`` like ``check``."""
        d = self.default
        t = text.strip().lower()
        value: object = text
        if isinstance(d, bool):
            value = {"true": True, "on": True, "1": True, "yes": True,
                     "false": False, "off": False, "0": False, "no": False}.get(t, text)
        elif isinstance(d, int):
            value = int(t) if t.lstrip("-").isdigit() else text
        elif t in self.choices:
            value = t
        return self.check(variant, name, value)


@dataclass(frozen=True)
class Rules:
    """A variant's rules with its options resolved: what the game loop consults."""

    piles: int
    group: str  # SINGLE, YUKON or RUN
    empty: str  # EMPTY_ANY, EMPTY_KING or EMPTY_NEVER
    fits: tuple[tuple[int, ...], ...]  # fits[top] = the cards that may go on ``top``
    takeback: bool
    redeals: int
    redeal_any_time: bool
    has_face_down: bool

    def empty_accepts(self, card: int) -> bool:
        """Whether an empty pile may take ``card`` (as a single card or a group's bottom)."""
        if self.empty == EMPTY_ANY:
            return True
        if self.empty == EMPTY_KING:
            return rank(card) == KING
        return False


def build_down_any_suit() -> tuple[tuple[int, ...], ...]:
    """fits[top] = the four cards one rank below ``top``."""
    return tuple(
        tuple(s * 13 + rank(t) - 2 for s in range(4)) if rank(t) > 1 else () for t in range(52)
    )


def build_down_same_suit() -> tuple[tuple[int, ...], ...]:
    """fits[top] = the card one rank below ``top`` in its suit."""
    return tuple((t - 1,) if rank(t) > 1 else () for t in range(52))


def build_up_or_down_same_suit() -> tuple[tuple[int, ...], ...]:
    """fits[top] = the cards one rank below and above ``top`` in its suit."""
    out = []
    for t in range(52):
        r = rank(t)
        out.append(tuple(c for c, ok in ((t - 1, r > 1), (t + 1, r < 13)) if ok))
    assert all(suit(c) == suit(t) for t, cs in enumerate(out) for c in cs)
    return tuple(out)


class Variant:
    """Base class of the five variants. Subclasses set the class attributes and
    implement ``deal`` and ``make_rules``."""

    name: ClassVar[str]
    title: ClassVar[str]
    piles: ClassVar[int]
    options: ClassVar[dict[str, OptionSpec]]

    def resolve_options(self, given: Mapping[str, Any]) -> dict[str, bool | int | str]:
        """Every option of the variant with its value: the given ones checked, the missing
        ones at their default. Unknown names raise ``BadOption`` listing the valid ones."""
        for key in given:
            if key not in self.options:
                known = ", ".join(self.options) or "none"
                raise BadOption(
                    f"{self.name} has no option {key!r}; its options are: {known}"
                )
        return {
            key: spec.check(self.name, key, given[key]) if key in given else spec.default
            for key, spec in self.options.items()
        }

    def deal(
        self, deck: list[int], options: Mapping[str, Any]
    ) -> tuple[list[list[int]], list[int], list[int]]:
        """Deal a shuffled deck: (piles bottom→top, face-down count per pile, foundations)."""
        raise NotImplementedError

    def make_rules(self, options: Mapping[str, Any]) -> Rules:
        """The resolved rules for these (already validated) options."""
        raise NotImplementedError


def deal_rows(deck: list[int], counts: list[int], start: int = 0) -> tuple[list[list[int]], int]:
    """Deal row by row, left to right, pile ``i`` taking ``counts[i]`` cards; a row only
    covers the piles that still take cards. Returns the piles and the next deck index."""
    piles: list[list[int]] = [[] for _ in counts]
    pos = start
    for row in range(max(counts, default=0)):
        for i, count in enumerate(counts):
            if count > row:
                piles[i].append(deck[pos])
                pos += 1
    return piles, pos


def kings_to_bottom(pile: list[int]) -> list[int]:
    """The pile with its Kings moved to the bottom, a stable partition."""
    return [c for c in pile if rank(c) == KING] + [c for c in pile if rank(c) != KING]
