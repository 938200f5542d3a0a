"""The memory store's move path as the saturated ``cpu`` row drives it, in one process,
without the network: an in-process node (memory store) with ``--players`` solo players,
each player's moves fed straight to its server-side protocol's ``data_received``
(``--window`` masked move frames per call, what a pipelining client's read brings),
every player once per loop tick, and the server's transport writes discarded (their
bytes counted). CPU time per move from ``time.process_time``; no client decodes
anything in the measured loop, so every microsecond is the server's Python (the ack's
system call excluded: the echo baseline pays one per message too).

    .venv/bin/python -m bench.movepath_take [--moves 200000] [--players 16] [--window 8]
    .venv/bin/python -m bench.movepath_take --calls     # Python calls per move (cProfile)
    .venv/bin/python -m bench.movepath_take --without-events   # the rooms' handlers stubbed

``--calls`` runs the same loop under ``cProfile`` and prints the calls per move of
every function called at least once per ten moves: exact counts (the profiler's times
are inflated by its own per-call cost, so only its counts are printed). Also printed:
garbage collections per 1,000 moves by generation.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.players import Player, find_cycle
from protocol import encode
from protocol import messages as m

_KEY = b"\x00\x00\x00\x00"  # a zero mask: the payload reads as it is (still unmasked)


def _frame(payload: bytes) -> bytes:
    """``payload`` as a client's masked binary frame (short payloads only)."""
    assert len(payload) < 126
    return bytes((0x82, 0x80 | len(payload))) + _KEY + payload


class _Sink:
    """Stands for the server's transport: counts what would have been written."""

    def __init__(self, transport: Any) -> None:
        self.transport = transport
        self.bytes = 0

    def write(self, data: bytes) -> None:
        self.bytes += len(data)

    def writelines(self, data: Any) -> None:
        for chunk in data:
            self.bytes += len(chunk)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


async def drive(moves: int, players: int, window: int, calls: bool,
                without_events: bool = False) -> None:
    """Start a node, seat the players, feed moves, print the figures."""
    from server.app import Server
    from server.config import ONE_HOST, ServerConfig

    server = Server(ServerConfig(**{**ONE_HOST, "store_url": "", "port": 0,
                                    "host": "127.0.0.1", "rate_burst": 10**9,
                                    "rate_per_s": 1e9}))
    await server.start()
    cycle = find_cycle()
    seated = [await Player.solo(server.url, cycle, True) for _ in range(players)]
    try:
        conns = sorted(server.connections, key=lambda c: c.id)
        feeds = []
        for player, conn in zip(seated, conns, strict=True):
            ws: Any = conn.ws
            ws.transport = _Sink(ws.transport)
            seq = conn.member.seq if conn.member is not None else 0
            feeds.append((ws, player.cycle, seq))

        def chunks(n_ticks: int) -> list[list[tuple[Any, bytes]]]:
            """The reads of ``n_ticks`` ticks, encoded beforehand (not timed)."""
            nonlocal feeds
            out = []
            for _ in range(n_ticks):
                fed, tick = [], []
                for ws, (first, back), seq in feeds:
                    tick.append((ws, b"".join(
                        _frame(encode(m.Move(seq=s, move=first if s % 2 else back)))
                        for s in range(seq + 1, seq + window + 1))))
                    fed.append((ws, (first, back), seq + window))
                feeds = fed
                out.append(tick)
            return out

        async def run(n_ticks: int) -> tuple[float, int]:
            reads = chunks(n_ticks)
            started = time.process_time()
            for tick in reads:
                for ws, chunk in tick:
                    ws.data_received(chunk)
                await asyncio.sleep(0)  # a loop tick: the store's event delivery runs
            return time.process_time() - started, n_ticks * players * window

        if without_events:  # priced by removal: the rooms' handling of the moves' events
            store: Any = server.store
            store = getattr(store, "wrapped", store)
            for handlers in store._subscribers.values():
                handlers[:] = [lambda data: None]
        ticks = max(moves // (players * window), 1)
        await run(ticks // 4)  # warm-up
        for ws, _, _ in feeds:
            ws.transport.bytes = 0
        gc.collect()
        before = [s["collections"] for s in gc.get_stats()]
        if calls:
            import cProfile
            import pstats

            profile = cProfile.Profile()
            profile.enable()
            _, done = await run(ticks)
            profile.disable()
            stats: Any = pstats.Stats(profile)
            rows = []
            for (path, line, name), (_, count, _, _, _) in stats.stats.items():
                if count / done >= 0.1:
                    where = path.split("site-packages/")[-1].replace(str(Path.cwd()) + "/", "")
                    rows.append((count / done, f"{where}:{line}:{name}"))
            rows.sort(key=lambda r: (-r[0], r[1]))
            print(f"calls per move: {sum(count for count, _ in rows):.1f} "
                  f"(functions called at least once per ten moves)")
            for count, where in rows:
                print(f"  {count:6.2f}  {where}")
        else:
            spent, done = await run(ticks)
            print(f"{spent / done * 1e6:.2f} µs per move ({done} moves, {players} players, "
                  f"{window} per read)")
        after = [s["collections"] for s in gc.get_stats()]
        print("gc collections per 1,000 moves by generation:",
              [round((b - a) / done * 1000, 3) for a, b in zip(before, after, strict=True)])
        written = sum(ws.transport.bytes for ws, _, _ in feeds)
        print(f"bytes written per move: {written / done:.1f}")
        for ws, _, _ in feeds:
            ws.transport = ws.transport.transport
    finally:
        for player in seated:
            await player.ws.close()
        await server.stop()


def main() -> None:
    """Parse options and run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=200_000, help="moves in all")
    parser.add_argument("--players", type=int, default=16)
    parser.add_argument("--window", type=int, default=8, help="move frames per read")
    parser.add_argument("--calls", action="store_true", help="count calls per move")
    parser.add_argument("--without-events", action="store_true",
                        help="the rooms' event handlers replaced by a no-op (priced by removal)")
    args = parser.parse_args()
    import uvloop

    uvloop.run(drive(args.moves, args.players, args.window, args.calls,
                     args.without_events))


if __name__ == "__main__":
    main()
