"""Ping flood: one connection sends WebSocket ping frames and never reads.

Each ping makes the server queue a pong; a client that never reads lets those pile up
in the server. ``--ping-where`` chooses the connection's state: ``prehello`` (no hello),
``lobby`` (a player in a lobby room, the default) or ``spectator`` (watching a running
race). Reports the server's RSS growth while the flood runs and whether (and when) the
server cut the connection.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from bench.attack.harness import Client, Ctx, racing_player
from bench.attack.rawws import OP_BINARY, OP_PING, RawWs, frame, hello_frame
from protocol import decode_server, encode
from protocol import messages as m

PAYLOAD = b"p" * 125  # the largest control-frame payload: the most pong bytes per ping
BATCH = 64  # pings written before each drain


def add_args(group: argparse._ArgumentGroup) -> None:
    """This attack's options."""
    group.add_argument("--ping-where", choices=["prehello", "lobby", "spectator"],
                       default="lobby", help="the flooding connection's state")
    group.add_argument("--ping-max", type=int, default=50_000_000,
                       help="most pings to send (the duration bounds it too)")


async def _enter(ctx: Ctx, ws: RawWs, where: str) -> None:
    """Bring the raw connection into the chosen state (reading only until then)."""
    if where == "prehello":
        return
    ws.send(hello_frame("pinger"))
    if where == "lobby":
        ws.send(frame(OP_BINARY, encode(m.CreateRoom(settings=m.RoomSettings(
            variant="brisbane", public=False)))))
    else:
        racer, _ = await racing_player(ctx.url, name="watched", spectators=True)
        ctx.counters["_racer"] = racer
        ws.send(frame(OP_BINARY, encode(m.Join(code=racer.code, role="spectator"))))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        opcode, payload = await ws.read_frame()
        if opcode == OP_BINARY and isinstance(decode_server(payload), m.Joined):
            return
    raise RuntimeError("the flooding connection never got into its room")


async def attack(ctx: Ctx, seconds: float) -> dict[str, Any]:
    """Flood for ``seconds``; sample RSS every second."""
    where = ctx.args.ping_where
    ws = await RawWs.open("127.0.0.1", ctx.server.port, rcvbuf=4096)
    await _enter(ctx, ws, where)
    start_rss = ctx.server.rss_mb()
    sent = 0
    cut_after: float | None = None
    curve: list[float] = []
    batch = frame(OP_PING, PAYLOAD) * BATCH  # the same masked bytes: the server does not care
    t0 = time.monotonic()
    next_sample = t0
    while time.monotonic() - t0 < seconds and sent < ctx.args.ping_max:
        now = time.monotonic()
        if now >= next_sample:
            curve.append(round(ctx.server.rss_mb() - start_rss, 1))
            next_sample = now + 1.0
        try:
            ws.send(batch)
            await asyncio.wait_for(ws.writer.drain(), max(0.01, seconds - (now - t0)))
        except TimeoutError:
            break  # the server stopped reading us: the flood is throttled, not cut
        except (ConnectionError, OSError):
            cut_after = time.monotonic() - t0
            break
        if ws.writer.is_closing() or ws.reader.at_eof():
            cut_after = time.monotonic() - t0
            break
        sent += BATCH
    growth = round(ctx.server.rss_mb() - start_rss, 1)
    ws.close()
    racer = ctx.counters.pop("_racer", None)
    if isinstance(racer, Client):
        await racer.close()
    return {"where": where, "pings_sent": sent, "mb_sent": round(sent * 131 / 2**20, 1),
            "rss_growth_mb": growth, "rss_growth_curve_mb_per_s": curve,
            "cut": cut_after is not None,
            "cut_after_s": None if cut_after is None else round(cut_after, 1)}
