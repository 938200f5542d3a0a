"""What the parts of one move cost, priced by removal: ``race.play`` called in a loop on
a running room of an in-process server (memory store), with one part at a time replaced
by a stub that does nothing, CPU time per move read from ``time.process_time``.

    .venv/bin/python -m bench.movepath_parts [--moves 20000] [--per-tick 1]

It completes the sampling profile (``bench.profile``): no network and no client in the
measured loop (the ack is not written: ``Connection.send`` is stubbed in every row, so
the client's work never counts), every figure a difference between two rows of the same
run. A stubbed part's cost includes what it alone calls. ``--per-tick`` moves are played
per loop tick (1, the default: what a server with one move in flight per connection
sees, so the store's per-tick delivery of events is paid per move; this tool played 64
per tick before 26 Nov 2026 evening, which hid that cost). The rows are cumulative only
where they say "+". Not a server anyone should run: the stubs break it on purpose.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.players import Player, find_cycle
from protocol import messages as m


async def price(moves: int, per_tick: int) -> None:
    """Start a node, seat one player, print µs per move for each row."""
    import engine
    from server import connection, race
    from server.app import Server
    from server.config import ONE_HOST, ServerConfig

    server = Server(ServerConfig(**{**ONE_HOST, "store_url": "", "port": 0,
                                    "host": "127.0.0.1", "rate_burst": 10**9,
                                    "rate_per_s": 1e9}))
    await server.start()
    player = await Player.solo(server.url, find_cycle(), True)
    try:
        (code, room), = server.rooms.items()
        member = next(iter(room.members.values()))
        first, back = player.cycle

        async def run(label: str, n: int = moves) -> float:
            gc.collect()
            started = time.process_time()
            for i in range(n):
                seq = member.seq + 1
                reply = await race.play(room, member, m.Move(seq=seq, move=first if seq % 2
                                                             else back))
                if i % per_tick == per_tick - 1:
                    await asyncio.sleep(0)  # a loop tick: the store's event delivery runs
            await asyncio.sleep(0)
            per = (time.process_time() - started) / n * 1e6
            assert isinstance(reply, m.Accepted), reply
            print(f"  {label:<56} {per:6.2f} µs per move")
            return per

        send = connection.Connection.send
        connection.Connection.send = lambda self, message: None  # type: ignore[method-assign]
        try:
            await run("warm-up", moves // 4)
            await run("race.play (the ack not sent: Connection.send stubbed)")
            store = cast(Any, room.store).wrapped  # the InstrumentedStore's
            handlers = store._subscribers[code]
            kept = list(handlers)

            def no_handler(data: bytes) -> None:
                return None

            handlers[:] = [no_handler]
            await run("  the room's event handling stubbed")
            handlers[:] = kept
            timed, room.store = room.store, store
            await run("  the store-call timer removed")
            room.store = timed
            game = engine.Game
            stubs: list[tuple[str, str, Any]] = [
                ("state_hash", "  state hash stubbed", lambda self: 0),
                ("stuck", "  + stuck check stubbed too", property(lambda self: False)),
            ]
            saved = {name: getattr(game, name) for name, _, _ in stubs}
            for name, label, stub in stubs:
                setattr(game, name, stub)
                await run(label)
            for name, value in saved.items():
                setattr(game, name, value)

            class NoAppend:
                def __getattr__(self, name: str) -> Any:
                    return getattr(timed, name)

                async def append_move(self, *args: Any, **kwargs: Any) -> None:
                    return None

            room.store = cast(Any, NoAppend())
            await run("  store.append_move stubbed (so no event either)")
            room.store = timed
        finally:
            connection.Connection.send = send  # type: ignore[method-assign]
    finally:
        await player.ws.close()
        await server.stop()


def main() -> None:
    """Parse options and run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=20_000, help="moves per row")
    parser.add_argument("--per-tick", type=int, default=1, help="moves per loop tick")
    args = parser.parse_args()
    try:
        import uvloop
    except ImportError:
        asyncio.run(price(args.moves, max(args.per_tick, 1)))
    else:
        uvloop.run(price(args.moves, max(args.per_tick, 1)))


if __name__ == "__main__":
    main()
