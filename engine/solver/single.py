"""Positions for the one-card-at-a-time variants: Portuguese, Spanish and Fortress.

Piles are lists of card ints (``engine.cards``), bottom to top; the key ignores pile
order (``keys``). Moves that cannot matter are never generated: a lone card to an empty
pile (the same position again), a move to any empty pile but the first (all empty piles
are alike when pile order does not matter), and a takeback of a card the safe-move rule
would at once put back up.
"""

from __future__ import annotations

from ..moves import TABLEAU, TAKEBACK, TO_FOUNDATION
from .keys import ON_TABLE, PAIR, SUPPORTS, order_free_key
from .safety import AutoRule, rank_limits
from .search import Mv, Undo, _clears

_SUITS = "SHDC"
_NO_AUTOS: tuple[tuple[int, int], ...] = ()
PILE_MEMO_LIMIT = 20_000  # distinct piles whose heuristic share is remembered (freeing
# more takes the caller more than a few milliseconds at the end of a search)


class SinglePosition:
    """A board of a one-card variant. ``fits[top]`` lists the cards that may go on
    ``top``; ``empty_any`` says whether an empty pile takes any card (else only a King);
    ``takeback`` enables foundation-to-tableau moves; ``auto`` names which foundation
    moves are safe to play at once (``safety``)."""

    restart_growth = 2  # twice as many in all by each round's end: resumed runs redo
    # nothing, so short slices are free, and eight runs share the budget (below)
    restart_nodes = 5_000  # expansions of each run's first turn (search._portfolio):
    # Portuguese's other heuristics decide most of their deals in 300-6,000 expansions
    restart_step = 10_000  # from 20,000 each, 10,000 more per round instead of twice as
    # many: the deals left at 10 s mostly need one run at 22,000-55,000, and doubling
    # gave the first runs of that round 40,000 while the others waited (docs/SOLVER.md)

    __slots__ = (
        "_dead_check",
        "_fit_bits",
        "_last",
        "_limit_memo",
        "_memo",
        "_needs",
        "_newest",
        "_same_suit",
        "_shares",
        "_w_king",
        "_w_need",
        "_where",
        "auto",
        "empty_any",
        "fits",
        "found",
        "foundation_first",
        "g_weight",
        "key",
        "left",
        "newest_first",
        "piles",
        "restart_weights",
        "takeback",
    )

    def __init__(
        self,
        piles: list[list[int]],
        found: list[int],
        fits: tuple[tuple[int, ...], ...],
        empty_any: bool,
        takeback: bool,
        auto: AutoRule,
    ) -> None:
        self.piles = [p[:] for p in piles]
        self.found = found[:]
        self.fits = fits
        self._fit_bits = tuple(sum(1 << c for c in set(cs)) for cs in fits)  # fits as masks
        self.empty_any = empty_any
        self.takeback = takeback
        self.restart_weights: tuple[int, ...] = ()  # no restarts but in Portuguese, below
        self.auto = auto
        self.key = order_free_key(self.piles)
        self.left = sum(len(p) for p in self.piles)
        self._memo: dict[bytes, int] = {}
        self._limit_memo: dict[tuple[int, ...], list[int]] = {}
        self._last: Undo | None = None  # the last ``play`` if nothing came after it
        self._shares: list[int] = []  # per pile, _share(pile): kept up to date by play/undo
        self._where: list[int] = []  # per card, the pile it is in (-1: on its foundation)
        # Fortress builds in suit: there a King is no special obstacle
        self._same_suit = all(c // 13 == t // 13 for t, cs in enumerate(fits) for c in cs)
        # Heuristic weights (docs/SOLVER.md). Where only a King fills an empty pile
        # (Portuguese), digging matters more and the search leans harder towards short
        # lines (tuned on seeds 0-59); elsewhere g_weight 2 beat 3 (Spanish with and
        # without takeback, Fortress: 15-30% fewer positions played, seeds 0-199).
        king_only = not empty_any and not self._same_suit
        self._w_king = 15
        self._w_need = 6 if king_only else 3
        self.g_weight = 5 if king_only else 2
        self.foundation_first = not king_only  # measured: see search._best_first
        self.newest_first = False  # ties oldest first (run 0 of Portuguese too)
        # Portuguese takes turns between four heuristics (search._portfolio): g_weight
        # 5, 3, 8 and 4, the last digging less (_w_need 3). Which one decides a deal
        # quickly varies a lot (docs/SOLVER.md): seeds 0-119 at 40,000 expansions left
        # 8 undecided with the first alone, 4 with the first two, 2 with all four
        self._needs: tuple[int, ...] = (self._w_need,)
        self._newest: tuple[bool, ...] = (False,)
        if king_only:
            # and each of them breaking ties oldest first and newest first (its
            # heuristic has wide plateaus of equal values, which oldest first searches
            # breadth-first; docs/SOLVER.md, "Ties"): eight runs, each pair in turn
            self.restart_weights = (5, 3, 3, 8, 8, 4, 4)
            self._needs = (6, 6, 6, 6, 6, 6, 3, 3)
            self._newest = (False, True) * 4
        # Dead ends can be told cheaply only where a card other than a King can never
        # go to an empty pile and nothing comes back from a foundation (_is_dead)
        self._dead_check = king_only and not takeback
        self._reindex()

    def _reindex(self) -> None:
        """Recompute the per-pile heuristic shares and the card locations."""
        where = [-1] * 52
        for i, p in enumerate(self.piles):
            for c in p:
                where[c] = i
        self._where = where
        self._shares = [self._share(p) for p in self.piles]

    def _share(self, p: list[int]) -> int:
        """A pile's part of the heuristic, packed so that the shares of all piles can be
        summed at once: ``((score * 16 + kings) * 16) + 1`` for a pile (``_pile_share``
        gives score and kings), plus its cards above a lower card of their suit times
        ``2**_INV_SHIFT``; 0 for an empty one. The low 4 bits of a sum count the
        non-empty piles (at most 13), the next 4 the Kings off the bottom (at most 4),
        the next 28 the score, the rest the cards above a lower card of their suit."""
        if not p:
            return 0
        b = bytes(p)
        memo = self._memo
        share = memo.get(b)
        if share is None:
            if len(memo) > PILE_MEMO_LIMIT:
                memo.clear()
            share = memo[b] = self._pile_share(p) * 16 + 1
        return share

    def _limits(self, found: list[int]) -> list[int]:
        """``rank_limits`` of this board's rule, remembered per foundation heights (at
        most 14**4 of them; a look-up is a fifth of the computation)."""
        f = tuple(found)
        lim = self._limit_memo.get(f)
        if lim is None:
            lim = self._limit_memo[f] = rank_limits(self.auto, found)
        return lim

    # ------------------------------------------------------------------ moves
    def moves(self) -> list[tuple[Mv, int]]:
        """Every move worth trying (foundation moves, tableau moves, takebacks), each with
        the key it leads to when that is known without playing it (else -1: the move
        may set off safe foundation moves)."""
        piles, found, fits, key = self.piles, self.found, self.fits, self.key
        if self._is_dead():
            # no move is worth trying. Checked here, once per position expanded,
            # rather than in ``heuristic`` for every child valued: ten times fewer
            # calls, for the cost of storing a few lost positions (measured on seeds
            # 0-59 at 20,000 positions: as many deals decided, 12% less time)
            return []
        limits = self._limits(found)
        # top card -> (pile, index in PAIR of the pair it leaves, or -1 when the card it
        # uncovers then goes up at once): keys are worked out only for the moves made
        tops: dict[int, tuple[int, int]] = {}
        out: list[tuple[Mv, int]] = []
        first_empty = -1
        top_bits = 0  # the top cards as a bit mask: most piles take none of them
        for i, p in enumerate(piles):
            if not p:
                if first_empty < 0:
                    first_empty = i
                continue
            c = p[-1]
            top_bits |= _BIT[c]
            if found[c // 13] == c % 13:
                out.append(((TO_FOUNDATION, i, 0, 1), -1))
            if len(p) == 1:
                tops[c] = (i, c * SUPPORTS + ON_TABLE)
            else:
                u = p[-2]
                if found[u // 13] == u % 13 and u % 13 <= limits[u // 13]:
                    tops[c] = (i, -1)  # uncovers a card that then goes up at once
                else:
                    tops[c] = (i, c * SUPPORTS + u)
        fit_bits = self._fit_bits
        for j, q in enumerate(piles):
            if q and fit_bits[q[-1]] & top_bits:
                t = q[-1]
                for c in fits[t]:
                    v = tops.get(c)
                    if v is not None:
                        i, k = v
                        k = key ^ PAIR[k] ^ PAIR[c * SUPPORTS + t] if k >= 0 else -1
                        out.append(((TABLEAU, i, j, 1), k))
        if first_empty >= 0:
            empty_any = self.empty_any
            for c, (i, k) in tops.items():
                if len(piles[i]) > 1 and (empty_any or c % 13 == 12):
                    mv = (TABLEAU, i, first_empty, 1)
                    k = key ^ PAIR[k] ^ PAIR[c * SUPPORTS + ON_TABLE] if k >= 0 else -1
                    out.append((mv, k))
        if self.takeback:
            for s in range(4):
                height = found[s]
                if height == 0 or height - 1 <= limits[s]:
                    continue  # empty, or the card would go straight back up
                card = s * 13 + height - 1
                for j, q in enumerate(piles):
                    if q and card in fits[q[-1]]:
                        out.append(((TAKEBACK, s, j, 1), key ^ PAIR[card * SUPPORTS + q[-1]]))
                if first_empty >= 0 and (self.empty_any or height == 13):
                    mv = (TAKEBACK, s, first_empty, 1)
                    out.append((mv, key ^ PAIR[card * SUPPORTS + ON_TABLE]))
        return out

    # ------------------------------------------------------------------ play
    def start(self) -> list[str]:
        """Play the safe foundation moves of the initial position."""
        return [f"{i + 1}>f" for i, _ in self._autoplay(-1)]

    def play(self, mv: Mv) -> Undo:
        """Play ``mv`` and the safe foundation moves it allows."""
        key, shares = self.key, self._shares
        self._shares = new = shares[:]
        share = self._share
        kind, src, dst, _ = mv
        piles = self.piles
        if kind == TABLEAU:
            p, q = piles[src], piles[dst]
            c = p.pop()
            self.key ^= (PAIR[c * SUPPORTS + (p[-1] if p else ON_TABLE)]
                         ^ PAIR[c * SUPPORTS + (q[-1] if q else ON_TABLE)])
            q.append(c)
            self._where[c] = dst
            # _share and _autoplay's fast path inlined: the commonest play of all
            memo = self._memo
            v = memo.get(bytes(q))
            new[dst] = v if v is not None else share(q)
            if p:
                v = memo.get(bytes(p))
                new[src] = v if v is not None else share(p)
                t = p[-1]
                if self.found[t // 13] == t % 13 and self.auto:
                    autos = self._autoplay(src)
                else:
                    autos = _NO_AUTOS
            else:
                new[src] = 0
                autos = _NO_AUTOS
        elif kind == TO_FOUNDATION:
            p = piles[src]
            c = p.pop()
            self.key ^= PAIR[c * SUPPORTS + (p[-1] if p else ON_TABLE)]
            self.found[c // 13] += 1
            self.left -= 1
            self._where[c] = -1
            new[src] = share(p)
            autos = self._autoplay(-1)
        else:  # TAKEBACK: src is the suit; nothing new becomes safe
            self.found[src] -= 1
            c = src * 13 + self.found[src]
            q = piles[dst]
            self.key ^= PAIR[c * SUPPORTS + (q[-1] if q else ON_TABLE)]
            q.append(c)
            self.left += 1
            self._where[c] = dst
            new[dst] = share(q)
            autos = _NO_AUTOS
        u = self._last = (key, mv, autos, c, shares)
        return u

    def _autoplay(self, changed: int) -> tuple[tuple[int, int], ...]:
        """Play every safe foundation move until none is left; (pile, card) of each.
        ``changed`` is the only pile whose top changed (-1: look at every pile)."""
        auto = self.auto
        if not auto:
            return _NO_AUTOS
        piles, found = self.piles, self.found
        where, shares = self._where, self._shares
        if changed >= 0:  # fast path: nothing else can have become safe
            p = piles[changed]
            if not p:
                return _NO_AUTOS
            t = p[-1]
            if found[t // 13] != t % 13 or t % 13 > self._limits(found)[t // 13]:
                return _NO_AUTOS
        else:  # only a suit's next card can go up: is one of the four a safe top card?
            limits = self._limits(found)
            for s in range(4):
                h = found[s]
                if h < 13 and h <= limits[s]:
                    n = s * 13 + h
                    if piles[where[n]][-1] == n:
                        break
            else:
                return _NO_AUTOS
        done: list[tuple[int, int]] = []
        again = True
        while again:
            again = False
            limits = self._limits(found)  # stale within a pass: only more cautious
            for i, p in enumerate(piles):
                moved = False
                while p:
                    c = p[-1]
                    r = c % 13
                    if found[c // 13] != r or r > limits[c // 13]:
                        break
                    p.pop()
                    self.key ^= PAIR[c * SUPPORTS + (p[-1] if p else ON_TABLE)]
                    found[c // 13] += 1
                    where[c] = -1
                    done.append((i, c))
                    again = moved = True
                if moved:
                    shares[i] = self._share(p)
        self.left -= len(done)
        return tuple(done)

    def undo(self, u: Undo) -> None:
        """Take back a ``play``."""
        key, (kind, src, dst, _), autos, card, self._shares = u
        self._last = None
        piles, found, where = self.piles, self.found, self._where
        if autos:
            for i, c in reversed(autos):
                found[c // 13] -= 1
                piles[i].append(c)
                where[c] = i
            self.left += len(autos)
        if kind == TABLEAU:
            piles[src].append(piles[dst].pop())
            where[card] = src
        elif kind == TO_FOUNDATION:
            found[card // 13] -= 1
            piles[src].append(card)
            where[card] = src
            self.left += 1
        else:
            piles[dst].pop()
            found[src] += 1
            where[card] = -1
            self.left -= 1
        self.key = key

    def notation(self, u: Undo) -> list[str]:
        """The played move then its safe foundation moves, in canonical notation."""
        _, (kind, src, dst, _n), autos, _card, _shares = u
        if kind == TABLEAU:
            first = f"{src + 1}>{dst + 1}"
        elif kind == TO_FOUNDATION:
            first = f"{src + 1}>f"
        else:
            first = f"f{_SUITS[src]}>{dst + 1}"
        return [first] + [f"{i + 1}>f" for i, _ in autos]

    # ------------------------------------------------------------ best-first
    def snapshot(self) -> bytes:
        """The board as compact bytes: the four foundation heights, then the piles
        separated by 0xFF."""
        return bytes(self.found) + b"\xff".join(map(bytes, self.piles))

    def restore(self, snap: bytes, key: int) -> None:
        """Set the board to a ``snapshot`` whose key is ``key``."""
        self.found = found = list(snap[:4])
        parts = snap[4:].split(b"\xff")
        self.piles = piles = [list(b) for b in parts]
        self.left = 52 - sum(found)
        self.key = key
        self._last = None
        # as _reindex, but the piles' bytes are at hand for the share memo
        where = [-1] * 52
        memo, shares = self._memo, []
        for i, b in enumerate(parts):
            if not b:
                shares.append(0)
                continue
            for c in b:
                where[c] = i
            share = memo.get(b)
            shares.append(share if share is not None else self._share(piles[i]))
        self._where = where
        self._shares = shares

    def heuristic(self) -> int:
        """An estimate of the work left (lower is better; see docs/SOLVER.md): 10 per
        card not up, the cards above each suit's next card, each pile's own share
        (``_pile_share``), and a bonus per empty pile -- where only a King may fill one,
        only as many empty piles count as there are Kings waiting for one."""
        found, piles, where = self.found, self.piles, self._where
        total = sum(self._shares)
        empties = len(piles) - (total & 15)
        kings = (total >> 4) & 15
        score = 10 * self.left + ((total >> 8) & _SCORE_MASK)
        score -= 8 * (empties if self.empty_any else min(empties, kings))
        need = self._w_need
        for s in range(4):
            h = found[s]
            if h < 13:
                c = s * 13 + h
                p = piles[where[c]]
                score += need * (len(p) - 1 - p.index(c))
        return score

    def tableau_heuristic(self, src: int, dst: int) -> int:
        """``heuristic`` of the position after moving the top card of pile ``src`` onto
        pile ``dst``, worked out without playing the move: for a move that no safe
        foundation move follows (one ``moves`` announces a key for), the very number
        ``play``, ``heuristic``, ``undo`` would give, for about half the cost."""
        piles, shares, memo = self.piles, self._shares, self._memo
        p, q = piles[src], piles[dst]
        c = p[-1]
        if len(p) > 1:
            rest = p[:-1]
            a = memo.get(bytes(rest))
            if a is None:
                a = self._share(rest)
        else:
            a = 0
        grown = [*q, c]
        b = memo.get(bytes(grown))
        if b is None:
            b = self._share(grown)
        total = sum(shares) - shares[src] - shares[dst] + a + b
        empties = len(piles) - (total & 15)
        kings = (total >> 4) & 15
        score = 10 * self.left + ((total >> 8) & _SCORE_MASK)
        score -= 8 * (empties if self.empty_any else min(empties, kings))
        need, found, where = self._w_need, self.found, self._where
        for s in range(4):
            h = found[s]
            if h < 13:
                n = s * 13 + h
                if n == c:
                    continue  # on top before and after: nothing above it
                w = where[n]
                r = piles[w]
                above = len(r) - 1 - r.index(n)
                if w == src:
                    above -= 1
                elif w == dst:
                    above += 1
                score += need * above
        return score

    def clears(self) -> bool:
        """Whether foundation moves alone empty the tableau (``search._clears``), told
        at once when some card lies above a lower card of its own suit: that one can
        never go up first, so they cannot (the usual case, until the very end)."""
        if sum(self._shares) >> _INV_SHIFT:
            return False
        return _clears(self.piles, self.found)

    def weigh(self, run: int) -> None:
        """Use the digging weight and the tie order of run ``run`` of the restart
        schedule."""
        self._w_need = self._needs[run] if run < len(self._needs) else self._needs[0]
        self.newest_first = self._newest[run] if run < len(self._newest) else self._newest[0]

    def _is_dead(self) -> bool:
        """Whether the position is provably lost because some cards can never move
        again while one of them covers a lower card of its suit (``stuck_cards``). Only
        in Portuguese (``_dead_check``): elsewhere a card may go to an empty pile or come
        back from a foundation, which the proof does not allow for.

        A shortcut where the position was reached by ``play``ing a tableau move (and
        the safe foundation moves after it) from a position this said was not lost (as
        the search does: it expands only children of positions it expanded, and a lost
        one has no moves): then any stuck set must hold the card moved, X. (Else the
        same set was stuck before: only the cards under X's old and new places changed
        covers, which matters only if X is in the set, and no card one rank higher than
        a card Y of the set can have gone up safely while a lower card of Y's suit is
        in the tableau: see docs/SOLVER.md.) So unless X could be stuck -- not a King,
        and no card one rank higher on top of a pile -- the position is not lost; and
        if it could, the fixed point stops as soon as it drops X. Likewise after a
        foundation move (and the safe ones after it): a stuck set must then hold a card
        one rank below a card that went up (it was not stuck before, and only those
        cards lost a way out), so unless a rank below has no card one rank higher on
        top of a pile, the position is not lost."""
        if not self._dead_check:
            return False
        last = self._last
        must = 0
        if last is not None and last[1][0] == TABLEAU:
            x = last[3]
            rank = x % 13 + 1  # the rank index X needs to move onto
            if rank == 13:
                return False  # a King is never stuck
            for p in self.piles:
                if p and p[-1] % 13 == rank:
                    return False  # X has a way out
            must = _BIT[x]
        elif last is not None and last[1][0] == TO_FOUNDATION:
            # Cards went up (the one moved and the safe moves after it): a stuck set
            # must hold a card one rank below one of them (docs/SOLVER.md), and one
            # with no card one rank higher on top of a pile
            top_ranks = 0
            for p in self.piles:
                if p:
                    top_ranks |= 1 << (p[-1] % 13)
            for r in {last[3] % 13, *(c % 13 for _, c in last[2])}:
                if r and not top_ranks >> r & 1:
                    must |= _RANK[r - 1]
            if not must:
                return False
        return bool(stuck_cards(self.piles, self.found, must))

    def _pile_share(self, p: list[int]) -> int:
        """The part of the heuristic a pile alone decides, times 16, plus the number of
        Kings off its bottom (at most 4): +1 per card not lying on a card it builds on,
        +5 per card above a lower card of its suit (it must move before that one goes
        up), and per King off the bottom (it needs an empty pile to move to); plus the
        cards above a lower card of their suit times ``2**(_INV_SHIFT - 4)`` (``clears``)."""
        fits = self.fits
        score = kings = inv = 0
        lowest = [99, 99, 99, 99]
        below = -1
        for depth, c in enumerate(p):
            if below >= 0 and c not in fits[below]:
                score += 1
            s = c // 13
            if lowest[s] < c:
                score += 5
                inv += 1
            else:
                lowest[s] = c
            if depth and c % 13 == 12 and not self._same_suit:
                kings += 1
            below = c
        return ((score + self._w_king * kings) * 16 + kings) | inv << (_INV_SHIFT - 4)


_INV_SHIFT = 36  # where a pile's share keeps its cards above a lower card of their suit
_SCORE_MASK = (1 << (_INV_SHIFT - 8)) - 1  # the summed scores, once shifted down by 8
_BIT = tuple(1 << c for c in range(52))
_ALL = (1 << 52) - 1
# _UP[s][h]: the first h cards of suit s (those on its foundation at height h)
_UP = tuple(tuple(((1 << h) - 1) << (13 * s) for h in range(14)) for s in range(4))
# _LOWER[c]: the lower cards of c's suit; _NEXT_RANK[c]: the cards c may be put on
_LOWER = tuple(((1 << (c % 13)) - 1) << (13 * (c // 13)) for c in range(52))
_RANK = tuple(sum(1 << (s * 13 + r) for s in range(4)) for r in range(13))
_NEXT_RANK = tuple(_RANK[c % 13 + 1] if c % 13 < 12 else 0 for c in range(52))


def stuck_cards(piles: list[list[int]], found: list[int], must: int = 0) -> int:
    """The largest set S of Portuguese cards (a bit mask, bit c for card c) such that
    each card X of S is not a King, has a lower card of its suit lying under a card of
    S (in any pile: X itself, say), and has every card one rank higher either on its
    foundation or lying under a card of S; 0 when there is none.

    No card of S ever moves again, so none ever goes up: the position is lost. Proof:
    take the first move of a card of S, X. Until then every card of S is where it was,
    so every card under one is still under it. X cannot go up (a lower card of its suit
    is still in the tableau), nor to an empty pile (it is not a King), nor onto a card
    one rank higher (each is up, and nothing comes back, or still covered). So there
    is no such move. (Rules assumed: one card moves at a time, onto a card one rank
    higher of any suit or, a King only, to an empty pile; nothing comes back from a
    foundation.) S is a greatest fixed point: start from every candidate, drop each
    card with a way out, repeat.

    ``must`` (a card's bit, or 0): the caller knows that every non-empty such set holds
    that card (``SinglePosition._is_dead``); 0 is returned as soon as the card is ruled
    out, which changes nothing when the caller is right (the largest set, the union of
    all such sets, is then empty)."""
    tops = 0
    for p in piles:
        if p:
            tops |= _BIT[p[-1]]
    # Cheap filters first: a card of S has no card one rank higher on top of a pile,
    # and a lower card of its suit off the top of a pile
    s = 0
    for r in range(12):
        if not _RANK[r + 1] & tops:
            s |= _RANK[r]
    if not s:
        return 0
    up = _UP[0][found[0]] | _UP[1][found[1]] | _UP[2][found[2]] | _UP[3][found[3]]
    intab = _ALL ^ up
    below_top = intab & ~tops
    cand = 0
    for suit in range(4):
        low = (below_top >> (13 * suit)) & 0x1FFF
        if low:  # the suit's cards above its lowest card that is off the top
            cand |= (0x1FFF & ~((low & -low) * 2 - 1)) << (13 * suit)
    s &= cand & intab
    if not s or (must and not s & must):
        return 0
    return _fixed_point(piles, s, intab, must)


def _fixed_point(piles: list[list[int]], s: int, intab: int, must: int = 0) -> int:
    """``stuck_cards`` once the candidates ``s`` are known: drop the cards with a way out
    until none is left to drop (usually within a round or two)."""
    while True:
        covered = 0  # cards under a card of s
        for p in piles:
            for d in range(len(p) - 1, 0, -1):
                if s >> p[d] & 1:
                    for c in p[:d]:
                        covered |= _BIT[c]
                    break
        free = intab & ~covered  # cards that may yet be a top card
        keep = 0
        rest = s
        while rest:
            low = rest & -rest
            c = low.bit_length() - 1
            rest ^= low
            if _LOWER[c] & covered and not _NEXT_RANK[c] & free:
                keep |= low
        if keep == s or not keep:
            return keep
        if must and not keep & must:
            return 0
        s = keep
