"""Room-creation flood: one client address creates public lobby rooms as fast as the
rate limit lets it, on many connections (create, leave, again; a new connection when one
reaches its room allowance), and never comes back to them.

Reports rooms created per second, the error codes met, what one ``list`` costs after
the flood, and (``--store redis``) how much Redis grew; with ``--redis-maxmemory`` it
shows what happens to honest moves once Redis is full.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import Counter
from typing import Any

from bench.attack.harness import Client, Ctx, source_addr
from protocol import messages as m

RATE_WAIT_S = 0.5  # after rate_limited: the default refill is 10 credits/s, a create costs 5


def add_args(group: argparse._ArgumentGroup) -> None:
    """This attack's options."""
    group.add_argument("--flood-conns", type=int, default=50,
                       help="connections creating rooms in parallel")
    group.add_argument("--flood-rooms", type=int, default=1_000_000,
                       help="most rooms to create (the duration bounds it too)")


async def create_rooms(url: str, target: int, seconds: float, conns: int,
                       source: str) -> dict[str, Any]:
    """Create up to ``target`` public lobby rooms within ``seconds`` on ``conns``
    connections from ``source``; counts of rooms and of errors by code."""
    deadline = time.monotonic() + seconds
    created = 0
    errors: Counter[str] = Counter()
    codes: list[str] = []

    async def worker() -> None:
        nonlocal created
        client: Client | None = None
        while time.monotonic() < deadline and created < target:
            try:
                if client is None:
                    client = await Client.open(url, "flood", source=source)
                await client.send(m.CreateRoom(settings=m.RoomSettings(
                    variant="brisbane", countdown_s=0)))
                reply = await client.expect(m.Joined | m.Error,
                                            wait=max(0.1, deadline - time.monotonic() + 5))
            except Exception as exc:
                errors[type(exc).__name__] += 1
                if client is not None:
                    await client.close()
                client = None
                continue
            if isinstance(reply, m.Joined):
                created += 1
                if len(codes) < 100_000:
                    codes.append(reply.code)
                await client.send(m.Leave())
                continue
            errors[reply.code] += 1
            if reply.code == "rate_limited":
                await asyncio.sleep(RATE_WAIT_S)
            elif reply.code == "already_in_room":  # our leave was rate limited: again
                await client.send(m.Leave())
                await asyncio.sleep(RATE_WAIT_S)
            else:  # too_many_rooms (or worse): a fresh connection
                await client.close()
                client = None
        if client is not None:
            await client.close()

    t0 = time.monotonic()
    await asyncio.gather(*(worker() for _ in range(conns)))
    elapsed = time.monotonic() - t0
    return {"rooms_created": created, "rooms_per_s": round(created / elapsed, 1),
            "errors": dict(errors), "codes": codes}


async def time_list(url: str) -> dict[str, Any]:
    """One ``list`` from a fresh connection: its latency and how many rooms it returned."""
    client = await Client.open(url, "lister")
    t0 = time.perf_counter()
    await client.send(m.ListRooms())
    try:
        reply = await client.expect(m.RoomList, wait=60)
        result: dict[str, Any] = {"list_ms": round((time.perf_counter() - t0) * 1000, 1),
                                  "list_rooms": len(reply.rooms)}
    except (RuntimeError, TimeoutError) as exc:
        result = {"list_ms": None, "list_error": str(exc)[:200]}
    await client.close()
    return result


async def attack(ctx: Ctx, seconds: float) -> dict[str, Any]:
    """Flood from 127.0.0.2 for ``seconds``, then time one ``list``."""
    result = await create_rooms(ctx.url, ctx.args.flood_rooms, seconds, ctx.args.flood_conns,
                                source_addr(0))
    result.pop("codes")
    result.update(await time_list(ctx.url))
    return result
