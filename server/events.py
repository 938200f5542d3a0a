"""The internal event envelope published through the store to every node of a room.

Nodes share no memory: a room's events reach every node that holds connections in it via
``Store.publish``/``subscribe``, including the node that published (so fan-out has one
path). Events are MessagePack (msgspec), never sent to clients as they are.
"""

from __future__ import annotations

import msgspec

from protocol.messages import SeatStatus as Status


class _Event(msgspec.Struct, tag_field="e", array_like=True):
    """Base of every event."""


class Broadcast(_Event, tag="b"):
    """An encoded server message for every connection in the room (seats, countdown)."""

    frame: bytes


class Countdown(_Event, tag="c"):
    """The race will start at ``start_ms`` (wall clock): every node arms its start timer."""

    start_ms: int


class Started(_Event, tag="s"):
    """The race is running from ``start_ms`` with these seats; each node sends its members
    the boards they may see."""

    start_ms: int
    seats: list[int]


class Moved(_Event, tag="m"):
    """Seat ``seat`` played move ``seq``. Players get a Progress from it, spectators a
    Diff (after the room's delay)."""

    seat: int
    seq: int
    move: str
    hash: int
    clock_ms: int
    revealed: list[tuple[int, str]]
    progress: int
    status: Status
    down: int = -1  # face-down cards left on the seat's board (-1: not said; counts as some)
    # What the live ranking needs of the seat after this move, so every node ranks the
    # room from its events (``server.standings``) instead of reading the seats back from
    # the store for each move.
    progress_ms: int | None = None
    finish_ms: int | None = None
    bot_like: bool = False
    ranked: bool = False  # the move changed the ranking (progress, status or the mark)


class SeatStatus(_Event, tag="st"):
    """A seat's status changed without a move (resigned, abandoned)."""

    seat: int
    status: Status
    progress: int
    moves: int
    clock_ms: int


class TakenOver(_Event, tag="t"):
    """Seat ``seat`` is now held at ``epoch``: close any local holder with an older one."""

    seat: int
    epoch: int


class Finished(_Event, tag="f"):
    """The race is over; ``frame`` is the encoded Results message."""

    frame: bytes


class NewRound(_Event, tag="n"):
    """A rematch took the room back to its lobby for round ``round`` (a new deal): send
    every member ``Joined`` again, from the store (players whose seat was not kept
    leave the room)."""

    round: int


Event = (
    Broadcast | Countdown | Started | Moved | SeatStatus | TakenOver | Finished | NewRound
)

_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(Event)


def encode_event(event: Event) -> bytes:
    """The bytes to publish."""
    return _encoder.encode(event)


def decode_event(data: bytes) -> Event:
    """The event in ``data``; raises ``msgspec.DecodeError``/``ValidationError`` if bad."""
    event: Event = _decoder.decode(data)
    return event
