"""Per-connection bounds against a real server process: a ping flood is cut, with the
server's memory growth bounded; a reading client sees close 1008 ``control_flood``."""

from __future__ import annotations

import asyncio
import struct

from bench.attack.harness import ServerProc
from bench.attack.rawws import OP_PING, RawWs, frame

OP_PONG, OP_CLOSE = 0xA, 0x8
PAYLOAD = b"p" * 125  # the largest ping payload: the most pong bytes per ping
BATCH = 256
# Without the bound this many pings (33 MB) grow the server by tens of MB: the flood is
# capped so that a regression fails the RSS assert instead of running away.
MAX_PINGS = 256_000


async def test_ping_flood_that_never_reads_is_cut_with_bounded_memory(
        fast_server: ServerProc) -> None:
    ws = await RawWs.open("127.0.0.1", fast_server.port, rcvbuf=4096)
    assert ws.status == 101
    before_mb = fast_server.rss_mb()
    batch = frame(OP_PING, PAYLOAD) * BATCH
    sent, cut = 0, False
    while sent < MAX_PINGS:
        try:
            ws.send(batch)
            await ws.writer.drain()
        except (ConnectionError, OSError):
            cut = True
            break
        sent += BATCH
    if not cut:  # the server may be discarding our bytes while its abort timer runs
        try:
            await asyncio.wait_for(ws.reader.read(), 30)  # EOF or reset: the cut
            cut = True
        except (ConnectionError, OSError):
            cut = True
    grown_mb = fast_server.rss_mb() - before_mb
    ws.close()
    assert cut
    assert grown_mb <= 5.0, f"the server grew by {grown_mb:.1f} MB"
    assert fast_server.alive()


async def test_pings_beyond_the_budget_close_with_control_flood(
        fast_server: ServerProc) -> None:
    ws = await RawWs.open("127.0.0.1", fast_server.port)
    ws.send(frame(OP_PING, b"x") * 30)  # the budget is a burst of 10 (ServerConfig.ping_burst)
    pongs = 0
    while True:
        opcode, payload = await ws.read_frame()
        if opcode == OP_PONG:
            pongs += 1
            continue
        assert opcode == OP_CLOSE
        (code,) = struct.unpack("!H", payload[:2])
        assert (code, payload[2:]) == (1008, b"control_flood")
        break
    ws.close()
    # the 11th ping fails the connection and gets no pong
    assert pongs == 10
