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

ROUNDS = True  # the runner may alternate quiet and attack phases (--rounds)
# The flood's achieved rate, reported per round (a layout that starved the generator
# would show here): creations tried, rooms made, handshakes refused (429/503), a second
ACHIEVED = ("tries_per_s", "rooms_per_s", "refused_per_s", "redis_commands_per_s")

RATE_WAIT_S = 0.5  # after rate_limited: the default refill is 10 credits/s, a create costs 5
REDIS_SAMPLE_S = 5.0  # Redis used_memory is sampled this often during the flood


def add_args(group: argparse._ArgumentGroup) -> None:
    """This attack's options."""
    group.add_argument("--flood-conns", type=int, default=50,
                       help="connections creating rooms in parallel")
    group.add_argument("--flood-rooms", type=int, default=1_000_000,
                       help="most rooms to create (the duration bounds it too)")
    group.add_argument("--flood-sources", type=int, default=1,
                       help="client addresses the connections come from (127.0.0.2, …)")


async def create_rooms(url: str, target: int, seconds: float, conns: int,
                       source: str | list[str]) -> dict[str, Any]:
    """Create up to ``target`` public lobby rooms within ``seconds`` on ``conns``
    connections from ``source`` (or spread over a list of addresses); counts of rooms
    and of errors by code."""
    sources = [source] if isinstance(source, str) else source
    deadline = time.monotonic() + seconds
    created = 0
    errors: Counter[str] = Counter()
    codes: list[str] = []

    async def worker(source: str) -> None:
        nonlocal created
        client: Client | None = None
        while time.monotonic() < deadline and created < target:
            try:
                if client is None:
                    # no patience: the flood counts its refusals and comes straight back
                    client = await Client.open(url, "flood", source=source, patience_s=0)
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
    await asyncio.gather(*(worker(sources[i % len(sources)]) for i in range(conns)))
    elapsed = time.monotonic() - t0
    # the achieved rate of the flood: every creation tried (a refused handshake, an
    # error reply and a room made each count one), per second of the flood
    tried = created + sum(errors.values())
    return {"rooms_created": created, "rooms_per_s": round(created / elapsed, 1),
            "tries_per_s": round(tried / elapsed, 1),
            # a refused handshake (HTTP 429 or 503) is websockets' InvalidStatus
            "refused_per_s": round(errors["InvalidStatus"] / elapsed, 1),
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
    """Flood from 127.0.0.2 (… ``--flood-sources`` addresses) for ``seconds``, then time
    one ``list``; on Redis, its ``used_memory`` every REDIS_SAMPLE_S meanwhile."""
    curve: list[float] = []

    async def sample() -> None:
        while ctx.redis is not None:
            used = await asyncio.to_thread(ctx.redis.used_memory)
            curve.append(round(used / 2**20, 2))
            await asyncio.sleep(REDIS_SAMPLE_S)  # sampling period, not synchronisation

    sampler = asyncio.create_task(sample())
    sources = [source_addr(i) for i in range(max(1, ctx.args.flood_sources))]
    # Redis's own count of commands over the flood: a round of refusals only (the
    # addresses past their caps) should cost it no more than the honest moves do
    commands = await asyncio.to_thread(ctx.redis.commands) if ctx.redis else None
    t0 = time.monotonic()
    try:
        result = await create_rooms(ctx.url, ctx.args.flood_rooms, seconds,
                                    ctx.args.flood_conns, sources)
    finally:
        sampler.cancel()
    if ctx.redis is not None and commands is not None:
        done = await asyncio.to_thread(ctx.redis.commands)
        result["redis_commands_per_s"] = round((done - commands) / (time.monotonic() - t0), 1)
    result.pop("codes")
    result.update(await time_list(ctx.url))
    if ctx.redis is not None:
        result["redis_used_mb_curve"] = curve
    return result
