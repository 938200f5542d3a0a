"""The game: one board of one variant, its legal moves, and play.

A ``Game`` is mutable and cheap to copy. ``play()`` either applies a legal move and
returns its ``Diff`` or raises ``IllegalMove`` with a reason and changes nothing. The
hot paths (``legal_moves``, ``play``) work on card integers and precomputed tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from hashlib import sha256
from itertools import pairwise
from typing import Any

from . import cards as C
from .diff import REDEAL_GROUP, Diff, plain_diff
from .errors import IllegalMove
from .layout import read_layout
from .moves import (
    REDEAL,
    REDEAL_MOVE,
    TABLEAU,
    TABLEAU_ROWS,
    TAKEBACK,
    TAKEBACK_MOVES,
    TO_FOUNDATION,
    TO_FOUNDATION_MOVES,
    Move,
    TableauRow,
    parse_move,
    tableau_row,
)
from .shuffle import shuffled_deck
from .statehash import _FIRST_WORD, pile_text, tail_text
from .variants import Variant, get_variant
from .variants.base import EMPTY_KING, EMPTY_NEVER, RUN, SINGLE, YUKON, Rules

_BUILD_TEXT = {
    "portuguese": "build down by one rank, any suit",
    "spanish": "build down by one rank, any suit",
    "brisbane": "build down by one rank, any suit",
    "fortress": "build up or down by one rank in the same suit",
    "perseverance": "build down by one rank in the same suit",
}


class Game:
    """A board: piles (bottom → top, the lowest ``down[i]`` cards of pile i face down),
    foundation heights by suit (S H D C) and the redeals left. A copy shares the piles'
    lists with its original until a move changes them (``copy``): change a board
    through ``play`` only, never by editing ``piles`` in place."""

    __slots__ = ("_owned", "_pile_texts", "_tail", "_undo", "down", "found", "options",
                 "piles", "redeals_left", "rules", "variant")

    def __init__(
        self,
        variant: Variant,
        options: dict[str, Any],
        piles: list[list[int]],
        down: list[int],
        found: list[int],
        redeals_left: int,
    ) -> None:
        """Internal: use ``engine.new_game`` or ``Game.from_layout``."""
        self.variant = variant
        self.options = options
        self.rules: Rules = variant.make_rules(options)
        self.piles = piles
        self.down = down
        self.found = found
        self.redeals_left = redeals_left
        # The state hash's text of each pile, kept between calls to ``state_hash`` so a
        # move re-renders only the piles it touched (None: not rendered yet, or stale).
        # ``_apply`` is the only code that changes piles, and it marks them stale.
        self._pile_texts: list[str | None] | None = None
        # Its end (foundations and redeals: ``tail_text``), kept the same way (None:
        # stale); ``_apply`` marks it stale when a foundation or the redeals change.
        self._tail: str | None = None
        # Copy on write: bit i set when pile i's list is this game's own. ``copy`` shares
        # the piles' lists (neither game owns them after it) and ``_apply``, the only
        # code that changes a pile, copies a shared one before changing it: a copy costs
        # one list of references, not a list per pile, and a move copies one or two.
        self._owned = -1
        # True when the last move ``_apply`` played is a tableau move whose reverse is
        # listed by ``legal_moves()`` now: then the game is not stuck (``stuck``).
        self._undo = False

    # ----------------------------------------------------------------- state
    @property
    def name(self) -> str:
        """The variant's name, e.g. ``"brisbane"``."""
        return self.variant.name

    @property
    def progress(self) -> int:
        """Cards on the foundations, 0..52."""
        return sum(self.found)

    @property
    def won(self) -> bool:
        """All 52 cards are on the foundations."""
        return sum(self.found) == 52

    @property
    def stuck(self) -> bool:
        """Not won, and no legal move (redeal included) remains.

        Asked after every move, and nearly always false: exactly ``not won and not
        legal_moves()``, but it stops at the first legal move it finds instead of listing
        them all (``_has_move``: a pile's top card next on its foundation is found while
        the piles are first read)."""
        found = self.found
        if found[0] + found[1] + found[2] + found[3] == 52 or self.redeals_left > 0:
            return False  # won, or the redeal is a move (``_has_move``'s first sign)
        if self._undo:  # the move just played can be played back (``_apply``)
            return False
        return not self._has_move()

    def copy(self) -> Game:
        """An independent copy (the rules tables are shared, they are immutable; the
        piles' lists are shared until a move changes them: copy on write, ``_owned``)."""
        g = Game.__new__(Game)
        g.variant, g.options, g.rules = self.variant, self.options, self.rules
        g.piles = self.piles[:]
        g._owned = self._owned = 0
        g.down = self.down[:]
        g.found = self.found[:]
        g.redeals_left = self.redeals_left
        texts = self._pile_texts
        g._pile_texts = texts[:] if texts is not None else None  # strings are immutable
        g._tail = self._tail
        g._undo = self._undo
        return g

    def state_hash(self) -> int:
        """The 32-bit state hash of this board's view (see ``engine.statehash``).

        Incremental: the piles' texts are kept between calls, a move updates the one or
        two it changed (``_apply``), and only a text not known is rendered again (after a
        card turned face up, a redeal, a copy of a game never hashed); the result equals
        ``engine.view_hash(self.view())``."""
        texts = self._pile_texts
        if texts is None:
            texts = self._pile_texts = [None] * len(self.piles)
        if None in texts:  # (a move keeps its piles' texts: ``_apply``)
            codes, piles, down = C.CODES, self.piles, self.down
            for i, text in enumerate(texts):
                if text is None:
                    d = down[i]
                    texts[i] = pile_text(d, [codes[c] for c in piles[i][d:]])
        tail = self._tail
        if tail is None:
            tail = self._tail = tail_text(self.found, self.redeals_left)
        # ``digest``, inline (once per move): the text is ASCII
        return int(_FIRST_WORD(sha256(("|".join(texts) + tail).encode()).digest())[0])  # type: ignore[arg-type]

    # ----------------------------------------------------------------- moves
    def legal_moves(self) -> list[Move]:
        """Every legal move, in a fixed order: to foundations, then tableau moves by
        destination, then takebacks, then redeal. Empty when the game is won."""
        found = self.found
        if found[0] + found[1] + found[2] + found[3] == 52:
            return []
        rules = self.rules
        piles, down = self.piles, self.down
        moves: list[Move] = []
        append = moves.append
        rows = TABLEAU_ROWS
        # The bottom card of each movable unit -> that unit's moves indexed by destination.
        units: dict[int, TableauRow] = {}
        group = rules.group
        for src, p in enumerate(piles, 1):
            size = len(p)
            if not size:
                continue
            top = p[-1]
            if found[top // 13] == top % 13:
                append(TO_FOUNDATION_MOVES[src])
            if group == SINGLE:
                units[top] = rows[src][1] or tableau_row(src, 1)
            elif group == YUKON:
                for k in range(down[src - 1], size):
                    units[p[k]] = rows[src][size - k] or tableau_row(src, size - k)
            else:  # RUN: the descending same-suit run at the top
                k = size - 1
                lowest = down[src - 1]
                while k > lowest and p[k - 1] == p[k] + 1 and p[k] % 13 != 12:
                    k -= 1
                units[p[k]] = rows[src][size - k] or tableau_row(src, size - k)
        fits = rules.fits
        empty = rules.empty
        to_empty: list[TableauRow] | None = None  # the units an empty pile accepts
        for dst, p in enumerate(piles, 1):
            if p:
                for card in fits[p[-1]]:
                    row = units.get(card)
                    if row is not None:
                        move = row[dst]
                        if move is not None:
                            append(move)
            elif empty != EMPTY_NEVER:
                if to_empty is None:
                    if empty == EMPTY_KING:
                        to_empty = [row for card, row in units.items() if card % 13 == 12]
                    else:
                        to_empty = list(units.values())
                for row in to_empty:
                    move = row[dst]
                    if move is not None:
                        append(move)
        if rules.takeback:
            for s in range(4):
                height = found[s]
                if height == 0:
                    continue
                card = s * 13 + height - 1
                targets = TAKEBACK_MOVES[s]
                for j, p in enumerate(piles):
                    if (card in fits[p[-1]]) if p else rules.empty_accepts(card):
                        append(targets[j + 1])
        if self.redeals_left > 0 and (rules.redeal_any_time or not moves):
            append(REDEAL_MOVE)
        return moves

    def _has_move(self) -> bool:
        """Whether ``legal_moves()`` (of a game not won) lists any move, by the same rules
        in the same order, returning at the first one found. The cheapest signs come
        first: a redeal left (listed whenever nothing else is), a pile's top card next on
        its foundation. ``tests/engine`` compares it with the full listing."""
        if self.redeals_left > 0:
            return True
        rules = self.rules
        piles, down, found = self.piles, self.down, self.found
        # The bottom card of each movable unit -> the pile it is on (1-based).
        units: dict[int, int] = {}
        group = rules.group
        for src, p in enumerate(piles, 1):
            size = len(p)
            if not size:
                continue
            top = p[-1]
            if found[top // 13] == top % 13:
                return True
            if group == SINGLE:
                units[top] = src
            elif group == YUKON:
                for k in range(down[src - 1], size):
                    units[p[k]] = src
            else:  # RUN: the descending same-suit run at the top
                k = size - 1
                lowest = down[src - 1]
                while k > lowest and p[k - 1] == p[k] + 1 and p[k] % 13 != 12:
                    k -= 1
                units[p[k]] = src
        fits = rules.fits
        empty = rules.empty
        for dst, p in enumerate(piles, 1):
            if p:
                for card in fits[p[-1]]:
                    home = units.get(card)
                    if home is not None and home != dst:  # no move onto its own pile
                        return True
            elif (empty != EMPTY_NEVER and units  # any unit comes from another pile
                  and (empty != EMPTY_KING or any(card % 13 == 12 for card in units))):
                return True
        if rules.takeback:
            for s in range(4):
                height = found[s]
                if height == 0:
                    continue
                card = s * 13 + height - 1
                for p in piles:
                    if (card in fits[p[-1]]) if p else rules.empty_accepts(card):
                        return True
        return False

    def play(self, move: str | Move) -> Diff:
        """Apply a legal move (canonical notation or a ``Move``) and return its diff.

        Raises ``IllegalMove`` (``BadNotation`` for a malformed string) with a reason a
        person understands; the game is then unchanged."""
        if isinstance(move, Move):
            mv, text = move, ""  # str(move) only once it is known to be a real move
        else:
            mv = parse_move(move)
            text = move  # parse_move accepts canonical notation only: it is str(mv)
        if mv.kind == TABLEAU and mv.n == 1:
            # The usual move, one card onto a card, found legal without why_illegal's
            # calls: the same tests (its source face up, so the game is not won).
            piles = self.piles
            count = len(piles)
            src, dst = mv.src, mv.dst
            if 0 < src <= count and 0 < dst <= count and src != dst:
                p, q = piles[src - 1], piles[dst - 1]
                if len(p) > self.down[src - 1] and q and p[-1] in self.rules.fits[q[-1]]:
                    return self._apply(mv, text or str(mv))
        reason = self.why_illegal(mv)
        if reason is not None:
            raise IllegalMove(reason)
        return self._apply(mv, text or str(mv))

    def why_illegal(self, mv: Move) -> str | None:
        """None if ``mv`` is legal here, else the reason it is not."""
        found = self.found
        if found[0] + found[1] + found[2] + found[3] == 52:  # won (no property call)
            return "the game is won: no moves remain"
        kind = mv.kind
        if kind == TABLEAU:
            return self._why_tableau(mv)
        if kind == TO_FOUNDATION:
            bad = self._bad_pile(mv.src)
            if bad:
                return bad
            p = self.piles[mv.src - 1]
            if not p:
                return f"pile {mv.src} is empty"
            card = p[-1]
            s = card // 13
            height = self.found[s]
            if height == card % 13:
                return None
            f = C.SUITS[s]
            if height == 13:
                return f"the {f} foundation is already complete"
            need = "an Ace to start it" if height == 0 else f"{C.code(s * 13 + height)} next"
            return f"{C.code(card)} cannot go to the {f} foundation: it needs {need}"
        if kind == TAKEBACK:
            return self._why_takeback(mv)
        if kind == REDEAL:
            return self._why_redeal()
        return f"unknown move kind {kind}"

    def _bad_pile(self, number: int) -> str | None:
        count = len(self.piles)
        if 1 <= number <= count:
            return None
        return f"there is no pile {number}: piles are numbered 1 to {count}"

    def _why_dst(self, card: int, dst: int, n: int) -> str | None:
        """Why ``card`` (bottom of a unit of ``n``) may not go on pile ``dst``."""
        p = self.piles[dst - 1]
        rules = self.rules
        if not p:
            if rules.empty_accepts(card):
                return None
            if rules.empty == EMPTY_NEVER:
                return f"pile {dst} is empty: in {self.variant.title} an empty pile stays empty"
            what = "a King"
            if rules.group == YUKON:
                what = "a King, or a group whose bottom card is a King,"
            return f"pile {dst} is empty: only {what} may go there"
        top = p[-1]
        if card in rules.fits[top]:
            return None
        moving = C.code(card) if n == 1 else f"a group from {C.code(card)}"
        return f"{moving} does not go on {C.code(top)}: {_BUILD_TEXT[self.name]}"

    def _why_tableau(self, mv: Move) -> str | None:
        src, dst, n = mv.src, mv.dst, mv.n
        count = len(self.piles)
        if not (0 < src <= count and 0 < dst <= count):  # (no call on the usual path)
            return self._bad_pile(src) or self._bad_pile(dst)
        if src == dst:
            return "the source and destination piles are the same"
        if n < 1:
            return f"a move takes at least one card, not {n}"
        p = self.piles[src - 1]
        if not p:
            return f"pile {src} is empty"
        group = self.rules.group
        if n > 1 and group == SINGLE:
            return f"only one card moves at a time in {self.variant.title}"
        face_up = len(p) - self.down[src - 1]
        if n > face_up:
            return f"pile {src} has only {face_up} face-up card{'s' if face_up != 1 else ''}"
        if group == RUN and n > 1:
            run = p[len(p) - n :]
            if any(a != b + 1 or a % 13 == 0 for a, b in pairwise(run)):
                return f"the top {n} cards of pile {src} are not a run down in one suit"
        return self._why_dst(p[len(p) - n], dst, n)

    def _why_takeback(self, mv: Move) -> str | None:
        if "foundation_takeback" not in self.options:
            return f"{self.variant.title} never takes a card back from a foundation"
        if not self.rules.takeback:
            return "foundation takeback is off in this game (option foundation_takeback)"
        if not 0 <= mv.src < 4:
            return f"there is no foundation {mv.src}: foundations are S, H, D, C (0 to 3)"
        bad = self._bad_pile(mv.dst)
        if bad:
            return bad
        height = self.found[mv.src]
        if height == 0:
            return f"the {C.SUITS[mv.src]} foundation is empty"
        return self._why_dst(mv.src * 13 + height - 1, mv.dst, 1)

    def _why_redeal(self) -> str | None:
        if self.rules.redeals == 0 and "redeals" not in self.options:
            return f"{self.variant.title} has no redeal"
        if self.rules.redeals == 0:
            return "this game allows no redeal (option redeals=0)"
        if self.redeals_left <= 0:
            allowed = self.rules.redeals
            plural = "s" if allowed != 1 else ""
            return f"no redeals left (this game allows {allowed} redeal{plural})"
        if not self.rules.redeal_any_time:
            others = [m for m in self.legal_moves() if m.kind != REDEAL]
            if others:
                return (
                    "a redeal is allowed only when no other move remains "
                    f"(you can still play {others[0]})"
                )
        return None

    def _apply(self, mv: Move, text: str) -> Diff:
        piles, down = self.piles, self.down
        kind = mv.kind
        src_index = -1
        owned = self._owned
        self._undo = False
        if kind == TABLEAU:
            src_index, dst_index = mv.src - 1, mv.dst - 1
            p = piles[src_index]
            n = mv.n
            moved = p[len(p) - n :]
            if owned >> src_index & 1:
                del p[len(p) - n :]
            else:  # shared with a copy: this game's own list, without the moved cards
                piles[src_index] = p[: len(p) - n]
            if owned >> dst_index & 1:
                piles[dst_index].extend(moved)
            else:
                piles[dst_index] = piles[dst_index] + moved
            self._owned = owned | 1 << src_index | 1 << dst_index
            # Its reverse is listed by legal_moves() when the moved unit's bottom card
            # fits on the source's new top (face up: turned up below if it was not), in
            # the groupings where every unit a move can put on a pile is listed as one
            # (a single card; Yukon's any face-up card; not a run: only whole runs are).
            grouping = self.rules.group
            if grouping in (SINGLE, YUKON):
                left = piles[src_index]
                self._undo = bool(left) and moved[0] in self.rules.fits[left[-1]]
        elif kind == TO_FOUNDATION:
            src_index = mv.src - 1
            p = piles[src_index]
            if not owned >> src_index & 1:
                p = piles[src_index] = p[:]
                self._owned = owned | 1 << src_index
            card = p.pop()
            self.found[card // 13] += 1
            self._tail = None
        elif kind == TAKEBACK:
            self.found[mv.src] -= 1
            self._tail = None
            dst_index = mv.dst - 1
            card = mv.src * 13 + self.found[mv.src]
            if owned >> dst_index & 1:
                piles[dst_index].append(card)
            else:
                piles[dst_index] = [*piles[dst_index], card]
                self._owned = owned | 1 << dst_index
        else:
            cards = [c for p in piles for c in p]
            group = REDEAL_GROUP
            self.piles = [cards[i * group : (i + 1) * group] for i in range(len(piles))]
            self.down = [0] * len(piles)
            self._owned = -1
            self.redeals_left -= 1
            self._pile_texts = self._tail = None
            return plain_diff("redeal")
        texts = self._pile_texts
        if texts is not None:
            # The changed piles' texts follow the cards (every card's code is two
            # characters, after the pile's ``<down>:``): a slice, not a pile rendered
            # again. A text not known (None) stays so: the next state_hash() renders it.
            if kind == TABLEAU:
                cut = -2 * mv.n
                was = texts[src_index]
                if was is None:
                    texts[dst_index] = None
                else:
                    texts[src_index] = was[:cut]
                    onto = texts[dst_index]
                    if onto is not None:
                        texts[dst_index] = onto + was[cut:]
            elif kind == TO_FOUNDATION:
                was = texts[src_index]
                if was is not None:
                    texts[src_index] = was[:-2]
            else:  # TAKEBACK
                onto = texts[dst_index]
                if onto is not None:
                    texts[dst_index] = onto + C.CODES[card]
        if src_index >= 0 and down[src_index] and len(piles[src_index]) == down[src_index]:
            down[src_index] -= 1
            if texts is not None:  # its face-down count changed: rendered again
                texts[src_index] = None
            return Diff(text, ((src_index + 1, C.CODES[piles[src_index][-1]]),))
        return plain_diff(text)

    # ----------------------------------------------------------------- layouts
    def to_layout(self) -> dict[str, Any]:
        """The full-information layout (RULES.md format): face-down cards listed."""
        return self._layout(hide=False)

    def view(self) -> dict[str, Any]:
        """The layout as a player or spectator may see it: each ``down`` is a count."""
        return self._layout(hide=True)

    def _layout(self, hide: bool) -> dict[str, Any]:
        codes = C.CODES
        tableau = []
        for p, d in zip(self.piles, self.down, strict=True):
            tableau.append(
                {"down": d if hide else [codes[c] for c in p[:d]], "up": [codes[c] for c in p[d:]]}
            )
        return {
            "variant": self.name,
            "options": dict(self.options),
            "tableau": tableau,
            "foundations": dict(zip(C.SUITS, self.found, strict=True)),
            "redeals_left": self.redeals_left,
        }

    @classmethod
    def from_layout(cls, layout: Mapping[str, Any]) -> Game:
        """The game a full-information layout describes. Raises ``BadLayout`` (or
        ``UnknownVariant`` / ``BadOption``) naming the first problem found."""
        return cls(*read_layout(layout))

def new_game(variant: str, seed: int, **options: Any) -> Game:
    """A fresh deal of ``variant`` from ``seed`` (0 .. 2**64-1) with these options; the
    same arguments give the same deal on every machine (docs/DEALS.md)."""
    v = get_variant(variant)
    opts = v.resolve_options(options)
    piles, down, found = v.deal(shuffled_deck(seed), opts)
    return Game(v, opts, piles, down, found, int(opts.get("redeals", 0)))
