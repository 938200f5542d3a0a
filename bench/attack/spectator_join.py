"""Spectator join into a long room: a fast bot builds a race with many logged moves (in
the setup, on a server whose rate limit allows it), then spectators join that room again
and again while the honest player races.

Reports the moves in the room, each join's time (join → ``joined``), and the honest
player's ack latency, which shows how long each join stalls the server's event loop.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from bench.attack.harness import Client, Ctx, play_cycle, racing_player, source_addr

# A bot that builds a long room needs far more than 10 messages/s; the honest player
# keeps its human pace regardless. The joiners reconnect for every join (a connection's
# rooms are capped): the per-address handshake cap is lifted so that what is measured is
# the join itself (an attacker has many addresses; conn-flood measures the caps).
SERVER_ARGS = ["--rate", "1000000", "--burst", "1000000",
               "--connects-per-minute", "1000000", "--per-address-connections", "1000000"]


def add_args(group: argparse._ArgumentGroup) -> None:
    """This attack's options."""
    group.add_argument("--long-moves", type=int, default=50_000,
                       help="moves the bot logs in the long room")
    group.add_argument("--joiners", type=int, default=3, help="spectators joining in a loop")
    group.add_argument("--join-delay", type=int, default=0,
                       help="the long room's spectator delay, seconds (a delayed join "
                            "also rebuilds each board as of the delayed clock)")


async def setup(ctx: Ctx) -> dict[str, Any]:
    """Build the long room; it stays running (the bot keeps its seat)."""
    bot, cycle = await racing_player(ctx.url, name="builder", bot=True, spectators=True,
                                     spectator_delay_s=ctx.args.join_delay,
                                     source=source_addr(0))
    t0 = time.monotonic()
    played = await play_cycle(bot, cycle, ctx.args.long_moves, 1800)
    ctx.counters["_bot"] = bot
    return {"moves": played, "moves_per_s": round(played / (time.monotonic() - t0))}


async def attack(ctx: Ctx, seconds: float) -> dict[str, Any]:
    """Join as spectators (and leave) in a loop until ``seconds`` pass."""
    bot: Client = ctx.counters.pop("_bot")
    deadline = time.monotonic() + seconds
    times: list[float] = []
    failures = 0

    async def joiner(i: int) -> None:
        nonlocal failures
        client = await Client.open(ctx.url, f"s{i}", source=source_addr(20 + i))
        while time.monotonic() < deadline:
            t0 = time.perf_counter()
            try:
                await client.join(bot.code, role="spectator")
            except Exception:
                failures += 1
                await client.close()
                client = await Client.open(ctx.url, f"s{i}", source=source_addr(20 + i))
                continue
            times.append(time.perf_counter() - t0)
            await client.close()  # a fresh connection each time: rooms per connection are capped
            client = await Client.open(ctx.url, f"s{i}", source=source_addr(20 + i))
        await client.close()

    await asyncio.gather(*(joiner(i) for i in range(ctx.args.joiners)))
    await bot.close()
    s = sorted(times)
    return {"joiners": ctx.args.joiners, "joins": len(s), "failures": failures,
            "join_p50_ms": round(statistics.median(s) * 1000, 1) if s else None,
            "join_max_ms": round(s[-1] * 1000, 1) if s else None}
