"""Whether a move's caller resumes before the node handles the move's own event, on a
private Redis: the node (one ``RedisStore``) subscribes to a room and appends 2,000
moves, each with an event, one at a time with 0.5 ms between them (a player's turn-around:
the handler has time to run). A caller that resumes after the handler ran had its ack
queued behind the event's handling (docs/BENCHMARKS.md, "Redis: the node's own
connections for appends and events").

    .venv/bin/python -m bench.ack_order
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.servers import Redis
from server.store import LogEntry
from server.store.redis import RedisStore
from tests.store.test_contract import room_with_seats

MOVES = 2000
TURN_S = 0.0005  # the player's time between an ack and its next move


async def main() -> None:
    """Append, count the events handled before their caller resumed, print the count."""
    with Redis() as redis:
        store = RedisStore.from_url(redis.url)
        try:
            code = await room_with_seats(store)
            handled: dict[int, float] = {}
            await store.subscribe(code, lambda e: handled.setdefault(int(e), time.perf_counter()))
            resumed: dict[int, float] = {}
            for seq in range(1, MOVES + 1):
                await store.append_move(code, 1, 1, seq, LogEntry("1>f", seq),
                                        event=str(seq).encode(), moves=seq)
                resumed[seq] = time.perf_counter()
                await asyncio.sleep(TURN_S)  # the player's turn-around, not synchronisation
            await asyncio.sleep(0.1)  # the last events' handling
        finally:
            await store.close()
    first = sum(1 for s, t in resumed.items() if s in handled and handled[s] < t)
    print(f"events handled before their caller resumed: {first} of {MOVES}")


if __name__ == "__main__":
    try:
        import uvloop
    except ImportError:
        asyncio.run(main())
    else:
        uvloop.run(main())
