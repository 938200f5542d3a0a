"""The storage interface the server's room logic uses, and nothing more.

Two implementations: ``memory.MemoryStore`` (the default; one process) and
``redis.RedisStore`` (several nodes acting as one service). Every method is atomic on its
own: the room logic never needs a transaction spanning two calls. Any method may raise
``StoreUnavailable``; then nothing was changed (for ``append_move``: the move was not
stored, so it must not be acknowledged).

A board is (variant, options, seed) + its move log: the store keeps the log, and any node
rebuilds the board by replaying it through the engine -- from the seat's latest checkpoint
(its board every ``checkpoint_every`` moves), so a rebuild reads and replays the log's
tail, not the whole log (docs/SERVER.md, "Snapshots").
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, NamedTuple, Protocol

from .records import Checkpoint, LogColumns, LogEntry, RoomRecord, SeatRecord


class StoreError(Exception):
    """Base class of store failures the room logic handles."""


class StoreUnavailable(StoreError):
    """The backend cannot be reached; nothing was changed. Retryable."""


class StaleEpoch(StoreError):
    """The writer's epoch is not the seat's current one: the seat was taken over."""


class SeqConflict(StoreError):
    """The move's sequence is not one past the log's length; ``expected`` is."""

    def __init__(self, expected: int) -> None:
        super().__init__(f"expected sequence {expected}")
        self.expected = expected


EventHandler = Callable[[bytes], Awaitable[None] | None]

_log = logging.getLogger(__name__)


async def call_handler(handler: EventHandler, event: bytes, code: str = "?") -> None:
    """Run one event handler (sync or async) of room ``code``; its failure is logged and
    never stops the store's delivery of the next event."""
    try:
        result = handler(event)
        if inspect.isawaitable(result):
            await result
    except Exception:
        _log.exception("room %s: event handler %r failed", code, handler)


class Durability(NamedTuple):
    """Whether the store keeps an acknowledged write across its own restart: ``durable``
    is False when it may not (Redis without AOF or replicas), None when it could not be
    read (CONFIG disabled by a managed service); ``detail`` says what was found."""

    durable: bool | None
    detail: str


class Deadline(NamedTuple):
    """A claimed deadline: room ``code``'s ``kind`` fell due at ``at_ms``; the claim
    holds until ``lease_ms`` (pass it to ``done_deadline``)."""

    code: str
    kind: str
    at_ms: int
    lease_ms: int


Cursor = tuple[int, str]  # (created_ms, code) of the last room of a page
Listed = tuple[RoomRecord, list[SeatRecord]]  # a listed room and its seats


class Store(Protocol):
    """Rooms, seats, move logs and results, plus a per-room event bus."""

    # -- rooms
    async def create_room(self, room: RoomRecord) -> bool:
        """Store a new room; False (and nothing changed) if the code is taken."""

    async def get_room(self, code: str) -> RoomRecord | None:
        """The room, or None if there is none (or it expired)."""

    async def list_rooms(self) -> list[RoomRecord]:
        """Rooms not finished (public or not: the caller filters). O(rooms): for tests
        and tools; ``list`` uses ``list_public``."""

    async def list_public(self, before: Cursor | None,
                          limit: int) -> tuple[list[Listed], Cursor | None]:
        """Public rooms not finished, newest first (by ``(created_ms, code)``), strictly
        older than ``before``, at most ``limit``, each with its seats; and the cursor of
        the next page (None: no more). O(limit) work and a fixed number of store round
        trips, whatever the number of rooms (rooms that finished or expired are dropped
        from the index on the way; a page that met some may be short)."""

    async def unlist_room(self, code: str) -> None:
        """Drop the room from the indexes behind ``list_rooms``/``list_public`` (its
        lobby expired; a finished room is dropped by ``set_phase``)."""

    async def set_phase(self, code: str, expect: str, phase: str, **fields: Any) -> bool:
        """Compare-and-set: if the room's phase is ``expect``, set it to ``phase`` and set
        ``fields`` (RoomRecord attributes) too, and return True; else change nothing and
        return False. This is how nodes agree on start and finish."""

    async def expire_room(self, code: str, ttl_s: int) -> None:
        """Let the room, its seats, logs and results disappear after ``ttl_s`` seconds."""

    async def new_round(self, code: str, keep: list[int], **fields: Any) -> bool:
        """A rematch, in one atomic step: if the room is ``finished``, set it to ``lobby``
        with ``fields`` (the new seed, salt, commitment, round, ...), forget its results
        and every move log, remove the seats not in ``keep`` and reset the kept ones
        (not ready, status ``lobby``, no progress, moves or times; epoch and token kept).
        True if this call did it; False (nothing changed) otherwise."""

    # -- seats
    async def add_seat(self, code: str, seat: SeatRecord, max_players: int) -> int | None:
        """Give ``seat`` the next free seat number (1..max_players) while the room is in
        the lobby; returns that number, or None if the room is full or not in the lobby."""

    async def remove_seat(self, code: str, seat: int, epoch: int) -> bool:
        """Free the seat (a later ``add_seat`` may reuse its number) if the room is in
        the lobby and the seat is at ``epoch``; True if it did, else nothing changed."""

    async def get_seats(self, code: str) -> list[SeatRecord]:
        """Every seat of the room, by seat number."""

    async def get_seat(self, code: str, seat: int) -> SeatRecord | None:
        """One seat, or None."""

    async def update_seat(self, code: str, seat: int, **fields: Any) -> None:
        """Set some SeatRecord attributes (not ``epoch``: see ``take_seat``)."""

    async def take_seat(self, code: str, seat: int) -> int:
        """Increment the seat's epoch and return the new value: the caller is now the
        seat's only writer; any older holder's appends fail with ``StaleEpoch``."""

    # -- move logs
    async def append_move(
        self, code: str, seat: int, epoch: int, seq: int, entry: LogEntry, *,
        event: bytes | None = None, **seat_fields: Any,
    ) -> None:
        """Append ``entry`` as move ``seq`` (1-based) of the seat's log, set
        ``seat_fields`` (progress, moves, status, ...) and, with ``event``, publish it to
        the room (numbered and kept in the room's history, as ``publish`` does) — all
        in the same atomic step and one store round trip (docs/SERVER.md "One move"). The
        event goes out if and only if this call stored the move, after every event the
        room had before it; subscribers get it after the move is stored, possibly before
        this call returns (another node) but on this node's memory store only after.
        Raises ``StaleEpoch`` if ``epoch`` is not current, ``SeqConflict`` if ``seq`` is
        not log length + 1 (nothing changed, nothing published). Returning means the move
        is durably stored: acknowledge it."""

    async def read_log(self, code: str, seat: int, after: int = 0,
                       limit: int | None = None) -> list[LogEntry]:
        """The seat's log entries after the first ``after`` ones, in order; at most
        ``limit`` of them (None: all)."""

    async def read_logs(self, code: str, seats: Sequence[int],
                        slice_entries: int) -> dict[int, LogColumns]:
        """Each of ``seats``' whole log as columns (a seat with no log: empty ones), for
        the results (docs/SERVER.md, "Results"). One store round trip for all the seats,
        whatever the logs' length; the entries are decoded ``slice_entries`` at a time
        with the event loop free between slices, so a long log never stalls it for more
        than one slice. The logs read are as they were when the call began: call it once
        the seats are fenced (``take_seat``), when no append can change them."""

    # -- checkpoints (docs/SERVER.md, "Snapshots")
    async def put_checkpoint(self, code: str, seat: int, checkpoint: Checkpoint) -> None:
        """Keep ``checkpoint`` (the seat's board after ``checkpoint.seq`` moves), replacing
        one at the same ``seq``. Kept as long as the seat's log: it goes with the room's
        TTL, ``new_round`` and ``remove_seat``. Not atomic with ``append_move``: a missing
        checkpoint only makes a rebuild start from an earlier one."""

    async def get_checkpoint(self, code: str, seat: int, max_seq: int | None = None,
                             max_clock_ms: int | None = None) -> Checkpoint | None:
        """The seat's latest checkpoint with ``seq <= max_seq`` and ``clock_ms <=
        max_clock_ms`` (None: no bound), or None. One round trip whatever the log's
        length. Its ``round`` may be an older round's (the caller checks)."""

    async def checkpoint_and_tail(
        self, code: str, seat: int, limit: int, max_seq: int | None = None,
        max_clock_ms: int | None = None,
    ) -> tuple[Checkpoint | None, list[LogEntry]]:
        """``get_checkpoint(code, seat, max_seq, max_clock_ms)`` and the first ``limit``
        log entries after it (after its ``seq``; from the log's start when there is
        none): a rebuild's first two reads in one round trip, atomically. The
        checkpoint's ``round`` may be an older round's: the caller checks, and then does
        not use the entries (they follow that checkpoint)."""

    # -- results
    async def put_results(self, code: str, results: bytes) -> bytes:
        """Keep the encoded results message for as long as the room exists, unless the
        room has results already; returns the results now stored (the first ones win,
        so every node that builds them publishes the same bytes)."""

    async def get_results(self, code: str) -> bytes | None:
        """The encoded results, or None."""

    # -- deadlines (node-wide: every node sweeps them; see docs/SERVER.md)
    async def set_deadline(self, code: str, kind: str, at_ms: int) -> None:
        """Room ``code``'s deadline ``kind`` falls due at ``at_ms`` (wall ms), replacing
        an earlier one of the same kind."""

    async def clear_deadline(self, code: str, kind: str) -> None:
        """Remove room ``code``'s deadline ``kind`` (if any)."""

    async def claim_deadlines(self, now_ms: int, lease_ms: int, limit: int) -> list[Deadline]:
        """Atomically take up to ``limit`` deadlines due at ``now_ms`` (earliest first)
        and push each to ``now_ms + lease_ms``: if the claimer dies before
        ``done_deadline``, the deadline falls due again when the lease ends."""

    async def done_deadline(self, deadline: Deadline) -> None:
        """Remove a claimed deadline, unless it was set again since the claim."""

    # -- events
    async def publish(self, code: str, event: bytes) -> None:
        """Send ``event`` to every subscriber of the room, on every node."""

    async def subscribe(self, code: str, handler: EventHandler) -> None:
        """Call ``handler(event)`` for every event published to the room from now on."""

    async def unsubscribe(self, code: str, handler: EventHandler) -> None:
        """Stop calling ``handler`` for the room's events."""

    # Optional, read with getattr (as ``completes_inline``): ``after_events(callback) ->
    # bool``. A store that delivers several events in one loop callback calls
    # ``callback`` once at the end of that batch and returns True; False means no batch
    # is being delivered in place (``MemoryStore.after_events``). Rooms use it to write
    # the rivals' frames of a batch of moves once, not once per move.

    # -- life cycle
    async def durability(self) -> Durability:
        """What the backend does with acknowledged writes when it restarts (read at the
        node's start: ``Server.start`` refuses a volatile store unless told otherwise)."""

    async def healthy(self) -> bool:
        """True when the backend answers now."""

    async def close(self) -> None:
        """Release connections and tasks."""
