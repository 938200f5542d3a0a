"""The cost of the legal-moves opt-in (``hello.lm``): move→ack latency of a player that
asked for legal moves against one that did not, on the same server in the same run, and
the server-side CPU per acknowledgement of building the list.

    .venv/bin/python bench/legal_bench.py [--moves 2000] [--rounds 5]

One ``solrace`` server process (the one of bench/server_bench.py: memory store, limits
raised). Two players in two rooms play the same reversible Spanish move pair (13 piles:
the most legal moves of the five variants' opening deals); rounds alternate which one
goes first, so drift in the machine's load hits both alike. Reported: p50 of each, the
ratio (opt-in / default), and the frame sizes. Then, in this process, the extra CPU an
acknowledgement costs (``legal.annotate`` + a larger encode) over the default encode.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from server_bench import SEED, VARIANT, _start, find_cycle

import engine
from protocol import PROTOCOL_VERSION, decode_server, encode
from protocol import messages as m


class Racer:
    """A player alone in its room, playing the move pair one move at a time."""

    def __init__(self, ws: Any, cycle: tuple[str, str]) -> None:
        self.ws, self.cycle, self.seq, self.ack_bytes = ws, cycle, 0, 0

    @classmethod
    async def open(cls, url: str, cycle: tuple[str, str], legal: bool) -> Racer:
        from websockets.asyncio.client import connect

        ws = await connect(url, compression=None, max_queue=None)
        await ws.send(encode(m.Hello(version=PROTOCOL_VERSION, name="bench", legal_moves=legal)))
        for kind, message in ((m.Welcome, None), (m.Joined, m.CreateRoom(settings=m.RoomSettings(
                variant=VARIANT, countdown_s=0, spectators=False, public=False))),
                (m.Started, m.Ready())):
            if message is not None:
                await ws.send(encode(message))
            while not isinstance(decode_server(await ws.recv()), kind):
                pass
        return cls(ws, cycle)

    async def moves(self, count: int) -> list[float]:
        """Play ``count`` moves; seconds from each send to its ack."""
        times = []
        for _ in range(count):
            self.seq += 1
            frame = encode(m.Move(seq=self.seq, move=self.cycle[(self.seq - 1) % 2]))
            started = time.perf_counter()
            await self.ws.send(frame)
            while True:
                data = await self.ws.recv()
                message = decode_server(data)
                if isinstance(message, m.Accepted):
                    break
                if isinstance(message, m.Rejected | m.Error):
                    raise RuntimeError(f"move refused: {message}")
            times.append(time.perf_counter() - started)
            self.ack_bytes = len(data)
        return times


async def race(url: str, moves: int, rounds: int) -> dict[bool, list[float]]:
    cycle = find_cycle(VARIANT, SEED)
    racers = {flag: await Racer.open(url, cycle, flag) for flag in (False, True)}
    per_round = max(1, moves // rounds)
    times: dict[bool, list[float]] = {False: [], True: []}
    for flag in (False, True):
        await racers[flag].moves(50)  # warm-up
    for i in range(rounds):
        order = (False, True) if i % 2 == 0 else (True, False)
        for flag in order:
            times[flag] += await racers[flag].moves(per_round)
    for flag in (False, True):
        print(f"  ack frame, lm {'on ' if flag else 'off'}: {racers[flag].ack_bytes} bytes")
        await racers[flag].ws.close()
    return times


def cpu_per_ack(repeat: int) -> tuple[float, float, int]:
    """Seconds per ack to encode it plainly, and with ``legal.annotate`` (lists of the
    opening Spanish deal); and how many legal moves that deal has."""
    from server import legal
    from server.room import Member

    game = engine.new_game(VARIANT, seed=SEED)
    member = Member(conn=None, seat=1, game=game, seq=1)  # type: ignore[arg-type]
    ack = m.Accepted(seq=1, hash=game.state_hash(), clock_ms=12345)

    def plain() -> None:
        encode(ack)

    def annotated() -> None:
        encode(legal.annotate(member, ack))

    out = []
    for fn in (plain, annotated):
        best = float("inf")
        for _ in range(5):
            started = time.perf_counter()
            for _ in range(repeat):
                fn()
            best = min(best, (time.perf_counter() - started) / repeat)
        out.append(best)
    return out[0], out[1], len(game.legal_moves())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5000)
    args = parser.parse_args()
    proc, url = _start("solrace")
    try:
        times = asyncio.run(race(url, args.moves, args.rounds))
    finally:
        proc.terminate()
        proc.wait()
    p50 = {flag: statistics.median(t) * 1e6 for flag, t in times.items()}
    p99 = {flag: statistics.quantiles(t, n=100)[98] * 1e6 for flag, t in times.items()}
    print(f"move->ack, {len(times[False])} moves each ({VARIANT}, seed {SEED})")
    print(f"  lm off: p50 {p50[False]:7.0f} us   p99 {p99[False]:7.0f} us")
    print(f"  lm on : p50 {p50[True]:7.0f} us   p99 {p99[True]:7.0f} us")
    print(f"  ratio on/off: p50 {p50[True] / p50[False]:.2f}   p99 {p99[True] / p99[False]:.2f}")
    plain, annotated, count = cpu_per_ack(args.repeat)
    print(f"server CPU per ack ({count} legal moves): encode {plain * 1e6:.1f} us, "
          f"annotate + encode {annotated * 1e6:.1f} us (+{(annotated - plain) * 1e6:.1f} us)")


if __name__ == "__main__":
    main()
