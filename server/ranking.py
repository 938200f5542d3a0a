"""The ranking: a pure function of the players' seat records.

Order (docs/SERVER.md, "Ranking"):

- ``rank_by="time"``: players who won first, by ``finish_ms`` ascending (then fewer
  moves); then everyone else by progress descending, then ``progress_ms`` ascending (who
  reached that progress first), then fewer moves.
- ``rank_by="progress"``: everyone by progress descending, then ``progress_ms``
  ascending, then fewer moves (a win is simply progress 52).

Ties that remain share a rank (1, 2, 2, 4), and equal entries keep seat order.
"""

from __future__ import annotations

from collections.abc import Iterable

from protocol.messages import RankEntry

from .store.records import SeatRecord

_NEVER = 1 << 62  # sorts a missing time after every real one


def _key(seat: SeatRecord, rank_by: str) -> tuple[int, ...]:
    progress_ms = seat.progress_ms if seat.progress_ms is not None else _NEVER
    if rank_by == "time":
        if seat.status == "won":
            finish = seat.finish_ms if seat.finish_ms is not None else _NEVER
            return (0, finish, seat.moves, 0)
        return (1, -seat.progress, progress_ms, seat.moves)
    return (0, -seat.progress, progress_ms, seat.moves)


def rank(seats: Iterable[SeatRecord], rank_by: str) -> list[RankEntry]:
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
                status=seat.status,  # type: ignore[arg-type]
                progress=seat.progress,
                moves=seat.moves,
                finish_ms=seat.finish_ms,
                progress_ms=seat.progress_ms,
            )
        )
    return out
