"""One board as a client sees it: a masked view, the sequence of the last move applied to
it, and the state hash it must have. Moves arrive as ``Accepted`` (your own) or ``Diff``
(anyone's); each is applied with ``engine.apply_diff`` and checked against the server's
hash, so a lost or misapplied move is noticed at the very move it happens."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import engine
from protocol.messages import Board


@dataclass
class BoardState:
    """A seat's board: ``view`` (RULES.md layout, face-down cards as counts) after ``seq``
    moves. ``desynced`` is set when a move could not be applied or the hash disagreed;
    the board must then be replaced (a resume or a snapshot) before it is trusted again."""

    seat: int
    seq: int
    view: dict[str, Any]
    hash: int
    desynced: bool = False
    moves: list[str] = field(default_factory=list)  # the moves applied since the last board

    @classmethod
    def from_board(cls, board: Board) -> BoardState:
        """A board from the server's ``Board`` (Joined, Started, Snapshot)."""
        view = dict(board.view)
        state = cls(board.seat, board.seq, view, board.hash)
        state.desynced = engine.view_hash(view) != board.hash
        return state

    def apply(self, seq: int, move: str, revealed: Any, hash_: int) -> bool:
        """Apply move ``seq`` (``revealed`` as [[pile, code], ...]); True if the board now
        matches the server's hash. A move at or below ``seq`` already applied is ignored
        (a replay after a resume) and returns True; a gap or a bad move marks the board
        desynced and returns False."""
        if seq <= self.seq:
            return not self.desynced
        if seq != self.seq + 1 or self.desynced:
            self.desynced = True
            return False
        diff = engine.Diff(move, tuple((int(p), str(c)) for p, c in revealed))
        try:
            view = engine.apply_diff(self.view, diff)
        except engine.EngineError:
            self.desynced = True
            return False
        self.view, self.seq, self.hash = view, seq, hash_
        self.moves.append(move)
        if engine.view_hash(view) != hash_:
            self.desynced = True
            return False
        return True

    @property
    def progress(self) -> int:
        """Cards on the foundations."""
        return int(sum(self.view["foundations"].values()))

    def game(self) -> engine.Game:
        """A playable stand-in (``engine.game_from_view``) with the real legal moves."""
        return engine.game_from_view(self.view)

    def legal_moves(self) -> list[str]:
        """The legal moves on this board, in canonical notation."""
        return [str(m) for m in self.game().legal_moves()]
