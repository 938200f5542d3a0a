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
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, cast

from .messages import RankEntry, SeatStatus

_NEVER = 1 << 62  # sorts a missing time after every real one


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


def rank(seats: Iterable[Standing], rank_by: str) -> list[RankEntry]:
    """The ranking of ``seats`` (any order in; ranked, then by seat number, out)."""
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
            )
        )
    return out
