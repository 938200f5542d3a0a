"""Connection flood: open many WebSocket sessions (hello sent, then idle) from one client
address or spread over many loopback addresses, and hold them.

``--conn-sources 1`` floods from 127.0.0.2 alone; ``--conn-sources K`` spreads the
connections over 127.0.0.2 … (K addresses). Reports how many the server accepted and
refused (HTTP status: 429 past an address's caps, 503 past the node's handshake budget,
``ServerConfig.handshakes_per_s``), and whether an honest newcomer from 127.0.0.1 still
gets in. A refused connection is not tried again.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import Counter
from typing import Any

from bench.attack.harness import Ctx, source_addr
from bench.attack.rawws import RawWs, hello_frame

ROUNDS = True  # the runner may alternate quiet and attack phases (--rounds)

OPEN_CONCURRENCY = 100  # handshakes in flight at once (the client's own bound)


def add_args(group: argparse._ArgumentGroup) -> None:
    """This attack's options."""
    group.add_argument("--conns", type=int, default=3000, help="connections to open")
    group.add_argument("--conn-sources", type=int, default=1,
                       help="client addresses to spread them over (1: one address)")


async def attack(ctx: Ctx, seconds: float) -> dict[str, Any]:
    """Open up to ``--conns`` connections within ``seconds``, hold them to the end."""
    deadline = time.monotonic() + seconds
    held: list[RawWs] = []
    statuses: Counter[str] = Counter()
    sem = asyncio.Semaphore(OPEN_CONCURRENCY)
    first_refused: list[int] = []

    async def one(i: int) -> None:
        async with sem:
            if time.monotonic() > deadline:
                statuses["not_tried"] += 1
                return
            try:
                ws = await RawWs.open("127.0.0.1", ctx.server.port,
                                      source=source_addr(i % ctx.args.conn_sources),
                                      wait=max(0.5, deadline - time.monotonic()))
            except (OSError, TimeoutError) as exc:
                statuses[type(exc).__name__] += 1
                return
            statuses[str(ws.status)] += 1
            if ws.status == 101:
                ws.send(hello_frame(f"c{i}"))
                held.append(ws)
            else:
                if not first_refused:
                    first_refused.append(len(held))
                ws.close()

    t0 = time.monotonic()
    await asyncio.gather(*(one(i) for i in range(ctx.args.conns)))
    open_s = time.monotonic() - t0
    # Hold them until the phase ends, then ask as an honest newcomer (127.0.0.1).
    await asyncio.sleep(max(0.0, deadline - time.monotonic()))
    try:
        newcomer = await RawWs.open("127.0.0.1", ctx.server.port, wait=10)
        newcomer_status = newcomer.status
        newcomer.close()
    except (OSError, TimeoutError) as exc:
        newcomer_status = type(exc).__name__  # type: ignore[assignment]
    for ws in held:
        ws.close()
    return {"sources": ctx.args.conn_sources, "tried": ctx.args.conns,
            "accepted": statuses.get("101", 0), "statuses": dict(statuses),
            "open_s": round(open_s, 1),
            # the achieved rate: handshakes answered (admitted or refused) per second
            "answered_per_s": round((ctx.args.conns - statuses.get("not_tried", 0))
                                    / max(open_s, 1e-3)),
            "accepted_before_first_refusal": first_refused[0] if first_refused else None,
            "honest_newcomer_status": newcomer_status}
