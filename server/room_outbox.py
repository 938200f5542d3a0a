"""What this node publishes to one room's channel (``room.Room``'s outbox).

Events go out in the order they were produced, through one drain task per room, so the
caller (a move being acknowledged) never waits for the publish round trip. A publish the
store refuses is kept and retried, in order, with a backoff; the queue holds at most
``room_outbox`` events (config), the oldest dropped first when the store has been away
that long. The ``Moved`` events this node encoded itself are remembered with their bytes
(at most ``OWN_EVENTS_MAX``), so when the store hands the same bytes object back (the
memory store does) the room takes the event as it was built instead of decoding it."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable

from . import events as ev
from .store.base import Store, StoreUnavailable

log = logging.getLogger("server.room")

OUTBOX_BACKOFF_MIN_S = 0.05  # a refused publish is retried after this, doubling...
OUTBOX_BACKOFF_MAX_S = 1.0  # ...up to this, until the store answers
# Own Moved events kept for ``encode_own`` (a dict entry and the event's bytes each): the
# memory store hands them back at the end of the read that made them, so a read's moves
# (the guard's frames per read, 8 from the bench's pipelining players) fit with room to
# spare; beyond it an event is decoded, as a remote store's always are.
OWN_EVENTS_MAX = 64


class RoomOutbox:
    """One room's outgoing events on this node (see the module docstring)."""

    __slots__ = ("_closed", "_code", "_limit", "_own", "_publisher", "_queue", "_store")

    def __init__(self, store: Store, code: str, limit: int,
                 closed: Callable[[], bool]) -> None:
        self._store, self._code, self._limit = store, code, limit
        self._closed = closed  # the room's: a closed room publishes no more
        self._queue: deque[bytes] = deque()
        self._publisher: asyncio.Task[None] | None = None
        # Own Moved events by their bytes' id, oldest first (``encode_own``).
        self._own: dict[int, tuple[bytes, ev.Moved]] = {}

    def publish(self, event: ev.Event) -> None:
        """Queue ``event`` for the room's channel, after every event queued before it;
        the drain task is started if it is not running."""
        if len(self._queue) >= self._limit:
            self._queue.popleft()  # the store has been away for long: oldest goes first
            log.warning("room %s: outbox full; oldest event dropped", self._code)
        self._queue.append(ev.encode_event(event))
        if self._publisher is None or self._publisher.done():
            self._publisher = asyncio.get_running_loop().create_task(self._drain())

    async def flush(self) -> None:
        """Wait until every event queued so far has been handed to the store."""
        while self._publisher is not None and not self._publisher.done():
            await asyncio.shield(self._publisher)

    def encode_own(self, event: ev.Moved) -> bytes:
        """``event`` encoded for the store, remembered with its bytes for ``own_event``.
        One entry per event not handed back yet (a pipelining player's moves of one read
        come back together at the end of it), at most ``OWN_EVENTS_MAX``, the oldest
        forgotten first (a remote store's, or a move the store refused, never come
        back); holding the bytes keeps their identity (the key) unique."""
        data = ev.encode_event(event)
        own = self._own
        own[id(data)] = (data, event)
        if len(own) > OWN_EVENTS_MAX:
            del own[next(iter(own))]
        return data

    def own_event(self, data: bytes) -> ev.Moved | None:
        """The event ``encode_own`` made ``data`` from, if the store handed back that very
        bytes object (then forgotten), else None: the caller decodes ``data``."""
        own = self._own.pop(id(data), None)
        return own[1] if own is not None and own[0] is data else None

    async def _drain(self) -> None:
        backoff = OUTBOX_BACKOFF_MIN_S
        queue = self._queue
        while queue and not self._closed():
            data = queue[0]
            try:
                await self._store.publish(self._code, data)
            except StoreUnavailable as exc:
                # Kept and sent again, in order, when the store is back: a dropped
                # Started or Finished would leave players waiting for ever. Receivers
                # drop what they already have (a refused publish may have gone out).
                log.warning("room %s: publish failed (%s); retrying", self._code, exc)
                await asyncio.sleep(backoff)  # retry backoff, not synchronisation
                backoff = min(backoff * 2, OUTBOX_BACKOFF_MAX_S)
                continue
            except Exception:
                log.exception("room %s: publish failed; event dropped", self._code)
            if queue and queue[0] is data:  # (a full queue may have dropped it meanwhile:
                queue.popleft()             # then the next one is still to be sent)
            backoff = OUTBOX_BACKOFF_MIN_S
