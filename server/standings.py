"""The live ranking of a room, kept on every node from the room's events.

A move's ``Moved`` event carries what the ranking reads of its seat (progress, status,
``progress_ms``, ``finish_ms``, the bot-like mark) and whether the move changed the
ranking (``ranked``). Each node that holds the room keeps the room's seat records, read
from the store once (at the first ranked move it sees, again after a start or a
rematch), updates them from every ``Moved`` and ``SeatStatus``, and sends its members
the ``Ranking`` after each ranked move. So a move costs the store one call (the append
that publishes its event: docs/SERVER.md "One move"), not an extra read of every seat
and a second publish for the ranking.

A node's records may be ahead of the events it has applied (read from the store while
later moves were already stored) but never behind: an event older than a seat's record
(by move number) is not applied, and the ranking sent is always the current one.
"""

from __future__ import annotations

import logging
from typing import Literal

from protocol import encode
from protocol.messages import Ranking
from protocol.ranking import rank

from . import events as ev
from .store.base import Store, StoreUnavailable
from .store.records import SeatRecord

log = logging.getLogger(__name__)


class Standings:
    """One room's seats as the ranking sees them (see the module docstring)."""

    __slots__ = ("_code", "_rank_by", "_seats", "_store")

    def __init__(self, store: Store, code: str, rank_by: str) -> None:
        self._store = store
        self._code = code
        self._rank_by = rank_by
        self._seats: dict[int, SeatRecord] | None = None  # None: read at the next need

    def needs_read(self, event: ev.Event) -> bool:
        """True when ``after(event)`` would read the seats from the store (a ranked move
        of a seat not in the records held); otherwise ``after_now`` does its work
        without a wait (the room's event handler stays synchronous for a move)."""
        if not isinstance(event, ev.Moved) or not event.ranked:
            return False
        seats = self._seats
        return seats is None or event.seat not in seats

    async def after(self, event: ev.Event) -> ev.Broadcast | None:
        """Apply ``event``; the ``Ranking`` to send every member after it (a ranked
        move), or None. Reads the seats from the store only when it has none (a store
        failure then skips this ranking: the next ranked move sends a current one)."""
        if not self.needs_read(event):
            return self.after_now(event)
        assert isinstance(event, ev.Moved)
        try:
            read = await self._store.get_seats(self._code)
        except StoreUnavailable as exc:
            log.warning("room %s: ranking skipped (%s)", self._code, exc)
            self._seats = None
            return None
        seats = self._seats = {s.seat: s for s in read}
        return self._ranking(seats, event, fresh=True)

    def after_now(self, event: ev.Event) -> ev.Broadcast | None:
        """``after`` for an event that ``needs_read`` says needs no store read: the same
        effect and answer, synchronously."""
        if isinstance(event, ev.Moved):
            ranking = self.moved(event)
            assert ranking is not False  # (needs_read said no read)
            return ranking
        if isinstance(event, ev.SeatStatus):
            seat = self._seats.get(event.seat) if self._seats is not None else None
            if seat is not None:
                seat.status = event.status
                if event.moves >= seat.moves:
                    seat.progress, seat.moves = event.progress, event.moves
        elif isinstance(event, ev.Started | ev.NewRound | ev.Countdown):
            self._seats = None  # the seats are settled (or reset) now: read them afresh
        return None

    def moved(self, event: ev.Moved) -> ev.Broadcast | Literal[False] | None:
        """A move's ``needs_read`` and ``after_now`` in one call (a room's handler runs it
        for every move): False when ``after(event)`` must read the seats (nothing
        applied then), else ``after_now(event)``'s effect and answer."""
        seats = self._seats
        seat = seats.get(event.seat) if seats is not None else None
        if seat is None:
            if event.ranked:
                return False
            self._seats = None  # read at the next ranked move
            return None
        # ``_ranking`` and ``_apply_move`` (records not fresh), without their calls
        if event.seq <= seat.moves:
            return None  # older than the record: its ranking went out
        seat.progress, seat.moves, seat.status = event.progress, event.seq, event.status
        seat.progress_ms = event.progress_ms
        if event.finish_ms is not None:
            seat.finish_ms = event.finish_ms
        seat.bot_like = seat.bot_like or event.bot_like
        if not event.ranked:
            return None
        assert seats is not None
        flagged = {s.seat for s in seats.values() if s.bot_like}
        return ev.Broadcast(encode(Ranking(ranking=rank(seats.values(), self._rank_by,
                                                        flagged))))

    def _ranking(self, seats: dict[int, SeatRecord], event: ev.Moved,
                 fresh: bool) -> ev.Broadcast | None:
        """Apply the move to ``seats``; the ranking if it changed (``fresh``: the records
        were just read, so the ranking they give has not gone out yet)."""
        applied = self._apply_move(seats, event)
        if not event.ranked or not (applied or fresh):
            return None  # unchanged, or older than the records (their ranking went out)
        flagged = {s.seat for s in seats.values() if s.bot_like}
        return ev.Broadcast(encode(Ranking(ranking=rank(seats.values(), self._rank_by,
                                                        flagged))))

    @staticmethod
    def _apply_move(seats: dict[int, SeatRecord], event: ev.Moved) -> bool:
        """Update the seat from its move; False if the record already had it."""
        seat = seats.get(event.seat)
        if seat is None or event.seq <= seat.moves:
            return False  # not in the room (yet) as read, or the record read has it
        seat.progress, seat.moves, seat.status = event.progress, event.seq, event.status
        seat.progress_ms = event.progress_ms
        if event.finish_ms is not None:
            seat.finish_ms = event.finish_ms
        seat.bot_like = seat.bot_like or event.bot_like
        return True
