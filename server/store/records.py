"""What the store keeps: rooms, seats, move-log entries. msgspec structs, so a Redis store
can keep them as compact MessagePack and the memory store as plain objects."""

from __future__ import annotations

from typing import NamedTuple

import msgspec

from protocol.messages import RoomPhase, SeatStatus


class RoomRecord(msgspec.Struct, kw_only=True):
    """A room. ``settings`` is ``protocol.messages.RoomSettings`` as builtins; ``seed`` and
    ``salt`` are secret until ``phase == "finished"``."""

    code: str
    settings: dict[str, object]
    seed: int
    salt: str
    commitment: str
    creator: int = 0  # seat number of the creator (0: a spectator created it)
    phase: RoomPhase = "lobby"
    created_ms: int = 0
    start_ms: int | None = None  # when the race clock starts (set with phase countdown)
    end_ms: int | None = None
    end_reason: str = ""
    winnable: bool | None = None
    par: int | None = None
    round: int = 1  # a rematch starts round 2, 3, ... in the same room (new seed)


class SeatRecord(msgspec.Struct, kw_only=True):
    """A seat. ``epoch`` fences writers: only the connection that holds the current epoch
    may append to the seat's log. ``token_hash`` is SHA-256 of the secret part of the
    resume token (the token itself is never stored)."""

    seat: int
    name: str
    bot: bool = False
    token_hash: str = ""
    epoch: int = 1
    ready: bool = False
    connected: bool = True
    status: SeatStatus = "lobby"
    progress: int = 0
    progress_ms: int | None = None  # race clock when ``progress`` was first reached
    moves: int = 0
    finish_ms: int | None = None
    bot_like: bool = False  # its move clocks were beyond human (protocol.ranking.bot_like)
    # The client address that took the seat (server/addresses.py): any node can hold a
    # hidden-information room to one seat per address. Never sent to clients.
    address: str = ""


# What a kept seat's record becomes at a rematch (``Store.new_round``).
NEW_ROUND_SEAT: dict[str, object] = {
    "ready": False, "status": "lobby", "progress": 0, "progress_ms": None, "moves": 0,
    "finish_ms": None, "bot_like": False,
}


class LogEntry(msgspec.Struct, array_like=True):
    """One accepted move: its notation and the race clock when it was accepted."""

    move: str
    clock_ms: int


class LogColumns(NamedTuple):
    """One seat's whole move log as two columns, the form the results carry it in
    (``protocol.messages.SeatLog``): ``moves[i]`` was accepted at race clock
    ``clocks[i]``."""

    moves: list[str]
    clocks: list[int]


class Checkpoint(msgspec.Struct, array_like=True):
    """A seat's board after ``seq`` moves, so that a board is rebuilt from it plus the
    log's tail instead of the whole log (docs/SERVER.md, "Snapshots").

    ``layout`` is the engine's full-information layout (``Game.to_layout()`` as
    MessagePack): it names face-down cards, so it stays in the store and never reaches a
    client. ``clock_ms`` is the race clock of move ``seq``; ``reached`` the (progress,
    race clock it was first reached) pairs so far (at most 53); ``round`` the room's
    round it belongs to (a late write from a round that ended is ignored by readers)."""

    seq: int
    clock_ms: int
    round: int
    layout: bytes
    reached: list[tuple[int, int]]
