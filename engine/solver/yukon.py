"""Positions for Brisbane: Yukon group moves, face-down cards (known to the solver).

The key ignores pile order and includes which cards are face down (``keys``). Moves
that cannot matter are never generated: a whole pile with nothing face down under it
to an empty pile, and a move to any empty pile but the first.
"""

from __future__ import annotations

from ..moves import TABLEAU, TO_FOUNDATION
from .keys import FACE_DOWN, ON_TABLE, PAIR, SUPPORTS, order_free_key
from .safety import AutoRule, rank_limits
from .search import RESTART_GROWTH, RESTART_NODES, RESTART_STEP, Mv, Undo

_NO_AUTOS: tuple[tuple[int, int, bool], ...] = ()
PILE_MEMO_LIMIT = 20_000  # as in single.py


class YukonPosition:
    """A Brisbane board: piles bottom to top, the lowest ``down[i]`` cards of pile i
    face down; ``fits[top]`` lists the cards that may go on ``top``; ``empty_any`` says
    whether an empty pile takes any group (else one with a King at its bottom)."""

    __slots__ = ("_memo", "auto", "down", "empty_any", "fits", "found", "g_weight", "key", "left",
                 "piles")

    foundation_first = True  # value foundation moves first (search._best_first)
    newest_first = False  # ties: oldest first (search._best_first)
    # Runs with g_weight 4 and 8 take turns (search._portfolio): Brisbane seeds 0-299 at
    # 20,000 expansions left 11 undecided with 3 alone, 7 with 4, 8 with 8, none with both
    restart_weights: tuple[int, ...] = (8,)
    restart_nodes = RESTART_NODES
    restart_growth = RESTART_GROWTH
    restart_step = RESTART_STEP

    def __init__(
        self,
        piles: list[list[int]],
        down: list[int],
        found: list[int],
        fits: tuple[tuple[int, ...], ...],
        empty_any: bool,
        auto: AutoRule,
    ) -> None:
        self.piles = [p[:] for p in piles]
        self.down = down[:]
        self.found = found[:]
        self.fits = fits
        self.empty_any = empty_any
        self.auto = auto
        self.key = order_free_key(self.piles)
        for p, d in zip(self.piles, self.down, strict=True):
            for c in p[:d]:
                self.key ^= FACE_DOWN[c]
        self.left = sum(len(p) for p in self.piles)
        self.g_weight = 4  # heuristic units per move played (docs/SOLVER.md)
        self._memo: dict[bytes, int] = {}

    # ------------------------------------------------------------------ moves
    def moves(self) -> list[tuple[Mv, int]]:
        """Every move worth trying (foundation moves, then group moves), each with the
        key it leads to when known without playing it (else -1)."""
        piles, down, found, fits = self.piles, self.down, self.found, self.fits
        loc: dict[int, tuple[int, int]] = {}
        out: list[tuple[Mv, int]] = []
        first_empty = -1
        for i, p in enumerate(piles):
            if p:
                for k in range(down[i], len(p)):
                    loc[p[k]] = (i, k)
                t = p[-1]
                if found[t // 13] == t % 13:
                    out.append(((TO_FOUNDATION, i, 0, 1), -1))
            elif first_empty < 0:
                first_empty = i
        for j, q in enumerate(piles):
            if q:
                t = q[-1]
                for c in fits[t]:
                    v = loc.get(c)
                    if v is not None and v[0] != j:
                        i, k = v
                        out.append(((TABLEAU, i, j, len(piles[i]) - k), self._leave_key(i, k, t)))
        if first_empty >= 0:
            empty_any = self.empty_any
            for c, (i, k) in loc.items():
                if k and (empty_any or c % 13 == 12):
                    mv = (TABLEAU, i, first_empty, len(piles[i]) - k)
                    out.append((mv, self._leave_key(i, k, ON_TABLE)))
        return out

    def _leave_key(self, i: int, k: int, onto: int) -> int:
        """The key after the group from index k of pile i goes onto ``onto`` (a card or
        ON_TABLE), or -1 if the card it uncovers then goes up at once."""
        p = self.piles[i]
        b = p[k]
        key = self.key ^ PAIR[b * SUPPORTS + onto]
        if k == 0:
            return key ^ PAIR[b * SUPPORTS + ON_TABLE]
        u = p[k - 1]
        found = self.found
        if found[u // 13] == u % 13 and u % 13 <= rank_limits(self.auto, found)[u // 13]:
            return -1
        key ^= PAIR[b * SUPPORTS + u]
        if k == self.down[i]:
            key ^= FACE_DOWN[u]
        return key

    # ------------------------------------------------------------------ play
    def start(self) -> list[str]:
        """Play the safe foundation moves of the initial position."""
        return [f"{i + 1}>f" for i, _, _ in self._autoplay(-1)]

    def _uncover(self, i: int) -> bool:
        """Turn pile i's top card face up if it is face down; whether it was."""
        p, d = self.piles[i], self.down[i]
        if d and len(p) == d:
            self.down[i] = d - 1
            self.key ^= FACE_DOWN[p[-1]]
            return True
        return False

    def play(self, mv: Mv) -> Undo:
        """Play ``mv`` (turning up a face-down card it uncovers) and the safe
        foundation moves it allows."""
        key = self.key
        kind, src, dst, n = mv
        p = self.piles[src]
        if kind == TABLEAU:
            q = self.piles[dst]
            k = len(p) - n
            b = p[k]
            self.key ^= (PAIR[b * SUPPORTS + (p[k - 1] if k else ON_TABLE)]
                         ^ PAIR[b * SUPPORTS + (q[-1] if q else ON_TABLE)])
            q.extend(p[k:])
            del p[k:]
            flipped = self._uncover(src)
            autos = self._autoplay(src)
            c = b
        else:  # TO_FOUNDATION
            c = p.pop()
            self.key ^= PAIR[c * SUPPORTS + (p[-1] if p else ON_TABLE)]
            self.found[c // 13] += 1
            self.left -= 1
            flipped = self._uncover(src)
            autos = self._autoplay(-1)
        return (key, mv, autos, flipped, c)

    def _autoplay(self, changed: int) -> tuple[tuple[int, int, bool], ...]:
        """Play every safe foundation move until none is left; (pile, card, whether it
        uncovered a face-down card) of each. ``changed``: the only pile whose top
        changed (-1: look at every pile)."""
        auto = self.auto
        if not auto:
            return _NO_AUTOS
        piles, found = self.piles, self.found
        if changed >= 0:
            p = piles[changed]
            if not p:
                return _NO_AUTOS
            t = p[-1]
            if found[t // 13] != t % 13 or t % 13 > rank_limits(auto, found)[t // 13]:
                return _NO_AUTOS
        done: list[tuple[int, int, bool]] = []
        again = True
        while again:
            again = False
            limits = rank_limits(auto, found)
            for i, p in enumerate(piles):
                while p:
                    c = p[-1]
                    r = c % 13
                    if found[c // 13] != r or r > limits[c // 13]:
                        break
                    p.pop()
                    self.key ^= PAIR[c * SUPPORTS + (p[-1] if p else ON_TABLE)]
                    found[c // 13] += 1
                    done.append((i, c, self._uncover(i)))
                    again = True
        self.left -= len(done)
        return tuple(done)

    def undo(self, u: Undo) -> None:
        """Take back a ``play``."""
        key, (kind, src, dst, n), autos, flipped, card = u
        piles, found, down = self.piles, self.found, self.down
        if autos:
            for i, c, up in reversed(autos):
                if up:
                    down[i] += 1
                found[c // 13] -= 1
                piles[i].append(c)
            self.left += len(autos)
        if flipped:
            down[src] += 1
        if kind == TABLEAU:
            q = piles[dst]
            piles[src].extend(q[len(q) - n:])
            del q[len(q) - n:]
        else:
            found[card // 13] -= 1
            piles[src].append(card)
            self.left += 1
        self.key = key

    def notation(self, u: Undo) -> list[str]:
        """The played move then its safe foundation moves, in canonical notation."""
        _, (kind, src, dst, n), autos, _flipped, _card = u
        if kind == TABLEAU:
            first = f"{src + 1}>{dst + 1}" if n == 1 else f"{src + 1}:{n}>{dst + 1}"
        else:
            first = f"{src + 1}>f"
        return [first] + [f"{i + 1}>f" for i, _, _ in autos]

    # ------------------------------------------------------------ best-first
    def snapshot(self) -> bytes:
        """Foundation heights, face-down counts, then the piles separated by 0xFF."""
        return bytes(self.found) + bytes(self.down) + b"\xff".join(map(bytes, self.piles))

    def weigh(self, run: int) -> None:
        """Every run of a restart schedule uses the same heuristic here."""

    def restore(self, snap: bytes, key: int) -> None:
        """Set the board to a ``snapshot`` whose key is ``key``."""
        n = len(self.piles)
        self.found = list(snap[:4])
        self.down = list(snap[4:4 + n])
        self.piles = [list(p) for p in snap[4 + n:].split(b"\xff")]
        self.left = 52 - sum(self.found)
        self.key = key

    def heuristic(self) -> int:
        """An estimate of the work left (lower is better; see docs/SOLVER.md)."""
        found, piles, down = self.found, self.piles, self.down
        score = 10 * self.left
        memo = self._memo
        if len(memo) > PILE_MEMO_LIMIT:
            memo.clear()
        for i, p in enumerate(piles):
            if not p:
                score -= 5
                continue
            b = bytes(p) + bytes((down[i],))
            share = memo.get(b)
            if share is None:
                share = memo[b] = self._pile_share(p, down[i])
            score += share
        for s in range(4):
            h = found[s]
            if h < 13:
                c = s * 13 + h
                for p in piles:
                    if c in p:
                        score += len(p) - 1 - p.index(c)
                        break
        return score

    def _pile_share(self, p: list[int], d: int) -> int:
        """What a pile alone adds to the heuristic: face-down cards, face-up cards not
        on a card they build on, cards above a lower card of their suit."""
        fits = self.fits
        score = 4 * d
        lowest = [99, 99, 99, 99]
        for k, c in enumerate(p):
            if k > d and c not in fits[p[k - 1]]:
                score += 2
            s = c // 13
            if lowest[s] < c:
                score += 3
            else:
                lowest[s] = c
        return score
