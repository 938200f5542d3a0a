"""Reading the layout interchange format (RULES.md, "Layout interchange format"): every
check a full-information layout must pass before it becomes a ``Game``, each failure a
``BadLayout`` (or ``UnknownVariant`` / ``BadOption``) naming the first problem found."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from . import cards as C
from .errors import BadLayout
from .variants import Variant, get_variant

LAYOUT_KEYS = {"variant", "options", "tableau", "foundations", "redeals_left"}


class Parsed(NamedTuple):
    """A checked layout, in the engine's terms (the ``Game`` constructor's arguments)."""

    variant: Variant
    options: dict[str, Any]
    piles: list[list[int]]
    down: list[int]
    found: list[int]
    redeals_left: int


def read_layout(layout: Mapping[str, Any]) -> Parsed:
    """The position a full-information layout describes: all 52 cards once, the
    variant's pile count, face-down cards only where the variant has them (and never
    without a face-up card above), foundation heights 0..13, ``redeals_left`` within the
    ``redeals`` option. Missing ``options`` take the defaults, a missing ``redeals_left``
    the full count."""
    if not isinstance(layout, Mapping):
        raise BadLayout(f"a layout must be a JSON object, not {type(layout).__name__}")
    extra = set(layout) - LAYOUT_KEYS
    if extra:
        raise BadLayout(f"unknown layout key(s): {', '.join(sorted(map(str, extra)))}")
    for key in ("variant", "tableau", "foundations"):
        if key not in layout:
            raise BadLayout(f"the layout has no {key!r}")
    variant = get_variant(layout["variant"])
    options_in = layout.get("options", {})
    if not isinstance(options_in, Mapping):
        raise BadLayout("'options' must be an object")
    options = variant.resolve_options(options_in)
    rules = variant.make_rules(options)

    tableau = layout["tableau"]
    if not isinstance(tableau, list) or len(tableau) != variant.piles:
        got = len(tableau) if isinstance(tableau, list) else type(tableau).__name__
        raise BadLayout(f"{variant.name} has {variant.piles} piles; the layout has {got}")
    seen: dict[int, str] = {}

    def claim(card: int, where: str) -> None:
        if card in seen:
            first = seen[card]
            places = f"in {where}" if first == where else f"({first} and {where})"
            raise BadLayout(f"card {C.code(card)} appears twice {places}")
        seen[card] = where

    piles: list[list[int]] = []
    down: list[int] = []
    for number, pile in enumerate(tableau, 1):
        if not isinstance(pile, Mapping) or set(pile) != {"down", "up"}:
            raise BadLayout(f"pile {number} must be an object with 'down' and 'up'")
        d_in, up_in = pile["down"], pile["up"]
        if d_in == 0 and not isinstance(d_in, bool):
            d_in = []
        if not isinstance(d_in, list) or not isinstance(up_in, list):
            raise BadLayout(
                f"pile {number}: 'down' and 'up' must be lists of card codes "
                "(a full layout names its face-down cards)"
            )
        if d_in and not rules.has_face_down:
            raise BadLayout(f"pile {number}: {variant.name} has no face-down cards")
        if d_in and not up_in:
            raise BadLayout(
                f"pile {number} has face-down cards and none face up: its top card "
                "would already have been turned up"
            )
        try:
            cards = [C.parse(c) for c in d_in] + [C.parse(c) for c in up_in]
        except BadLayout as exc:
            raise BadLayout(f"pile {number}: {exc}") from None
        for c in cards:
            claim(c, f"pile {number}")
        piles.append(cards)
        down.append(len(d_in))

    found_in = layout["foundations"]
    if not isinstance(found_in, Mapping) or set(found_in) != set(C.SUITS):
        raise BadLayout("'foundations' must map each of S, H, D, C to a top rank 0..13")
    found = []
    for s_index, s in enumerate(C.SUITS):
        height = found_in[s]
        if isinstance(height, bool) or not isinstance(height, int) or not 0 <= height <= 13:
            raise BadLayout(f"foundation {s} must be a rank 0..13, not {height!r}")
        for r in range(1, height + 1):
            claim(C.make(r, s_index), f"the {s} foundation")
        found.append(height)
    if len(seen) != 52:
        missing = [C.code(c) for c in range(52) if c not in seen]
        many = "s are" if len(missing) != 1 else " is"
        raise BadLayout(f"{len(missing)} card{many} missing: {' '.join(missing)}")

    redeals_left = layout.get("redeals_left", rules.redeals)
    if (
        isinstance(redeals_left, bool)
        or not isinstance(redeals_left, int)
        or not 0 <= redeals_left <= rules.redeals
    ):
        if "redeals" not in options:
            raise BadLayout(f"{variant.name} has no redeals: redeals_left must be 0, "
                            f"not {redeals_left!r}")
        raise BadLayout(
            f"redeals_left must be an integer 0..{rules.redeals} (option redeals), "
            f"not {redeals_left!r}"
        )
    return Parsed(variant, options, piles, down, found, redeals_left)
