"""What a refused connection costs the server: one address holds its cap of open
connections, then makes ``--refusals`` handshakes one after another (each answered
before the next starts, so the server is never behind), all refused; the server's CPU
over them divided by their number.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from typing import Any

from bench.attack.harness import Ctx, source_addr
from bench.attack.rawws import RawWs

ROUNDS = True  # the runner may alternate quiet and attack phases (--rounds)


def add_args(group: argparse._ArgumentGroup) -> None:
    """This attack's options."""
    group.add_argument("--refusals", type=int, default=5000,
                       help="refused handshakes to time (the duration bounds them too)")


async def attack(ctx: Ctx, seconds: float) -> dict[str, Any]:
    """Fill the address's connection cap, then knock ``--refusals`` times."""
    source = source_addr(3)
    held: list[RawWs] = []
    statuses: Counter[int] = Counter()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:  # up to the cap (HTTP 429 from then on)
        ws = await RawWs.open("127.0.0.1", ctx.server.port, source=source)
        if ws.status != 101:
            ws.close()
            break
        held.append(ws)
    cpu0, t0, tried = ctx.server.cpu_s(), time.monotonic(), 0
    while tried < ctx.args.refusals and time.monotonic() < deadline:
        ws = await RawWs.open("127.0.0.1", ctx.server.port, source=source)
        statuses[ws.status] += 1
        ws.close()
        tried += 1
    cpu = ctx.server.cpu_s() - cpu0
    elapsed = time.monotonic() - t0
    for ws in held:
        ws.close()
    refused = sum(n for status, n in statuses.items() if status != 101)
    return {"held": len(held), "statuses": {str(k): v for k, v in statuses.items()},
            "refusals_per_s": round(tried / elapsed) if elapsed else None,
            "server_cpu_us_per_refusal": round(cpu / refused * 1e6) if refused else None}
