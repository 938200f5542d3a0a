"""The ranking: a pure function of the players' standings (PROTOCOL.md, "Ranking").

Both sides use it: the server to rank a race, anyone holding a ``Results`` message to
check the published order (``protocol.verify``).

Order:

- ``rank_by="time"``: players who won first, by ``finish_ms`` ascending (then fewer
  moves); then everyone else by progress descending, then ``progress_ms`` ascending (who
  reached that progress first), then fewer moves.
- ``rank_by="progress"``: everyone by progress descending, then ``progress_ms``
  ascending, then fewer moves (a win is simply progress 52).

Ties that remain share a rank (1, 2, 2, 4), and equal entries keep seat order.

Bot-like play (PROTOCOL.md, "Bot-like play"): a seat not declared a bot is marked
``bot_like`` when ``BOT_LIKE_MOVES`` of its moves in a row, leaving out moves to the
foundations (clients may auto-play those), were accepted within less than
``BOT_LIKE_SPAN_MS`` of race clock. The mark changes no rank: it tells people to look.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Protocol, cast

from .messages import RankEntry, SeatStatus

_NEVER = 1 << 62  # sorts a missing time after every real one

# 20 deliberate moves in under 2 s is 10 moves a second held for 2 s: each move is two
# key presses or a drag, and a human also has to read the board between moves. Fast human
# play in the tests and the TUI stays well under 4 moves a second over 20 moves.
BOT_LIKE_MOVES = 20
BOT_LIKE_SPAN_MS = 2_000


def is_deliberate(move: str) -> bool:
    """True for a move a client would not auto-play: anything but ``i>f``."""
    return not move.endswith(">f")


def bot_like(moves: Sequence[str], clocks: Sequence[int]) -> bool:
    """True when some ``BOT_LIKE_MOVES`` deliberate moves in a row (``is_deliberate``)
    have clocks spanning less than ``BOT_LIKE_SPAN_MS``. ``clocks[i]`` is the race clock
    of ``moves[i]``; without clocks (or fewer than ``BOT_LIKE_MOVES``) it is False."""
    picked = [c for m, c in zip(moves, clocks, strict=False) if is_deliberate(m)]
    n = BOT_LIKE_MOVES
    return any(picked[i + n - 1] - picked[i] < BOT_LIKE_SPAN_MS
               for i in range(len(picked) - n + 1))


class Standing(Protocol):
    """What ranking reads of a seat (the server's ``SeatRecord`` has these fields)."""

    @property
    def seat(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def bot(self) -> bool: ...
    @property
    def status(self) -> str: ...
    @property
    def progress(self) -> int: ...
    @property
    def moves(self) -> int: ...
    @property
    def finish_ms(self) -> int | None: ...
    @property
    def progress_ms(self) -> int | None: ...


def _key(seat: Standing, rank_by: str) -> tuple[int, ...]:
    progress_ms = seat.progress_ms if seat.progress_ms is not None else _NEVER
    if rank_by == "time":
        if seat.status == "won":
            finish = seat.finish_ms if seat.finish_ms is not None else _NEVER
            return (0, finish, seat.moves, 0)
        return (1, -seat.progress, progress_ms, seat.moves)
    return (0, -seat.progress, progress_ms, seat.moves)


def rank(seats: Iterable[Standing], rank_by: str,
         bot_like_seats: Collection[int] = ()) -> list[RankEntry]:
    """The ranking of ``seats`` (any order in; ranked, then by seat number, out). Seats
    in ``bot_like_seats`` that are not declared bots are marked ``bot_like``."""
    ordered = sorted(seats, key=lambda s: (_key(s, rank_by), s.seat))
    out: list[RankEntry] = []
    previous: tuple[int, ...] | None = None
    current = 0
    for index, seat in enumerate(ordered, 1):
        key = _key(seat, rank_by)
        if key != previous:
            current, previous = index, key
        out.append(
            RankEntry(
                rank=current,
                seat=seat.seat,
                name=seat.name,
                bot=seat.bot,
                status=cast(SeatStatus, seat.status),
                progress=seat.progress,
                moves=seat.moves,
                finish_ms=seat.finish_ms,
                progress_ms=seat.progress_ms,
                bot_like=seat.seat in bot_like_seats and not seat.bot,
            )
        )
    return out
