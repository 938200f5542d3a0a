"""Spectator fan-out: many spectators (raw connections that read and discard, from many
addresses) watch one room whose bot moves at the default rate limit; every move reaches
every spectator (in one ``Diffs`` frame per tick, or with ``--legacy-spectators`` a frame
pair per move, for as many as the server's cap on such spectators admits).

The setup seats the mover and joins the spectators (the quiet phase has them idle); the
attack phase is the mover moving. Reports spectators joined, moves made and the honest
player's ack latency.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time
from collections import Counter
from typing import Any

from bench.attack.harness import Client, Ctx, racing_player, source_addr
from bench.attack.rawws import OP_BINARY, OP_PING, OP_PONG, RawWs, frame, hello_frame
from protocol import decode_server, encode
from protocol import messages as m

ROUNDS = True  # the runner may alternate quiet and attack phases (--rounds)
JOIN_CONCURRENCY = 100  # spectator handshakes in flight at once (the client's own bound)
MOVE_PACE_S = 0.12  # under the default 10 messages/s
# The flood's achieved rate, reported per round: the mover's moves and what the
# spectators' readers (the generator) took off their sockets, a second; a starved reader
# would fall behind (and, past the server's outbound cap, be cut: still connected)
ACHIEVED = ("moves_per_s", "frames_fanned_out_per_s", "mb_read_per_s",
            "spectators_still_connected")


def add_args(group: argparse._ArgumentGroup) -> None:
    """This attack's options."""
    group.add_argument("--spectators", type=int, default=1500, help="spectator connections")
    group.add_argument("--fanout-sources", type=int, default=30,
                       help="client addresses the spectators come from")
    group.add_argument("--legacy-spectators", action="store_true",
                       help="spectators do not set hello.ds (a frame per move each, as an "
                       "older or hostile client; the server caps them per room)")


async def _drain(ws: RawWs, counts: Counter[str]) -> None:
    """Read and discard everything (a spectator that keeps up), answering the server's
    keepalive pings so it is not cut after 40 s. Server frames are unmasked: walk their
    headers without decoding the payloads."""
    buf = b""
    with contextlib.suppress(Exception):
        while chunk := await ws.reader.read(65536):
            counts["bytes"] += len(chunk)
            buf += chunk
            while len(buf) >= 2:
                n, head = buf[1] & 0x7F, 2
                if n == 126:
                    if len(buf) < 4:
                        break
                    n, head = int.from_bytes(buf[2:4]), 4
                elif n == 127:
                    if len(buf) < 10:
                        break
                    n, head = int.from_bytes(buf[2:10]), 10
                if len(buf) < head + n:
                    break
                if buf[0] & 0x0F == OP_PING:
                    ws.send(frame(OP_PONG, buf[head:head + n]))
                    counts["pings"] += 1
                buf = buf[head + n:]


async def setup(ctx: Ctx) -> dict[str, Any]:
    """Seat the mover; join ``--spectators`` spectators to its room."""
    mover, cycle = await racing_player(ctx.url, name="mover", bot=True, spectators=True,
                                       source=source_addr(0))
    started = time.monotonic()
    sem = asyncio.Semaphore(JOIN_CONCURRENCY)
    joined: list[RawWs] = []
    failures: Counter[str] = Counter()
    retried: Counter[str] = Counter()
    join = frame(OP_BINARY, encode(m.Join(code=mover.code, role="spectator")))

    async def one(i: int) -> None:
        async with sem:
            try:
                ws = await RawWs.open_patiently(
                    "127.0.0.1", ctx.server.port,
                    source=source_addr(5 + i % ctx.args.fanout_sources))
            except (OSError, TimeoutError) as exc:
                failures[type(exc).__name__] += 1
                return
            retried["busy refusals retried"] += ws.retries
            if ws.status != 101:
                failures[str(ws.status)] += 1
                ws.close()
                return
            ws.send(hello_frame(f"w{i}", batched=not ctx.args.legacy_spectators) + join)
            try:  # welcome, then joined or an error (room_full past the room's cap)
                while not isinstance(reply := decode_server((await ws.read_frame())[1]),
                                     m.Joined | m.Error):
                    pass
            except Exception as exc:
                failures[type(exc).__name__] += 1
                ws.close()
                return
            if isinstance(reply, m.Error):
                failures[reply.code] += 1
                ws.close()
                return
            joined.append(ws)

    await asyncio.gather(*(one(i) for i in range(ctx.args.spectators)))
    counts: Counter[str] = Counter()
    ctx.counters["_fanout"] = (mover, cycle, joined, counts,
                               [asyncio.create_task(_drain(ws, counts)) for ws in joined])
    return {"spectators": len(joined), "failures": dict(failures),
            "busy_retries": retried["busy refusals retried"],
            "setup_s": round(time.monotonic() - started, 1)}


async def attack(ctx: Ctx, seconds: float) -> dict[str, Any]:
    """The mover plays its cycle at a human-legal pace for ``seconds`` (each round goes
    on from the last one's sequence number; ``teardown`` closes everything)."""
    mover: Client
    mover, cycle, joined, counts, drains = ctx.counters["_fanout"]
    before = counts["bytes"]
    deadline = time.monotonic() + seconds
    first = seq = ctx.counters.get("_seq", 0)
    slowest = 0.0
    while time.monotonic() < deadline:
        tick = time.monotonic()
        seq += 1
        await mover.send(m.Move(seq=seq, move=cycle[(seq - 1) % 2]))
        reply = await mover.expect(m.Accepted | m.Rejected, wait=60)
        slowest = max(slowest, time.monotonic() - tick)
        mover.inbox.clear()
        if isinstance(reply, m.Rejected):
            break
        await asyncio.sleep(max(0.0, MOVE_PACE_S - (time.monotonic() - tick)))
    ctx.counters["_seq"] = seq
    still = sum(not task.done() for task in drains)
    read_mb = (counts["bytes"] - before) / 2**20
    return {"spectators": len(joined), "mover_moves": seq - first,
            "moves_per_s": round((seq - first) / seconds, 2),
            "mb_read_per_s": round(read_mb / seconds, 2),
            "frames_fanned_out": (seq - first) * len(joined),
            "frames_fanned_out_per_s": round((seq - first) * len(joined) / seconds),
            "mb_read_by_spectators": round(read_mb, 1),
            "mover_slowest_ack_ms": round(slowest * 1000, 1),
            "keepalive_pings_answered": counts["pings"],
            "spectators_still_connected": still}


async def teardown(ctx: Ctx) -> None:
    """Close the spectators and the mover."""
    mover, _, joined, _, drains = ctx.counters.pop("_fanout")
    for ws in joined:
        ws.close()
    for task in drains:
        task.cancel()
    await mover.close()
