"""Bot speed: a seat declared human (``hello.b`` false) plays 20 moves at once (the
default burst), pipelined, and then resigns. Is it flagged in the results?

Reports the race-clock span of the 20 moves (from the server's own ``A.c``) and whether
the seat's entry in the final ranking carries a bot mark or any key a plain human entry
does not (read from the raw MessagePack, so a flag added later is seen without a client
update).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import msgpack

from bench.attack.harness import Ctx, racing_player, source_addr
from protocol import messages as m

BURST = 20  # the default rate burst: this many moves need no waiting at all
PLAIN_KEYS = {"k", "p", "n", "b", "st", "g", "mv", "fm", "gm"}  # a RankEntry today


async def one_race(url: str) -> dict[str, Any]:
    """One human-declared seat, BURST moves pipelined, resign; span and flag."""
    client, cycle = await racing_player(url, name="totally-human", source=source_addr(0))
    # hello, create and ready spent credits: let the bucket refill to a full burst (a bench
    # pacing itself, not a synchronisation).
    await asyncio.sleep(2.5)
    for seq in range(1, BURST + 1):
        await client.send(m.Move(seq=seq, move=cycle[(seq - 1) % 2]))
    clocks: list[int] = []
    while len(clocks) < BURST:
        reply = await client.expect(m.Accepted | m.Rejected)
        if isinstance(reply, m.Rejected):
            break
        clocks.append(reply.clock_ms)
    await asyncio.sleep(0.5)  # the burst is spent: let a credit refill for the resign
    await client.send(m.Resign())
    deadline = time.monotonic() + 30
    entry: dict[str, Any] = {}
    while time.monotonic() < deadline:
        raw = await asyncio.wait_for(client.ws.recv(), deadline - time.monotonic())
        frame = msgpack.unpackb(raw, raw=False)
        if frame.get("t") == "err" and frame.get("c") == "rate_limited":
            await asyncio.sleep(0.5)
            await client.send(m.Resign())
        elif frame.get("t") == "results":
            entry = next(e for e in frame["k"] if e.get("p") == 1)
            break
    await client.close()
    extra = sorted(set(entry) - PLAIN_KEYS)
    return {"moves": len(clocks), "span_ms": (clocks[-1] - clocks[0]) if clocks else None,
            "flagged": bool(entry.get("b")) or bool(extra), "extra_keys": extra}


async def attack(ctx: Ctx, seconds: float) -> dict[str, Any]:
    """A few such races (at least one) within ``seconds``; the fastest span and whether
    any was flagged."""
    deadline = time.monotonic() + seconds
    races = [await one_race(ctx.url)]
    while time.monotonic() < deadline and len(races) < 5:
        races.append(await one_race(ctx.url))
    spans = [r["span_ms"] for r in races if r["span_ms"] is not None]
    return {"races": len(races), "moves_per_race": BURST,
            "min_span_ms": min(spans) if spans else None,
            "max_span_ms": max(spans) if spans else None,
            "flagged_races": sum(r["flagged"] for r in races),
            "extra_keys": sorted({k for r in races for k in r["extra_keys"]})}
