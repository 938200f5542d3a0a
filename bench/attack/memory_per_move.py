"""Memory per move: a bot plays a long race (many moves in one room) and the server's
RSS growth is divided by the moves logged. ``--mem-delay S`` gives the room a spectator
delay (no spectator needs to watch for the delay buffer to exist).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from bench.attack.harness import Ctx, play_cycle, racing_player, source_addr

SERVER_ARGS = ["--rate", "1000000", "--burst", "1000000"]  # the bot plays far above 10/s


def add_args(group: argparse._ArgumentGroup) -> None:
    """This attack's options."""
    group.add_argument("--mem-moves", type=int, default=100_000, help="moves to log")
    group.add_argument("--mem-delay", type=int, default=0,
                       help="the room's spectator delay, seconds")


async def attack(ctx: Ctx, seconds: float) -> dict[str, Any]:
    """Log ``--mem-moves`` moves (at most ``max(seconds, 600)`` s); RSS growth per move."""
    bot, cycle = await racing_player(ctx.url, name="longrace", bot=True, spectators=True,
                                     spectator_delay_s=ctx.args.mem_delay,
                                     source=source_addr(0))
    before = ctx.server.rss_mb()
    t0 = time.monotonic()
    played = await play_cycle(bot, cycle, ctx.args.mem_moves, max(seconds, 600))
    elapsed = time.monotonic() - t0
    growth = ctx.server.rss_mb() - before
    await bot.close()
    return {"moves": played, "moves_per_s": round(played / elapsed),
            "spectator_delay_s": ctx.args.mem_delay, "rss_growth_mb": round(growth, 1),
            "bytes_per_move": round(growth * 2**20 / played) if played else None}
