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
import json
import os
import statistics
import time
from collections.abc import Callable

from .cpu import TICKS, CpuWindow, cpu_seconds
from .movers import MoverProcess, set_cpus
from .players import DEAL_TRIES, Clocks, Player, median, percentile, room_of_players
from .watchers import Watchers

PROBE_PLAYERS = 2  # the probe pair: each times its own acks and the other movers' moves
START_AHEAD_S = 0.2  # the run command reaches both mover processes before the window opens


def pinned_cpus() -> tuple[list[int], list[int]]:
    """With ``pin``: the server's core (the first this process may use) and the load
    generator's (the second), for every process of it."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise ValueError("pinning needs 2 CPUs: one for the server, one for the load")
    return cpus[:1], cpus[1:2]


async def spectated_room(url: str, port: int, solrace: bool, pid: int, movers: int,
                         spectators: int, seconds: float, paced_rate: float,
                         window: int = 4, players: str = "probe", probe_nice: int = 0,
                         pin: bool = False, probe_fifo: bool = False) -> dict[str, float]:
    """Run the room once (saturated when ``paced_rate`` is 0, else paced at that many
    moves/s in all) and return its figures. ``players``: ``probe`` (the probe pair in a
    process of its own at niceness ``probe_nice``, or real-time with ``probe_fifo``, the
    other movers raw in another:
    ``bench/movers.py``) or ``bench`` (every mover a full player in this process, the
    way the rows were measured before 28 Nov 2026). ``pin``: the server on CPU 0, every
    process of the load generator on CPU 1 (a server machine and a clients' machine)."""
    if players == "probe":
        return await _probe_room(url, port, solrace, pid, movers, spectators, seconds,
                                 paced_rate, window, probe_nice, pin, probe_fifo)
    if players != "bench":
        raise ValueError(f"players must be 'probe' or 'bench', not {players!r}")
    if pin:
        server_cpus, load_cpus = pinned_cpus()
        own = sorted(os.sched_getaffinity(0))
        set_cpus(pid, server_cpus)
        set_cpus(os.getpid(), load_cpus)
    clocks = Clocks()
    room, code = await room_of_players(url, movers, solrace, clocks)
    async with Watchers(port, code, spectators) as watchers:
        if pin:
            set_cpus(watchers.pid, load_cpus)
        try:
            return await _measure(room, clocks, watchers, spectators, seconds, paced_rate,
                                  window, pid)
        finally:
            for p in room:
                await p.ws.close()
            if pin:
                set_cpus(os.getpid(), own)


async def _probe_room(url: str, port: int, solrace: bool, pid: int, movers: int,
                      spectators: int, seconds: float, paced_rate: float, window: int,
                      probe_nice: int, pin: bool, probe_fifo: bool) -> dict[str, float]:
    """The room with the probe pair in a process of its own (see ``bench/movers.py``)."""
    if movers <= PROBE_PLAYERS:
        raise ValueError(f"the probe pair needs more than {PROBE_PLAYERS} movers in the room")
    cpus = ""
    if pin:
        server_cpus, load_cpus = pinned_cpus()
        cpus = ",".join(map(str, load_cpus))
        set_cpus(pid, server_cpus)
    for _ in range(DEAL_TRIES):
        load = MoverProcess("raw", url, solrace, movers - PROBE_PLAYERS, room_size=movers,
                            cpus=cpus)
        probe: MoverProcess | None = None
        try:
            code = await load.start()
            probe = MoverProcess("probe", url, solrace, PROBE_PLAYERS,
                                 first_seat=movers - PROBE_PLAYERS + 1, code=code,
                                 room_size=movers, nice=probe_nice, cpus=cpus,
                                 fifo=probe_fifo)
            await probe.start()
            if "nocycle" in await asyncio.gather(load.ask("ready"), probe.ask("ready")):
                continue  # the deal has no reversible pair: another room
            async with Watchers(port, code, spectators) as watchers:
                if pin:
                    set_cpus(watchers.pid, load_cpus)
                return await _measure_probe(load, probe, watchers, pid, movers, spectators,
                                            seconds, paced_rate, window)
        finally:
            if probe is not None:
                await probe.stop()
            await load.stop()
    raise RuntimeError(f"no reversible move pair in {DEAL_TRIES} random deals")


async def _measure_probe(load: MoverProcess, probe: MoverProcess, watchers: Watchers,
                         pid: int, movers: int, spectators: int, seconds: float,
                         paced_rate: float, window: int) -> dict[str, float]:
    for who in (load, probe):
        if await who.ask("warm") != "warm":
            raise RuntimeError("movers' warm-up failed")
    frames_before = await watchers.frames()
    procs = {"server": pid, "probe": probe.pid, "load": load.pid, "watchers": watchers.pid}
    windows = {name: CpuWindow(p) for name, p in procs.items()}
    split_before = _user_sys(pid)
    opened = time.monotonic()
    for w in windows.values():
        w.start()
    first = time.monotonic() + START_AHEAD_S
    deadline = first + seconds
    interval = movers / paced_rate if paced_rate else 0.0
    within = seconds + 60.0

    def command(slot: int) -> str:
        return f"run {first!r} {interval!r} {deadline!r} {slot} {movers} {window}"

    load_r, probe_r = (json.loads(r) for r in await asyncio.gather(
        load.ask(command(0), within), probe.ask(command(movers - PROBE_PLAYERS), within)))
    elapsed = max(load_r["end"], probe_r["end"]) - first
    if not paced_rate:
        await asyncio.sleep(0.3)  # saturated: spectators may lag; count what arrived
    for w in windows.values():
        w.stop()
    span = time.monotonic() - opened
    cpu = windows["server"]
    user, sys_ = (after - before for after, before in zip(_user_sys(pid), split_before,
                                                           strict=True))
    frames = await watchers.frames() - frames_before
    moves = load_r["moves"] + probe_r["moves"]
    players_got = load_r["frames"] + probe_r["frames"]
    rival = rival_delays(load_r["sent"] + probe_r["sent"], probe_r["receipts"])
    figures = _figures(moves, elapsed, probe_r["acks"], rival, frames, spectators, cpu,
                       user, sys_, players_got)
    figures.update({
        "load_ack_p99_ms": percentile(load_r["acks"], 0.99) * 1e3,
        "rival_samples": float(len(rival)),
        "probe_nice": float(probe_r["nice"]),
        "probe_fifo": float(probe_r["fifo"]),
        **{f"{name}_cores": w.seconds / span for name, w in windows.items()},
    })
    figures["players_cores"] = figures["probe_cores"] + figures["load_cores"]
    return figures


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
    opened = time.monotonic()
    own_before, watchers_before = cpu_seconds(os.getpid()), cpu_seconds(watchers.pid)
    cpu.start()
    started = time.monotonic()
    deadline = started + seconds
    if paced_rate:
        interval = movers / paced_rate
        counts = await asyncio.gather(*(
            p.paced(started + i * interval / movers, interval, deadline)
            for i, p in enumerate(players)))
    else:
        counts = await asyncio.gather(*(p.pipelined(deadline, window) for p in players))
    elapsed = time.monotonic() - started
    if not paced_rate:
        await asyncio.sleep(0.3)  # saturated: spectators may lag; count what arrived
    cpu.stop()
    user, sys_ = (after - before for after, before in zip(_user_sys(pid), split_before,
                                                           strict=True))
    players_got = player_frames[0]
    frames = await watchers.frames() - frames_before
    moves = sum(counts)
    acks = [a for p in players for a in p.acks]
    figures = _figures(moves, elapsed, acks, clocks.rival, frames, spectators, cpu, user,
                       sys_, players_got)
    span = time.monotonic() - opened
    figures.update({
        "rival_samples": float(len(clocks.rival)),
        "server_cores": cpu.seconds / span,
        "players_cores": (cpu_seconds(os.getpid()) - own_before) / span,
        "watchers_cores": (cpu_seconds(watchers.pid) - watchers_before) / span,
    })
    return figures


def rival_delays(sent: list[list[float]], receipts: list[list[float]]) -> list[float]:
    """Seconds from each move's send to a rival's reading its ``Progress``: ``sent`` is
    every mover process's (seat, seq, send time), ``receipts`` the probe's (seat, moves,
    receive time), all on CLOCK_MONOTONIC; a receipt of no move sent in the window (the
    warm-up's, say) is left out."""
    when = {(int(seat), int(seq)): t for seat, seq, t in sent}
    return [t - when[key] for seat, moves, t in receipts
            if (key := (int(seat), int(moves))) in when]


def _figures(moves: int, elapsed: float, acks: list[float], rival: list[float], frames: int,
             spectators: int, cpu: CpuWindow, user: float, sys_: float,
             players_got: int) -> dict[str, float]:
    """The row's figures from one window's counts (both ways of measuring alike)."""
    return {
        "moves_per_s": moves / elapsed,
        "ack_p50_ms": median(acks) * 1e3,
        "ack_p99_ms": percentile(acks, 0.99) * 1e3,
        "ack_mean_ms": statistics.fmean(acks) * 1e3 if acks else float("nan"),
        "rival_p50_ms": median(rival) * 1e3,
        "rival_p99_ms": percentile(rival, 0.99) * 1e3,
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
