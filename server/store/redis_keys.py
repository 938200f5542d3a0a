"""The Redis store's key names and how its records are written into and read from Redis
hashes: one room's keys (``RoomKeys``: every key of a room shares the hash tag
``{code}``, so a room lives on one Cluster shard), the hash fields of rooms and seats,
and what an ``APPEND_MOVE`` reply means. Pure: no I/O, no client."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import msgspec

from protocol.limits import MAX_SEATS

from .base import SeqConflict, StaleEpoch, StoreError
from .records import RoomRecord, SeatRecord

_encode = msgspec.msgpack.encode
_decode = msgspec.msgpack.decode

ROOM_FIELDS = frozenset(RoomRecord.__struct_fields__)
SEAT_FIELDS = tuple(f for f in SeatRecord.__struct_fields__ if f not in ("seat", "epoch"))
SEAT_FIELD_SET = frozenset(SEAT_FIELDS)


def tag(code: str) -> str:
    """``code`` as it appears inside the braces of a key's hash tag: one-to-one."""
    # Braces would change the hash tag; escape them (and %) so keys stay one-to-one.
    return code.replace("%", "%25").replace("{", "%7B").replace("}", "%7D")


class RoomKeys:
    """The key names of one room."""

    def __init__(self, code: str) -> None:
        prefix = f"solrace:{{{tag(code)}}}:"
        self.room = prefix + "room"
        self.seats = prefix + "seats"
        self.results = prefix + "results"
        self.events = prefix + "events"
        self.event_counter = prefix + "evseq"
        self.event_history = prefix + "evlog"
        self.prefix = prefix

    def log(self, seat: int) -> str:
        return f"{self.prefix}log:{seat}"

    def checkpoints(self, seat: int) -> list[str]:
        return [f"{self.prefix}cp:{seat}", f"{self.prefix}cpt:{seat}"]

    def seat_keys(self) -> list[str]:
        """Every per-seat key of the room (logs and checkpoints), for scripts that
        expire or delete them all."""
        out: list[str] = []
        for n in range(1, MAX_SEATS + 1):
            out += [self.log(n), *self.checkpoints(n)]
        return out


def as_text(value: Any) -> str:
    """A Redis reply value (bytes or not) as text."""
    return value.decode() if isinstance(value, bytes) else str(value)


def deadline_member(code: str, kind: str) -> str:
    """The member naming the deadline ``kind`` of room ``code`` in the deadlines set."""
    # kinds never contain "|"; codes may (awkward codes are allowed): split on the last
    return f"{code}|{kind}"


def check_fields(fields: dict[str, Any], allowed: frozenset[str] | tuple[str, ...]) -> None:
    """TypeError naming every field of ``fields`` not in ``allowed``; else nothing."""
    unknown = sorted(set(fields) - set(allowed))
    if unknown:
        raise TypeError(f"not a settable field: {', '.join(unknown)}")


def room_from_hash(data: dict[bytes, bytes]) -> RoomRecord:
    """The room a room hash holds (fields starting with ``_`` are bookkeeping: skipped)."""
    values = {k.decode(): _decode(v) for k, v in data.items() if not k.startswith(b"_")}
    return msgspec.convert(values, RoomRecord)


def seats_from_hash(data: dict[bytes, bytes]) -> list[SeatRecord]:
    """Every seat in a room's seats hash (fields ``"<seat>:<name>"``), by seat number."""
    grouped: dict[int, dict[str, bytes]] = defaultdict(dict)
    for key, value in data.items():
        seat, _, name = key.decode().partition(":")
        grouped[int(seat)][name] = value
    seats = []
    for number in sorted(grouped):
        values = grouped[number]
        epoch = values.pop("epoch")
        values = {k: v for k, v in values.items() if not k.startswith("_")}
        seats.append(seat_from_fields(number, epoch, values))
    return seats


def seat_from_fields(seat: int, epoch: bytes, values: dict[str, bytes]) -> SeatRecord:
    """One seat from its encoded hash fields (names without the ``<seat>:`` prefix)."""
    decoded: dict[str, Any] = {k: _decode(v) for k, v in values.items()}
    return msgspec.convert({**decoded, "seat": seat, "epoch": int(epoch)}, SeatRecord)


def seat_field_pairs(fields: dict[str, Any], seat: int | None) -> list[Any]:
    """``fields`` as flat (name, encoded value) pairs for HSET, names prefixed with
    ``<seat>:`` unless ``seat`` is None."""
    prefix = f"{seat}:" if seat is not None else ""
    pairs: list[Any] = []
    for name, value in fields.items():
        pairs += [prefix + name, _encode(value)]
    return pairs


def append_failed(reply: Any, code: str, seat: int, epoch: int) -> StoreError | None:
    """The error APPEND_MOVE's reply ``[status, value]`` stands for, or None (stored)."""
    status, value = reply
    if status == -1:
        return StaleEpoch(f"seat {seat} of room {code} is at epoch {value}, not {epoch}")
    if status == -2:
        return SeqConflict(int(value))
    return None


class AppendAnswer:
    """``append_move_later``'s callback for the group commit: the call's reply (or its
    ``StoreUnavailable``) made into what ``append_move`` would raise, given to ``done``
    (None: stored)."""

    __slots__ = ("code", "done", "epoch", "seat")

    def __init__(self, done: Callable[[Exception | None], None], code: str, seat: int,
                 epoch: int) -> None:
        self.done, self.code, self.seat, self.epoch = done, code, seat, epoch

    def __call__(self, outcome: Any) -> None:
        failed: Exception | None
        if isinstance(outcome, Exception):
            failed = outcome  # the group commit's StoreUnavailable
        else:
            try:
                failed = append_failed(outcome, self.code, self.seat, self.epoch)
            except Exception as exc:  # not APPEND_MOVE's reply shape: append_move raises too
                failed = exc
        self.done(failed)
