"""``list`` flood: many open public rooms (made in the setup by a room flood), then
several clients ask for the room list as fast as the rate limit lets them.

Reports the setup (rooms made, how long), each ``list``'s latency (p50/p99) and size,
and its errors (on Redis a big list may exhaust the store's connection pool).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections import Counter
from typing import Any

from bench.attack.harness import Client, Ctx, source_addr
from bench.attack.room_flood import RATE_WAIT_S, create_rooms
from protocol import messages as m

ROUNDS = True  # the runner may alternate quiet and attack phases (--rounds)


def add_args(group: argparse._ArgumentGroup) -> None:
    """This attack's options."""
    group.add_argument("--list-rooms", type=int, default=2000,
                       help="open rooms made before the quiet phase")
    group.add_argument("--listers", type=int, default=4, help="clients sending list")
    group.add_argument("--setup-timeout", type=float, default=600.0,
                       help="most seconds the setup may take")


async def setup(ctx: Ctx) -> dict[str, Any]:
    """Make ``--list-rooms`` rooms (64 connections from 127.0.0.3)."""
    made = await create_rooms(ctx.url, ctx.args.list_rooms, ctx.args.setup_timeout, 64,
                              source_addr(1))
    return {"rooms": made["rooms_created"], "errors": made["errors"]}


async def attack(ctx: Ctx, seconds: float) -> dict[str, Any]:
    """``--listers`` clients (each from its own address) list until ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    times: list[float] = []
    sizes: list[int] = []
    errors: Counter[str] = Counter()

    async def lister(i: int) -> None:
        client = await Client.open(ctx.url, f"lister{i}", source=source_addr(10 + i))
        while time.monotonic() < deadline:
            t0 = time.perf_counter()
            await client.send(m.ListRooms())
            try:
                reply = await client.expect(m.RoomList | m.Error,
                                            wait=max(1.0, deadline - time.monotonic() + 30))
            except Exception as exc:
                errors[type(exc).__name__] += 1
                break
            if isinstance(reply, m.Error):
                errors[reply.code] += 1
                if reply.code == "rate_limited":
                    await asyncio.sleep(RATE_WAIT_S)
                continue
            times.append(time.perf_counter() - t0)
            sizes.append(len(reply.rooms))
        await client.close()

    await asyncio.gather(*(lister(i) for i in range(ctx.args.listers)))
    s = sorted(times)
    return {"listers": ctx.args.listers, "lists": len(s),
            "list_p50_ms": round(statistics.median(s) * 1000, 1) if s else None,
            "list_p99_ms": round(s[min(len(s) - 1, round(len(s) * 0.99) - 1)] * 1000, 1)
            if s else None,
            "rooms_per_list": max(sizes) if sizes else None, "errors": dict(errors)}
