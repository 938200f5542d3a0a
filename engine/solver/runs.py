"""Positions for Perseverance: run moves in suit, empty piles stay empty, redeals.

Pile order matters here (a redeal gathers the piles in order), so the key is
``keys.ordered_key`` plus the redeals left. Empty piles are never move targets.
"""

from __future__ import annotations

from ..diff import REDEAL_GROUP
from ..moves import REDEAL, TABLEAU, TO_FOUNDATION
from .keys import ON_PILE, PAIR, SUPPORTS, ordered_key, redeals_key
from .safety import AutoRule, rank_limits
from .search import RESTART_GROWTH, RESTART_NODES, RESTART_STEP, Mv, Undo

_NO_AUTOS: tuple[tuple[int, int], ...] = ()
REDEAL_MV: Mv = (REDEAL, 0, 0, 0)


class RunsPosition:
    """A Perseverance board. ``redeal_any_time`` is the ``redeal_when=any_time`` option;
    safe foundation moves are played at once except while a redeal could still follow
    at any time (a foundation move there changes how the redeal groups the cards)."""

    __slots__ = ("found", "g_weight", "key", "left", "piles", "redeal_any_time", "redeals_left",
                 "safe_moves")

    foundation_first = True  # value foundation moves first (search._best_first)
    newest_first = False  # ties: oldest first (search._best_first)
    restart_weights: tuple[int, ...] = ()  # no restarts (search._portfolio)
    restart_nodes = RESTART_NODES
    restart_growth = RESTART_GROWTH
    restart_step = RESTART_STEP

    def __init__(
        self,
        piles: list[list[int]],
        found: list[int],
        redeals_left: int,
        redeal_any_time: bool,
        safe_moves: bool = True,
    ) -> None:
        self.piles = [p[:] for p in piles]
        self.found = found[:]
        self.redeals_left = redeals_left
        self.redeal_any_time = redeal_any_time
        self.safe_moves = safe_moves
        self.key = ordered_key(self.piles) ^ redeals_key(redeals_left)
        self.left = sum(len(p) for p in self.piles)
        self.g_weight = 3  # heuristic units per move played (docs/SOLVER.md)

    @property
    def auto(self) -> AutoRule:
        """The safe-move rule right now (``safety``)."""
        if not self.safe_moves or (self.redeal_any_time and self.redeals_left > 0):
            return AutoRule.NONE
        return AutoRule.ANY

    def _support(self, i: int, k: int) -> int:
        """What the card at index k of pile i lies on, as a key support."""
        return self.piles[i][k - 1] if k else ON_PILE + i

    # ------------------------------------------------------------------ moves
    def moves(self) -> list[tuple[Mv, int]]:
        """Foundation moves, run moves, and the redeal when it is allowed (each with -1:
        positions here are cheap to play, the search is small)."""
        piles, found = self.piles, self.found
        runs: dict[int, tuple[int, int]] = {}  # bottom card of a top run -> (pile, index)
        out: list[Mv] = []
        for i, p in enumerate(piles):
            if p:
                k = len(p) - 1
                while k and p[k - 1] == p[k] + 1 and p[k] % 13 != 12:
                    k -= 1
                runs[p[k]] = (i, k)
                t = p[-1]
                if found[t // 13] == t % 13:
                    out.append((TO_FOUNDATION, i, 0, 1))
        for j, q in enumerate(piles):
            if q and q[-1] % 13:
                v = runs.get(q[-1] - 1)
                if v is not None:
                    i, k = v
                    out.append((TABLEAU, i, j, len(piles[i]) - k))
        if self.redeals_left > 0 and (self.redeal_any_time or not out):
            out.append(REDEAL_MV)
        return [(mv, -1) for mv in out]

    # ------------------------------------------------------------------ play
    def start(self) -> list[str]:
        """Play the safe foundation moves of the initial position."""
        return [f"{i + 1}>f" for i, _ in self._autoplay()]

    def play(self, mv: Mv) -> Undo:
        """Play ``mv`` and the safe foundation moves it allows."""
        key = self.key
        kind, src, dst, n = mv
        piles = self.piles
        saved: list[list[int]] | None = None
        c = -1
        if kind == TABLEAU:
            p, q = piles[src], piles[dst]
            k = len(p) - n
            b = p[k]
            self.key ^= PAIR[b * SUPPORTS + self._support(src, k)] ^ PAIR[b * SUPPORTS + q[-1]]
            q.extend(p[k:])
            del p[k:]
        elif kind == TO_FOUNDATION:
            p = piles[src]
            c = p.pop()
            self.key ^= PAIR[c * SUPPORTS + self._support(src, len(p))]
            self.found[c // 13] += 1
            self.left -= 1
        else:  # REDEAL
            saved = piles
            cards = [c for p in piles for c in p]
            self.piles = [cards[i * REDEAL_GROUP:(i + 1) * REDEAL_GROUP] for i in range(len(piles))]
            self.redeals_left -= 1
            self.key = ordered_key(self.piles) ^ redeals_key(self.redeals_left)
        return (key, mv, self._autoplay(), saved, c)

    def _autoplay(self) -> tuple[tuple[int, int], ...]:
        """Play every safe foundation move until none is left; (pile, card) of each."""
        auto = self.auto
        if not auto:
            return _NO_AUTOS
        piles, found = self.piles, self.found
        done: list[tuple[int, int]] = []
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
                    self.key ^= PAIR[c * SUPPORTS + self._support(i, len(p))]
                    found[c // 13] += 1
                    done.append((i, c))
                    again = True
        self.left -= len(done)
        return tuple(done) if done else _NO_AUTOS

    def undo(self, u: Undo) -> None:
        """Take back a ``play``."""
        key, (kind, src, dst, n), autos, saved, card = u
        piles, found = self.piles, self.found
        for i, c in reversed(autos):
            found[c // 13] -= 1
            piles[i].append(c)
        self.left += len(autos)
        if kind == TABLEAU:
            q = piles[dst]
            piles[src].extend(q[len(q) - n:])
            del q[len(q) - n:]
        elif kind == TO_FOUNDATION:
            found[card // 13] -= 1
            piles[src].append(card)
            self.left += 1
        else:
            assert saved is not None
            self.piles = saved
            self.redeals_left += 1
        self.key = key

    def notation(self, u: Undo) -> list[str]:
        """The played move then its safe foundation moves, in canonical notation."""
        _, (kind, src, dst, n), autos, _saved, _card = u
        if kind == TABLEAU:
            first = f"{src + 1}>{dst + 1}" if n == 1 else f"{src + 1}:{n}>{dst + 1}"
        elif kind == TO_FOUNDATION:
            first = f"{src + 1}>f"
        else:
            first = "redeal"
        return [first] + [f"{i + 1}>f" for i, _ in autos]

    # ------------------------------------------------------------ best-first
    def snapshot(self) -> tuple[bytes, int]:
        """Foundation heights and piles as bytes (piles separated by 0xFF), and the
        redeals left."""
        return (bytes(self.found) + b"\xff".join(map(bytes, self.piles)), self.redeals_left)

    def weigh(self, run: int) -> None:
        """Every run of a restart schedule uses the same heuristic here."""

    def restore(self, snap: tuple[bytes, int], key: int) -> None:
        """Set the board to a ``snapshot`` whose key is ``key``."""
        data, self.redeals_left = snap
        self.found = list(data[:4])
        self.piles = [list(p) for p in data[4:].split(b"\xff")]
        self.left = 52 - sum(self.found)
        self.key = key

    def heuristic(self) -> int:
        """An estimate of the work left (lower is better; see docs/SOLVER.md): cards
        not up, cards above a lower card of their suit, cards above each suit's next."""
        found, piles = self.found, self.piles
        score = 10 * self.left
        for p in piles:
            lowest = [99, 99, 99, 99]
            for c in p:
                s = c // 13
                if lowest[s] < c:
                    score += 3
                else:
                    lowest[s] = c
        for s in range(4):
            h = found[s]
            if h < 13:
                c = s * 13 + h
                for p in piles:
                    if c in p:
                        score += 2 * (len(p) - 1 - p.index(c))
                        break
        return score
