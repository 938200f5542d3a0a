"""Storage: one small interface (``base.Store``), an in-memory implementation (the
default) and a Redis one (several nodes as one service)."""

from __future__ import annotations

from .base import Deadline, Durability, SeqConflict, StaleEpoch, Store, StoreError, StoreUnavailable
from .records import Checkpoint, LogColumns, LogEntry, RoomRecord, SeatRecord


def open_store(url: str | None, wait_replicas: int = 0) -> Store:
    """The store for ``url``: ``None`` or ``""`` → in-memory; ``redis://…``/``rediss://…``
    → Redis (standalone or, with ``?cluster=1``, Redis Cluster). ``wait_replicas``: see
    ``RedisStore.from_url``."""
    if not url:
        from .memory import MemoryStore

        return MemoryStore()
    if url.startswith(("redis://", "rediss://", "unix://")):
        from .redis import RedisStore

        return RedisStore.from_url(url, wait_replicas)
    raise ValueError(f"unsupported store URL {url!r}: use redis://host:port/db")


__all__ = [
    "Checkpoint",
    "Deadline",
    "Durability",
    "LogColumns",
    "LogEntry",
    "RoomRecord",
    "SeatRecord",
    "SeqConflict",
    "StaleEpoch",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "open_store",
]
