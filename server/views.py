"""Who may see what (the leak rules), and building what they may see.

The rules, enforced by construction (these functions are the only place boards are
built for clients, and they only ever use ``Game.view()``, which masks face-down cards):

- A player sees its own board, and of rivals only ``SeatInfo``/``Progress`` (progress,
  move count, status) until the results.
- A spectator sees every board, masked, and as of ``now - spectator_delay`` while the race
  runs (a spectator must not be able to relay a board faster than the delay) -- except
  while the room has hidden information (``room_hidden``): then it sees no board at all,
  only what rivals see. Every seat has the same deal, so a card face up on one board (or
  leaving a masked slot on it) names a card still face down on another: masking per board
  cannot protect a racing seat, only withholding every board can. The room stops hiding
  for good once no racing seat has a face-down card (counts never go up again, a seat
  never races again) or the race is over; spectators then get every board.
- Nobody sees any board before the race starts (no pre-planning), and nobody sees the
  seed or salt before the results; after the results everything is public.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import msgspec

import engine
from protocol.messages import Board, RoomSettings, SeatInfo
from protocol.messages import Diff as DiffMsg

from .store.records import Checkpoint, LogEntry, RoomRecord, SeatRecord

_LAYOUT = msgspec.msgpack.Encoder()


def seat_info(seat: SeatRecord) -> SeatInfo:
    """What everyone may know of a seat."""
    return SeatInfo(
        seat=seat.seat,
        name=seat.name,
        bot=seat.bot,
        ready=seat.ready,
        connected=seat.connected,
        status=seat.status,
        progress=seat.progress,
        moves=seat.moves,
        finish_ms=seat.finish_ms,
    )


def new_board(record: RoomRecord, settings: RoomSettings) -> engine.Game:
    """The room's deal, before any move (the same for every seat)."""
    return engine.new_game(settings.variant, seed=record.seed, **settings.options)


def face_down(game: engine.Game) -> int:
    """How many cards are face down on ``game``'s board (a count leaks no identity)."""
    return sum(game.down)


def room_hidden(down: dict[int, int], racing: Iterable[int]) -> bool:
    """True while some racing seat still has a face-down card (``down``: seat -> its
    face-down count; a racing seat missing from it is assumed to have some)."""
    return any(down.get(seat, 1) != 0 for seat in racing)


def board(seat: int, seq: int, game: engine.Game) -> Board:
    """A masked board message for ``seat`` after ``seq`` moves."""
    return Board(seat=seat, seq=seq, view=game.view(), hash=game.state_hash())


@dataclass
class Replay:
    """A board rebuilt from its log: the game after ``seq`` moves and, for the moves
    after ``diffs_after``, the Diff messages that bring a receiver there. ``stopped``:
    the replay met an entry later than its ``until_clock_ms`` (entries were left)."""

    game: engine.Game
    seq: int
    diffs: list[DiffMsg]
    reached: dict[int, int]  # progress -> race clock when the seat first reached it
    stopped: bool = False


def replay(
    record: RoomRecord,
    settings: RoomSettings,
    seat: int,
    entries: Iterable[LogEntry],
    diffs_after: int | None = None,
    until_clock_ms: int | None = None,
    start: Replay | None = None,
) -> Replay:
    """Replay ``entries`` (a seat's log, from move 1; or from the move after
    ``start.seq``, continuing ``start``, whose game is advanced in place) on the deal.
    Stops before the first entry later than ``until_clock_ms`` (a delayed view). With
    ``diffs_after``, collects the Diff messages (hash and reveals recomputed) of the
    moves after that sequence. ``reached`` maps each progress the seat had to the race
    clock it first had it. Logged moves were legal when stored, so a failure here is a
    server bug: it raises."""
    if start is None:
        game, seq, reached = new_board(record, settings), 0, {}
    else:
        game, seq, reached = start.game, start.seq, start.reached
    diffs: list[DiffMsg] = []
    progress = game.progress
    stopped = False
    for entry in entries:
        if until_clock_ms is not None and entry.clock_ms > until_clock_ms:
            stopped = True
            break
        diff = game.play(entry.move)
        seq += 1
        if game.progress != progress:
            progress = game.progress
            reached.setdefault(progress, entry.clock_ms)
        if diffs_after is not None and seq > diffs_after:
            diffs.append(
                DiffMsg(
                    seat=seat,
                    seq=seq,
                    move=diff.move,
                    hash=game.state_hash(),
                    clock_ms=entry.clock_ms,
                    revealed=[(p, c) for p, c in diff.revealed],
                )
            )
    return Replay(game, seq, diffs, reached, stopped)


def checkpoint(record: RoomRecord, seq: int, clock_ms: int, game: engine.Game,
               reached: dict[int, int]) -> Checkpoint:
    """The checkpoint of a seat's board ``game`` after ``seq`` moves (move ``seq`` at race
    clock ``clock_ms``). Its layout names face-down cards: for the store only."""
    return Checkpoint(seq=seq, clock_ms=clock_ms, round=record.round,
                      layout=_LAYOUT.encode(game.to_layout()), reached=sorted(reached.items()))


def resume_from(record: RoomRecord, settings: RoomSettings,
                saved: Checkpoint | None) -> Replay:
    """Where a rebuild starts: the board of ``saved`` if it belongs to this round of
    the room, else the fresh deal (``seq`` 0)."""
    if saved is None or saved.round != record.round or saved.seq <= 0:
        return Replay(new_board(record, settings), 0, [], {})
    game = engine.Game.from_layout(msgspec.msgpack.decode(saved.layout))
    return Replay(game, saved.seq, [], dict(saved.reached))
