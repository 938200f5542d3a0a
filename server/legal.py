"""The legal-moves opt-in (``hello.lm``): a thin client asks for its own board's legal
moves with every state of that board it receives, so it can play without the rules.

One hook in ``Connection.send`` calls ``annotate`` for connections that asked; nothing
else in the server knows about it, and connections that did not ask pay one attribute
test per frame. The moves are the engine's, in canonical notation. They are computed on
the seat's own board only (a spectator gets none), and legal moves never depend on which
cards are face down (``engine.game_from_view``), so they reveal nothing hidden.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

import engine
from protocol.messages import Accepted, Board, Diff, Joined, Snapshot, Started

if TYPE_CHECKING:
    from .room import Member


def annotate(member: Member | None, message: Any) -> Any:
    """``message`` with ``lm`` filled in wherever it carries a state of ``member``'s own
    board: its board in ``Joined``/``Started``/``Snapshot``, an ``Accepted``, and the
    replayed own ``Diff`` that brings the board to its current state (earlier replayed
    diffs are superseded by the ``Joined`` board and get none). Other messages, and
    spectators' messages, come back unchanged. Never mutates ``message``."""
    if member is None or not member.is_player:
        return message
    if isinstance(message, Accepted):
        if member.game is not None and message.seq == member.seq:
            return msgspec.structs.replace(message, legal=_names(member.game))
        return message
    if isinstance(message, Diff):
        if message.seat == member.seat and member.game is not None and message.seq == member.seq:
            return msgspec.structs.replace(message, legal=_names(member.game))
        return message
    if isinstance(message, Joined | Started):
        boards = [_board(member, b) for b in message.boards]
        return msgspec.structs.replace(message, boards=boards)
    if isinstance(message, Snapshot):
        return msgspec.structs.replace(message, board=_board(member, message.board))
    return message


def _board(member: Member, board: Board) -> Board:
    """``board`` with its legal moves when it is ``member``'s own."""
    if board.seat != member.seat:
        return board
    game = member.game
    if game is None or member.seq != board.seq:
        # Not the cached game's state: rebuild the rules' view of it (no hidden cards).
        game = engine.game_from_view(board.view)
    return msgspec.structs.replace(board, legal=_names(game))


def _names(game: engine.Game) -> list[str]:
    return [str(move) for move in game.legal_moves()]
