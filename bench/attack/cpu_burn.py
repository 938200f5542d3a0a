"""Control, not an attack: the kit burns ``--burn-pct`` percent of one core and sends
the server nothing. The attacks' load generators run on the same machine as the server
(here: 2 cores, shared with other work); this run shows what that CPU alone does to the
honest player's acks, to set beside an attack whose kit used as much CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from bench.attack.harness import Ctx

ROUNDS = True  # the runner may alternate quiet and attack phases (--rounds)

SLICE_S = 0.01  # busy for pct of each slice, asleep for the rest


def add_args(group: argparse._ArgumentGroup) -> None:
    """This control's options."""
    group.add_argument("--burn-pct", type=float, default=50.0,
                       help="percent of one core to burn (0-100)")


async def attack(ctx: Ctx, seconds: float) -> dict[str, Any]:
    """Burn the CPU for ``seconds``; the share of a core actually used."""
    share = min(100.0, max(0.0, ctx.args.burn_pct)) / 100
    t0, cpu0 = time.monotonic(), time.process_time()
    while (now := time.monotonic()) < t0 + seconds:
        while time.monotonic() - now < SLICE_S * share:
            pass  # the point of this control: CPU used on this machine, no traffic
        await asyncio.sleep(SLICE_S * (1 - share))
    used = (time.process_time() - cpu0) / (time.monotonic() - t0)
    return {"burned_pct_of_a_core": round(100 * used, 1)}
