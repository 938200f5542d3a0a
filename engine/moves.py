"""Moves and their notation (RULES.md, "Move notation").

A ``Move`` is a small immutable tuple; ``str(move)`` is its canonical notation and
``parse_move`` reads the notation back. Pile numbers are 1-based, as in the notation.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .cards import SUITS
from .errors import BadNotation

TABLEAU = 0  # "i>j" or "i:n>j"
TO_FOUNDATION = 1  # "i>f"
TAKEBACK = 2  # "fS>j": src is the suit index
REDEAL = 3  # "redeal"


class Move(NamedTuple):
    """One move. ``kind`` is TABLEAU, TO_FOUNDATION, TAKEBACK or REDEAL; ``src`` is a pile
    number (or the suit index for TAKEBACK), ``dst`` a pile number (0 when unused) and
    ``n`` the number of cards moved as a unit."""

    kind: int
    src: int = 0
    dst: int = 0
    n: int = 1

    def __str__(self) -> str:
        kind = self.kind
        if kind == TABLEAU:
            if self.n == 1:
                return f"{self.src}>{self.dst}"
            return f"{self.src}:{self.n}>{self.dst}"
        if kind == TO_FOUNDATION:
            return f"{self.src}>f"
        if kind == TAKEBACK:
            return f"f{SUITS[self.src]}>{self.dst}"
        return "redeal"


REDEAL_MOVE = Move(REDEAL)

# Shared, prebuilt Move instances for the hot paths: looking one up is several times
# cheaper than building a NamedTuple, and moves are immutable. Index 0 is unused (piles
# are numbered from 1); no variant has more than MAX_PILES piles.
MAX_PILES = 13
MAX_UNIT = 52
TO_FOUNDATION_MOVES: tuple[Move, ...] = tuple(Move(TO_FOUNDATION, i) for i in range(MAX_PILES + 1))
TAKEBACK_MOVES: tuple[tuple[Move, ...], ...] = tuple(
    tuple(Move(TAKEBACK, s, d) for d in range(MAX_PILES + 1)) for s in range(4)
)
# TABLEAU_ROWS[src][n][dst]: the move of the top n cards of pile src to pile dst, None
# where dst == src (or 0). Rows are built on first use.
TableauRow = list[Move | None]
TABLEAU_ROWS: list[list[TableauRow | None]] = [
    [None] * (MAX_UNIT + 1) for _ in range(MAX_PILES + 1)
]


def tableau_row(src: int, n: int) -> TableauRow:
    """``TABLEAU_ROWS[src][n]``, built if needed."""
    row = TABLEAU_ROWS[src][n]
    if row is None:
        row = [None if dst in (0, src) else Move(TABLEAU, src, dst, n)
               for dst in range(MAX_PILES + 1)]
        TABLEAU_ROWS[src][n] = row
    return row

# A pile number is any decimal number without a leading zero (``0`` included): the
# grammar says nothing of how many piles a board has, so ``0>3``, ``9>1`` on Brisbane's 7
# piles and ``100>3`` parse, and ``Game.play`` refuses each with "there is no pile N".
# A count (``i:n>j``) starts at 1. MAX_NOTATION bounds every number's length.
_PILE = r"0|[1-9][0-9]*"
_NOTATION = re.compile(
    rf"(?P<src>{_PILE})(?::(?P<n>[1-9][0-9]*))?>(?P<dst>{_PILE}|f)"
    rf"|f(?P<suit>[SHDC])>(?P<tdst>{_PILE})"
    r"|(?P<redeal>redeal)"
)
MAX_NOTATION = 16
# Canonical strings already parsed (only good ones, and a bounded number: the set of
# well-formed strings is large, the set seen in play is small).
_PARSED: dict[str, Move] = {}
_PARSED_MAX = 4096


def parse_move(text: object) -> Move:
    """The ``Move`` a canonical notation string stands for.

    Raises ``BadNotation`` for anything else, including the non-canonical ``i:1>j``
    (use ``normalise_move`` first to accept looser typing)."""
    if not isinstance(text, str):
        raise BadNotation(f"a move must be a string like '3>7', not {type(text).__name__}")
    move = _PARSED.get(text)
    if move is None:
        move = _parse(text)
        if len(_PARSED) < _PARSED_MAX:
            _PARSED[text] = move
    return move


def _parse(text: str) -> Move:
    if len(text) > MAX_NOTATION:
        raise BadNotation(f"a move is at most {MAX_NOTATION} characters long")
    m = _NOTATION.fullmatch(text)
    if m is None:
        raise BadNotation(
            f"{text!r} is not a move: write i>j, i:n>j, i>f, fS>j or redeal (e.g. '3>7')"
        )
    if m["redeal"]:
        return REDEAL_MOVE
    if m["suit"]:
        return Move(TAKEBACK, SUITS.index(m["suit"]), int(m["tdst"]))
    src = int(m["src"])
    if m["dst"] == "f":
        if m["n"] is not None:
            raise BadNotation(f"{text!r}: only one card at a time goes to a foundation (i>f)")
        return Move(TO_FOUNDATION, src)
    dst = int(m["dst"])
    if m["n"] is None:
        return Move(TABLEAU, src, dst, 1)
    n = int(m["n"])
    if n == 1:
        raise BadNotation(f"{text!r} is not canonical: a one-card move is written {src}>{dst}")
    return Move(TABLEAU, src, dst, n)


def normalise_move(text: str) -> str:
    """Looser typing made canonical: spaces dropped, case folded (``"3 > F"`` → ``"3>f"``,
    ``"fs>2"`` → ``"fS>2"``), ``i:1>j`` → ``i>j``, ``-`` accepted for ``>``. The result
    is only a candidate: ``parse_move`` still judges it."""
    t = "".join(text.split()).replace("-", ">")
    low = t.lower()
    if low == "redeal":
        return "redeal"
    if low.startswith("f") and len(low) >= 2:
        return "f" + low[1].upper() + low[2:]
    t = low
    m = re.fullmatch(r"(\d+):1>(.+)", t)
    if m:
        t = f"{m[1]}>{m[2]}"
    return t
