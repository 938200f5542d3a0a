"""The honest player in a process of its own:
``python -m bench.attack.honest URL PACE [SOURCE [OFFSET]]``.

The attack kit's load generator (thousands of connections, reconnect loops) runs on an
event loop of its own; an honest player on that same loop would measure the generator's
own stalls, not the server's. In its own process it only shares the machine's cores.

The child connects from SOURCE (127.0.0.1 by default), starts racing alone in a private
room, prints ``READY`` and then plays its move cycle every PACE seconds until a line
arrives on its standard input (or it closes). Its moves are sent on a fixed grid of the
system-wide monotonic clock, at OFFSET (seconds, default 0) past each multiple of PACE:
with ``--honest N`` the runner gives the N players offsets PACE·i/N, so their moves fall
evenly between each other's instead of together (N players sample N times as many
instants; a stall of the server is seen by the players whose move falls in it, not by
all of them at once). A move whose ack comes after the next grid point is followed at
once by the next one due on the grid (no catching up on missed points). Then it prints
one line ``SAMPLES [[t, ms], ...]``: each
move's send time (``time.monotonic()``, the system-wide monotonic clock, so the parent
can assign it to the phase it fell in) and its send→ack time in ms; ``LOST`` (-1, no ack
within ``REPLY_TIMEOUT_S``) and ``REJECTED`` (-2) are codes in place of the time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import sys
import time

from bench.attack.harness import LOST, REJECTED, REPLY_TIMEOUT_S, racing_player
from protocol import messages as m

RESYNC_S = 60.0  # a move with no ack after this much: the run is over for this player


def next_tick(now: float, pace_s: float, offset_s: float) -> float:
    """The first grid point (``offset_s`` past a multiple of ``pace_s``) at or after
    ``now``; a point less than a microsecond's worth of rounding before ``now`` counts
    (``due + pace_s`` is a grid point, whatever its last bit)."""
    return offset_s + math.ceil((now - offset_s) / pace_s - 1e-6) * pace_s


async def play(url: str, pace_s: float, source: str = "",
               offset_s: float = 0.0) -> list[list[float]]:
    """Play until stdin says stop; the samples (module docstring)."""
    client, cycle = await racing_player(url, name="honest", source=source)
    print("READY", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(sys.stdin.fileno(), stop.set)
    samples: list[list[float]] = []
    seq = 0
    due = next_tick(time.monotonic(), pace_s, offset_s)
    try:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), max(0.0, due - time.monotonic()))
        while not stop.is_set():
            tick = time.monotonic()
            seq += 1
            sent = time.perf_counter()
            await client.send(m.Move(seq=seq, move=cycle[(seq - 1) % 2]))
            try:
                reply = await client.expect(m.Accepted | m.Rejected, wait=RESYNC_S)
            except (TimeoutError, RuntimeError):
                samples.append([tick, LOST])
                break  # out of step with the server: stop measuring
            took = time.perf_counter() - sent
            if isinstance(reply, m.Rejected):
                samples.append([tick, REJECTED])
                seq = reply.expected - 1
            else:
                samples.append([tick, LOST if took > REPLY_TIMEOUT_S else took * 1000])
            client.inbox.clear()
            due = next_tick(max(time.monotonic(), due + pace_s), pace_s, offset_s)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), max(0.0, due - time.monotonic()))
    finally:
        loop.remove_reader(sys.stdin.fileno())
        await client.close()
    return samples


def main() -> None:
    """Entry point (module docstring)."""
    url, pace = sys.argv[1], float(sys.argv[2])
    source = sys.argv[3] if len(sys.argv) > 3 else ""
    offset = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
    samples = asyncio.run(play(url, pace, source, offset))
    print("SAMPLES " + json.dumps(samples), flush=True)


if __name__ == "__main__":
    main()
