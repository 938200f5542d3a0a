"""One spectated room: ``movers`` players racing and ``spectators`` watching, on solrace
and on the bare broadcast baseline (``bench/baselines.py``), measured the same way.

- saturated: every mover keeps moves in flight for the window; moves/s and the movers'
  ack p50/p99.
- paced: the room makes ``rate`` moves/s in all (movers take turns, evenly spread): the
  server's CPU per frame a spectator received and per move delivered to a spectator (a
  server that coalesces frames sends fewer frames than moves), frames per move and
  spectator, and how long after a move was sent its rivals saw its ``Progress`` (p99).

What the CPU per spectator frame counts: the server process's whole CPU (utime + stime)
over the window, divided by the frames the spectators received; the movers' acks and
the rivals' ``Progress`` are in the numerator, not the denominator (on every server
measured alike). The paced row also gives the split (``cpu_user_us_per_frame``,
``cpu_sys_us_per_frame``: utime and stime alone) and the CPU per frame of *every* frame
the server sent in the window (``cpu_us_per_any_frame``: the spectators' and the players'
frames counted, each as one), so the comparison can be read both ways.

Spectators are ``bench/rawws.py`` clients (they count frames, decode nothing), spread
over several loopback source addresses, in a process of their own (``bench/watchers.py``)
so their frames do not delay the players' timings.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from .cpu import TICKS, CpuWindow
from .players import Clocks, Player, median, percentile, room_of_players
from .watchers import Watchers


async def spectated_room(url: str, port: int, solrace: bool, pid: int, movers: int,
                         spectators: int, seconds: float, paced_rate: float,
                         window: int = 4) -> dict[str, float]:
    """Run the room once (saturated when ``paced_rate`` is 0, else paced at that many
    moves/s in all) and return its figures."""
    clocks = Clocks()
    players, code = await room_of_players(url, movers, solrace, clocks)
    async with Watchers(port, code, spectators) as watchers:
        try:
            return await _measure(players, clocks, watchers, spectators, seconds, paced_rate,
                                  window, pid)
        finally:
            for p in players:
                await p.ws.close()


async def _measure(players: list[Player], clocks: Clocks, watchers: Watchers, spectators: int,
                   seconds: float, paced_rate: float, window: int, pid: int) -> dict[str, float]:
    movers = len(players)
    for p in players:
        await p.one_move()  # warm-up, outside the window
    await asyncio.sleep(0.3)  # let the warm-up's fan-out reach the spectators
    for p in players:
        await p.drain(0.05)
        p.acks.clear()
    clocks.rival.clear()
    player_frames = [0]
    for p in players:  # count every frame the players read in the window
        p._received = _counting(p._received, player_frames)  # type: ignore[method-assign]
    frames_before = await watchers.frames()
    cpu = CpuWindow(pid)
    split_before = _user_sys(pid)
    player_frames[0] = 0
    cpu.start()
    started = time.perf_counter()
    deadline = started + seconds
    if paced_rate:
        interval = movers / paced_rate
        counts = await asyncio.gather(*(
            p.paced(started + i * interval / movers, interval, deadline)
            for i, p in enumerate(players)))
    else:
        counts = await asyncio.gather(*(p.pipelined(deadline, window) for p in players))
    elapsed = time.perf_counter() - started
    if not paced_rate:
        await asyncio.sleep(0.3)  # saturated: spectators may lag; count what arrived
    cpu.stop()
    user, sys_ = (after - before for after, before in zip(_user_sys(pid), split_before,
                                                           strict=True))
    players_got = player_frames[0]
    frames = await watchers.frames() - frames_before
    moves = sum(counts)
    acks = [a for p in players for a in p.acks]
    return {
        "moves_per_s": moves / elapsed,
        "ack_p50_ms": median(acks) * 1e3,
        "ack_p99_ms": percentile(acks, 0.99) * 1e3,
        "rival_p99_ms": percentile(clocks.rival, 0.99) * 1e3,
        "frames_per_move_spectator": frames / (moves * spectators) if moves else float("nan"),
        "cpu_us_per_frame": cpu.us_per(frames),
        "cpu_us_per_delivery": cpu.us_per(moves * spectators),
        "cpu_us_per_move": cpu.us_per(moves),
        "cpu_user_us_per_frame": user * 1e6 / frames if frames else float("nan"),
        "cpu_sys_us_per_frame": sys_ * 1e6 / frames if frames else float("nan"),
        "cpu_us_per_any_frame": cpu.us_per(frames + players_got),
        "player_frames_per_move": players_got / moves if moves else float("nan"),
    }


def _counting(received: Callable[[bytes], bool], count: list[int]) -> Callable[[bytes], bool]:
    """``received`` counting its calls in ``count[0]`` (frames a player read)."""
    def counted(frame: bytes) -> bool:
        count[0] += 1
        return received(frame)
    return counted


def _user_sys(pid: int) -> tuple[float, float]:
    """(utime, stime) of ``pid`` so far, in seconds (``/proc/PID/stat``)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        text = f.read()
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[11]) / TICKS, int(fields[12]) / TICKS
