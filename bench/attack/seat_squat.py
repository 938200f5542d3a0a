"""Seat squatting: honest hosts open public two-seat lobbies; one client address joins
every public lobby it can list as a player and leaves at once.

Reports seats squatted, then whether an honest joiner can still take the free seat of
each host's room (``room_full`` means the squatter's seat was never freed).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import Counter
from typing import Any

from bench.attack.harness import Client, Ctx, gather_bounded, source_addr
from bench.attack.room_flood import RATE_WAIT_S
from protocol import messages as m

# A join costs 5 credits and a leave 1; at the default 10 credits/s this pace never hits
# the rate limit, so every squat is one join and one leave.
SQUAT_PACE_S = 0.65


def add_args(group: argparse._ArgumentGroup) -> None:
    """This attack's options."""
    group.add_argument("--hosts", type=int, default=20, help="honest hosts, one lobby each")


async def setup(ctx: Ctx) -> dict[str, Any]:
    """Each host (its own connection, from 127.0.0.1) opens a public 2-seat lobby."""
    hosts = [await Client.open(ctx.url, f"host{i}") for i in range(ctx.args.hosts)]
    for host in hosts:
        await host.create(variant="brisbane", max_players=2)
    ctx.counters["_hosts"] = hosts
    return {"lobbies": len(hosts)}


async def attack(ctx: Ctx, seconds: float) -> dict[str, Any]:
    """Squat from 127.0.0.2 until every listed lobby was tried or ``seconds`` pass; then
    an honest joiner from 127.0.0.4 tries every host's room."""
    hosts: list[Client] = ctx.counters.pop("_hosts")
    deadline = time.monotonic() + seconds
    squatted: set[str] = set()
    errors: Counter[str] = Counter()
    squatter = await Client.open(ctx.url, "squatter", source=source_addr(0))
    await squatter.send(m.ListRooms())
    listed = await squatter.expect(m.RoomList)
    for room in listed.rooms:
        if time.monotonic() > deadline:
            break
        if room.phase != "lobby" or room.players >= room.max_players:
            continue
        for _ in range(20):  # bounded retries while rate limited
            await squatter.send(m.Join(code=room.code))
            reply = await squatter.expect(m.Joined | m.Error)
            if not (isinstance(reply, m.Error)
                    and reply.code in ("rate_limited", "already_in_room")):
                break
            if reply.code == "already_in_room":  # the last leave was rate limited
                await squatter.send(m.Leave())
            await asyncio.sleep(RATE_WAIT_S)
        if isinstance(reply, m.Error):
            errors[reply.code] += 1
            if reply.code == "too_many_rooms":
                await squatter.close()
                squatter = await Client.open(ctx.url, "squatter", source=source_addr(0))
            continue
        squatted.add(room.code)
        await squatter.send(m.Leave())
        await asyncio.sleep(SQUAT_PACE_S)
    await squatter.close()

    async def honest_join(code: str) -> str:
        joiner = await Client.open(ctx.url, "latecomer", source=source_addr(2))
        await joiner.send(m.Join(code=code))
        reply = await joiner.expect(m.Joined | m.Error)
        await joiner.close()
        return "joined" if isinstance(reply, m.Joined) else reply.code

    outcomes = await gather_bounded([honest_join(h.code) for h in hosts], 8)
    for host in hosts:
        await host.close()
    tally = Counter(o if isinstance(o, str) else type(o).__name__ for o in outcomes)
    return {"lobbies": len(hosts), "squatted": len(squatted), "squat_errors": dict(errors),
            "honest_joins": dict(tally), "honest_room_full": tally.get("room_full", 0)}
