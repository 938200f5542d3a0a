"""Helpers for the engine tests: hand-built layouts in a few characters.

A pile is written as a string of card codes bottom → top, with ``|`` separating the
face-down cards from the face-up ones: ``"QS 4D | 7C 6D"``. Unless given, each
foundation is as high as the tableau allows (every card of a suit that is not on the
tableau is on its foundation), so a test only names the cards it plays with.
"""

from __future__ import annotations

from typing import Any

from engine import REGISTRY, Game
from engine.cards import CODES, RANKS, SUITS


def pile(text: str) -> dict[str, list[str]]:
    """``"QS | 7C 6D"`` → ``{"down": ["QS"], "up": ["7C", "6D"]}``."""
    if "|" in text:
        down, up = text.split("|")
        return {"down": down.split(), "up": up.split()}
    return {"down": [], "up": text.split()}


def layout(
    variant: str,
    piles: list[str],
    foundations: dict[str, int] | None = None,
    options: dict[str, Any] | None = None,
    redeals_left: int | None = None,
) -> dict[str, Any]:
    """A full layout dict: ``piles`` padded with empty piles to the variant's count,
    foundations derived from the tableau unless given."""
    count = REGISTRY[variant].piles
    assert len(piles) <= count, "more piles than the variant has"
    tableau = [pile(p) for p in piles] + [{"down": [], "up": []} for _ in range(count - len(piles))]
    if foundations is None:
        on_tableau = {c for p in tableau for c in p["down"] + p["up"]}
        foundations = {}
        for s in SUITS:
            ranks = [RANKS.index(c[0]) + 1 for c in on_tableau if c[1] == s]
            height = min(ranks) - 1 if ranks else 13
            missing = [r + s for r in RANKS[height:] if r + s not in on_tableau]
            assert not missing, f"cards {missing} are neither on the tableau nor a foundation"
            foundations[s] = height
    out: dict[str, Any] = {
        "variant": variant,
        "options": dict(options or {}),
        "tableau": tableau,
        "foundations": foundations,
    }
    if redeals_left is not None:
        out["redeals_left"] = redeals_left
    return out


def game(variant: str, piles: list[str], **kwargs: Any) -> Game:
    """``Game.from_layout(layout(variant, piles, **kwargs))``."""
    return Game.from_layout(layout(variant, piles, **kwargs))


def legal(g: Game) -> set[str]:
    """The legal moves as canonical notation strings."""
    return {str(m) for m in g.legal_moves()}


def tops(g: Game) -> list[list[str]]:
    """Each pile's cards, bottom → top, as codes (face-down ones included)."""
    return [[CODES[c] for c in p] for p in g.piles]


def full_deck_layout(variant: str, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """A legal-shaped layout holding all 52 cards dealt in plain order (for error tests)."""
    count = REGISTRY[variant].piles
    cards = list(CODES)
    tableau: list[dict[str, list[str]]] = [{"down": [], "up": []} for _ in range(count)]
    for i, c in enumerate(cards):
        tableau[i % count]["up"].append(c)
    return {
        "variant": variant,
        "options": dict(options or {}),
        "tableau": tableau,
        "foundations": {s: 0 for s in SUITS},
    }


def assert_illegal(g: Game, move: str, match: str, kind: type[Exception] | None = None) -> str:
    """``g.play(move)`` raises ``IllegalMove`` (or ``kind``) whose message contains
    ``match``, and the game is unchanged. Returns the message."""
    from engine import IllegalMove

    before = g.to_layout()
    hash_before = g.state_hash()
    try:
        g.play(move)
    except IllegalMove as exc:
        if kind is not None:
            assert type(exc) is kind, f"{move!r} raised {type(exc).__name__}, not {kind.__name__}"
        message = str(exc)
        assert match in message, f"{move!r}: {message!r} does not mention {match!r}"
    else:
        raise AssertionError(f"{move!r} was accepted")
    assert g.to_layout() == before
    assert g.state_hash() == hash_before
    return message
