"""The bare baselines solrace is measured against, each a real server process on
127.0.0.1 (uvloop when installed, like ``solrace serve``), run the same way as solrace in
the same benchmark run:

- ``echo``: a ``websockets`` server that answers every frame with an ack-sized frame (an
  ``Accepted`` encoded once at start-up): the transport's floor for move → ack.
- ``evalsha --redis URL``: the same, but every frame first runs one ``EVALSHA`` (an
  ``RPUSH`` script on a per-connection key) on Redis: the floor of a Redis-backed move.
- ``broadcast``: one room. A connection that sends ``Join{role=player}`` is a mover (seats
  1, 2, … in join order), ``Join{role=spectator}`` a spectator. Each ``Move`` is decoded,
  acknowledged (``Accepted``), then one ``Progress`` frame goes to the other movers and
  one ``Diff`` frame to every spectator, each encoded once and written with
  ``websockets.broadcast``: the bare way to fan a move out.
- ``broadcast-tick [--tick-ms 16]``: the same, but spectators get one frame per tick
  holding every ``Diff`` of the tick (encoded once, written with ``broadcast``): the bare
  way to fan out coalesced frames (Colyseus patches every 16 ms); acks and rivals'
  ``Progress`` stay per move.

Every baseline answers ``Ping{nonce}`` with ``Pong{nonce}`` (the load generator's clients
use it to know their setup frames were handled) and ignores other frames it does not
need. Usage (the load generator starts these itself)::

    python -m bench.baselines echo|broadcast|broadcast-tick|floor
    python -m bench.baselines evalsha --redis redis://127.0.0.1:PORT/0

Each prints ``listening on ws://127.0.0.1:PORT`` once ready and exits on SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import struct
from collections.abc import Awaitable, Callable
from typing import Any

from websockets.asyncio.server import ServerConnection, broadcast, serve

from protocol import decode_client, encode
from protocol import messages as m

ACK = encode(m.Accepted(seq=1000, hash=0x12345678, clock_ms=60_000))  # 22 bytes, like a real ack
MAX_PENDING_DIFFS = 100_000  # broadcast-tick: diffs held for the next tick, at most
RPUSH_SCRIPT = "return redis.call('RPUSH', KEYS[1], ARGV[1])"

Handler = Callable[[ServerConnection], Awaitable[None]]


def _pong(frame: bytes) -> bytes | None:
    """The ``Pong`` answering ``frame`` if it is a ``Ping`` (cheap test first: the hot
    path of the echo baselines must stay an echo)."""
    if b"ping" not in frame:
        return None
    message = decode_client(frame)
    return encode(m.Pong(server_ms=0, nonce=message.nonce)) if isinstance(message, m.Ping) else None


def echo_handler() -> Handler:
    """Every frame gets ``ACK`` back."""

    async def handler(ws: ServerConnection) -> None:
        async for frame in ws:
            assert isinstance(frame, bytes)
            await ws.send(_pong(frame) or ACK)

    return handler


def evalsha_handler(redis_url: str) -> Handler:
    """Every frame: one ``EVALSHA`` (``RPUSH`` of the frame), then ``ACK``."""
    from redis.asyncio import Redis

    client = Redis.from_url(redis_url)
    script = client.register_script(RPUSH_SCRIPT)

    async def handler(ws: ServerConnection) -> None:
        key = f"bench:{{{id(ws)}}}:log"
        async for frame in ws:
            assert isinstance(frame, bytes)
            pong = _pong(frame)
            if pong is None:
                await script(keys=[key], args=[frame])
            await ws.send(pong or ACK)

    return handler


def _server_frame(payload: bytes) -> bytes:
    """``payload`` as one unmasked FIN binary frame, as a server sends it (RFC 6455 5.2)."""
    n = len(payload)
    head = (bytes((0x82, n)) if n < 126 else
            struct.pack("!BBH", 0x82, 126, n) if n < 65536 else struct.pack("!BBQ", 0x82, 127, n))
    return head + payload


def broadcast_handler(tick_s: float = 0.0, floor: bool = False) -> Handler:
    """One room of movers and spectators (see the module docstring). With ``tick_s``,
    spectators get one frame per tick holding every diff of the tick, in order. With
    ``floor``, each move's spectator frame is framed here and written to the
    spectators' transports in a plain loop (the ``floor`` baseline)."""
    movers: dict[ServerConnection, int] = {}
    spectators: set[ServerConnection] = set()
    transports: list[Any] = []  # floor: the spectators' transports
    pending: list[bytes] = []  # diffs of the current tick (tick_s > 0)
    ticking: list[asyncio.Task[None]] = []

    async def tick() -> None:
        while True:
            await asyncio.sleep(tick_s)
            if pending:
                # The tick's diffs back to back: one MessagePack stream, one frame.
                broadcast(spectators, b"".join(pending))
                pending.clear()

    async def handler(ws: ServerConnection) -> None:
        try:
            async for frame in ws:
                message = decode_client(frame)
                if isinstance(message, m.Move):
                    seat = movers.get(ws, 0)
                    await ws.send(encode(m.Accepted(seq=message.seq, hash=0x12345678,
                                                    clock_ms=60_000)))
                    progress = encode(m.Progress(seat=seat, progress=0, moves=message.seq,
                                                 status="playing", clock_ms=60_000))
                    broadcast([c for c in movers if c is not ws], progress)
                    if floor:
                        # what solrace sends a paced room's spectators: Diffs{[D], [P]}
                        wire = _server_frame(encode(m.Diffs(
                            diffs=[m.Diff(seat=seat, seq=message.seq, move=message.move,
                                          hash=0x12345678, clock_ms=60_000)],
                            progress=[m.Progress(seat=seat, progress=0, moves=message.seq,
                                                 status="playing", clock_ms=60_000)])))
                        for transport in transports:  # the plainest loop: nothing else
                            transport.write(wire)
                        continue
                    diff = encode(m.Diff(seat=seat, seq=message.seq, move=message.move,
                                         hash=0x12345678, clock_ms=60_000))
                    if not tick_s:
                        broadcast(spectators, diff)
                    elif len(pending) < MAX_PENDING_DIFFS:
                        pending.append(diff)
                        if not ticking:
                            ticking.append(asyncio.create_task(tick()))
                elif isinstance(message, m.Join):
                    if message.role == "spectator":
                        spectators.add(ws)
                        if floor:
                            transports.append(ws.transport)
                    else:
                        movers[ws] = len(movers) + 1
                elif isinstance(message, m.Ping):
                    await ws.send(encode(m.Pong(server_ms=0, nonce=message.nonce)))
        finally:
            movers.pop(ws, None)
            spectators.discard(ws)
            if floor and ws.transport in transports:
                transports.remove(ws.transport)

    return handler


async def run(handler: Handler) -> None:
    """Serve ``handler`` on a free loopback port until SIGTERM."""
    # The load generator drops its connections without a closing handshake when a run
    # ends; the handler's "connection closed" tracebacks are expected then.
    # BENCH_DEBUG=1 shows them (and any real handler error).
    quiet = logging.ERROR if os.environ.get("BENCH_DEBUG") else logging.CRITICAL
    logging.getLogger("websockets").setLevel(quiet)
    done = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, done.set)
    async with serve(handler, "127.0.0.1", 0, compression=None, max_queue=None) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"listening on ws://127.0.0.1:{port}", flush=True)
        await done.wait()


def main() -> None:
    """Run the baseline named on the command line."""
    parser = argparse.ArgumentParser(description="bare baseline servers for bench/")
    parser.add_argument("kind", choices=["echo", "evalsha", "broadcast", "broadcast-tick", "floor"])
    parser.add_argument("--tick-ms", type=float, default=16.0,
                        help="broadcast-tick: spectators' frame interval (default 16)")
    parser.add_argument("--redis", default="", help="Redis URL (evalsha)")
    args = parser.parse_args()
    if args.kind == "evalsha" and not args.redis:
        parser.error("evalsha needs --redis URL")
    handler = (echo_handler() if args.kind == "echo" else
               evalsha_handler(args.redis) if args.kind == "evalsha" else
               broadcast_handler(floor=True) if args.kind == "floor" else
               broadcast_handler(args.tick_ms / 1000 if args.kind == "broadcast-tick" else 0.0))
    try:
        import uvloop
    except ImportError:
        asyncio.run(run(handler))
    else:
        uvloop.run(run(handler))


if __name__ == "__main__":
    main()
