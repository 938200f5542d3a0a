"""A spectated room's movers in processes of their own: the probe pair, and the load.

The fan-out rows used to run all 16 movers as full ``websockets`` players in the
benchmark's own process, and timed acks and rivals' ``Progress`` there; at thousands of
moves a second that process decodes ~16 frames per move in Python and its own queue
becomes part of every figure (and on 2 cores it shares a core with the server and the
spectators' reader). Here the movers are split the way players are in the real world:

- ``--kind probe``: the **probe pair**, two full ``websockets`` players (``bench/players.py``:
  they decode every frame, as a real client does), alone in this process, optionally at a
  raised priority (``--nice -5``, or ``--fifo``: real-time, root only) and pinned
  (``--cpus``): a player on a machine of its own. They time their own acks and every
  rival's ``Progress`` they read.
- ``--kind raw``: the **load**, the other movers as ``bench/rawws.py`` clients: moves are
  encoded and written straight to the transport; what comes back is not decoded, an ack
  is recognised by its tag bytes, so the load costs little and is rarely the limit.

Moves are timed with ``time.monotonic()`` (CLOCK_MONOTONIC, one clock for the whole
machine), so a rival in the probe process times a move sent by the load process: each
process reports the (seat, seq, send time) of its moves and the parent joins them with
the probe's (seat, moves, receive time) of each ``Progress``.

    python -m bench.movers --kind raw|probe --url URL [--solrace] --count N
        [--first-seat S] [--code CODE] [--nice N] [--fifo] [--cpus 0,1]

connects and seats ``count`` movers (on solrace the first ``raw`` mover creates the room
when no ``--code`` is given; on the bare baselines seats go in join order, so the parent
starts the load first and gives the probe ``--first-seat``), prints ``joined CODE`` and
then answers stdin lines, one reply line each:

- ``ready`` → sends ``Ready`` and waits for ``Started`` (solrace), picks the move cycle on
  the deal: ``started`` or ``nocycle`` (the deal has no reversible pair: a new room);
- ``warm`` → one move per mover, its ack awaited (outside any window): ``warm``;
- ``run FIRST INTERVAL DEADLINE SLOT SLOTS WINDOW`` → paced when ``INTERVAL`` > 0 (mover
  ``i`` of this process is the room's mover ``SLOT + i`` of ``SLOTS``: it sends at
  ``FIRST + (SLOT + i) * INTERVAL / SLOTS``, then every ``INTERVAL`` until ``DEADLINE``,
  monotonic seconds), else saturated (``WINDOW`` moves in flight per mover until
  ``DEADLINE``); replies one JSON line: moves acked, frames read, the end time, acks
  (probe: every ack's seconds; raw: every ack's too, for the load's own p99), the moves
  sent (seat, seq, time) and the probe's ``Progress`` receipts (seat, moves, time);
- ``quit`` or end of input → closes and exits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from protocol import PROTOCOL_VERSION, decode_server, encode
from protocol import messages as m

from .players import (
    BASELINE_ROOM,
    VARIANT,
    Clocks,
    Player,
    cycle_of,
    find_cycle,
)
from .rawws import RawClient, client_frame

ACK_TAG = b"\xa1t\xa1A"  # an ``Accepted``'s first key and tag, right after its map header
DRAIN_S = 5.0  # after the window: moves still in flight get this long to be acknowledged
FIFO_PRIORITY = 1  # ``--fifo``: the lowest real-time priority (above every normal task)
RESULT_LIMIT = 1 << 27  # bytes of one reply line the parent accepts (send logs: ~30 B/move)


class RawMover(RawClient):
    """A seated player on raw frames: writes moves, recognises its acks by their tag."""

    def __init__(self, nonce: int) -> None:
        super().__init__(nonce)
        self.seat = 0
        self.code = ""
        self.cycle: tuple[str, str] = ("", "")
        self.seq = 0
        self.sent: deque[float] = deque()  # send times of moves not acknowledged yet
        self.acks: list[float] = []  # seconds, send -> ack
        self.log: list[tuple[int, int, float]] = []  # (seat, seq, send time) of each move
        self.started: asyncio.Future[m.Started] | None = None
        self.idle = asyncio.Event()  # set whenever no move is in flight
        self.idle.set()
        self.window = 0  # saturated: moves kept in flight; 0: paced (no refill on ack)
        self.deadline = 0.0
        self.on_frame = self._frame

    def _setup_reply(self, payload: bytes) -> bool:
        message = decode_server(payload)
        if isinstance(message, m.Joined):
            self.code, self.seat = message.code, message.seat
        return super()._setup_reply(payload)

    def _frame(self, buf: bytearray, start: int, end: int) -> None:
        if buf[start + 1:start + 5] == ACK_TAG:
            now = time.monotonic()
            if self.sent:
                self.acks.append(now - self.sent.popleft())
            if self.window and now < self.deadline:
                self.move()
            elif not self.sent:
                self.idle.set()
        elif self.started is not None and not self.started.done():
            message = decode_server(bytes(buf[start:end]))
            if isinstance(message, m.Started):
                self.started.set_result(message)
            elif isinstance(message, m.Error | m.Rejected | m.Closing):
                self.started.set_exception(RuntimeError(f"bench mover got {message}"))

    def move(self) -> None:
        """Write the next move of the cycle; its send time is kept for its ack."""
        self.seq += 1
        frame = client_frame(encode(m.Move(seq=self.seq, move=self.cycle[(self.seq - 1) % 2])))
        now = time.monotonic()
        self.sent.append(now)
        self.log.append((self.seat, self.seq, now))
        self.idle.clear()
        self._send(frame)

    def send(self, message: Any) -> None:
        """Write one client message."""
        self._send(client_frame(encode(message)))


class Movers:
    """This process's movers, of either kind, and the commands the parent sends."""

    def __init__(self, kind: str, solrace: bool, room_size: int = 16) -> None:
        self.kind = kind
        self.solrace = solrace
        self.room_size = room_size
        self.raw: list[RawMover] = []
        self.players: list[Player] = []
        self.clocks = Clocks(receipts=[])
        self.frames = [0]  # frames the probe's players read

    async def join(self, url: str, count: int, first_seat: int, code: str) -> str:
        """Seat ``count`` movers (see the module docstring); the room's code."""
        port = int(url.rsplit(":", 1)[1])
        for i in range(count):
            if self.kind == "raw":
                mover = await self._raw_join(port, i, code, first_seat)
                code = mover.code or code
            else:
                player = Player(await Player.connect(url), ("", ""), self.clocks)
                self.players.append(player)
                if self.solrace:
                    await player.hello()
                    await player.ws.send(encode(m.Join(code=code, role="player")))
                    player.seat = (await player.until(m.Joined)).seat
                else:
                    player.seat = first_seat + i
                    await player.ws.send(encode(m.Join(code=BASELINE_ROOM, role="player")))
                    await player.ws.send(encode(m.Ping(nonce=i + 1)))
                    await player.until(m.Pong)
                player._received = _counting(player._received, self.frames)  # type: ignore[method-assign]
        return code or BASELINE_ROOM

    async def _raw_join(self, port: int, i: int, code: str, first_seat: int) -> RawMover:
        setup: list[bytes] = []
        if self.solrace:
            setup.append(encode(m.Hello(version=PROTOCOL_VERSION, name=f"load{i + 1}",
                                        bot=True)))
            if not code:
                setup.append(encode(m.CreateRoom(settings=m.RoomSettings(
                    variant=VARIANT, countdown_s=0, spectators=True, public=False,
                    max_players=self.room_size))))
            else:
                setup.append(encode(m.Join(code=code, role="player")))
        else:
            setup.append(encode(m.Join(code=BASELINE_ROOM, role="player")))
        mover = await RawMover.open(port, setup, nonce=i + 1)
        assert isinstance(mover, RawMover)
        if not self.solrace:
            mover.seat = first_seat + i
        self.raw.append(mover)
        return mover

    async def ready(self) -> str:
        """``Ready`` then ``Started`` (solrace); the move cycle chosen: ``started`` or
        ``nocycle``."""
        if not self.solrace:
            cycle = find_cycle()
            for mover in self.raw:
                mover.cycle = cycle
            for player in self.players:
                player.cycle = cycle
            return "started"
        loop = asyncio.get_running_loop()
        for mover in self.raw:
            mover.started = loop.create_future()
            mover.send(m.Ready())
        for player in self.players:
            await player.ws.send(encode(m.Ready()))
        started = [await asyncio.wait_for(mover.started, 60) for mover in self.raw
                   if mover.started is not None]
        started += [await player.until(m.Started) for player in self.players]
        pair = cycle_of(started[0])
        if pair is None:
            return "nocycle"
        for mover in self.raw:
            mover.cycle = pair
        for player in self.players:
            player.cycle = pair
        return "started"

    async def warm(self) -> str:
        """One move per mover, acknowledged, then what it sent forgotten."""
        for mover in self.raw:
            mover.move()
            await asyncio.wait_for(mover.idle.wait(), 30)
        for player in self.players:
            await player.one_move()
        await asyncio.sleep(0.3)  # the warm-up's fan-out reaches the players
        for player in self.players:
            await player.drain(0.05)
        for mover in self.raw:
            mover.acks.clear()
            mover.log.clear()
        for player in self.players:
            player.acks.clear()
        self.clocks.sent.clear()
        assert self.clocks.receipts is not None
        self.clocks.receipts.clear()
        self.frames[0] = 0
        for mover in self.raw:
            mover.frames = 0
        return "warm"

    async def run(self, first: float, interval: float, deadline: float, slot: int,
                  slots: int, window: int) -> dict[str, Any]:
        """One measured window (see the module docstring); its figures."""
        if interval:
            count = await self._paced(first, interval, deadline, slot, slots)
        else:
            count = await self._saturated(first, deadline, window)
        end = time.monotonic()
        acks = [a for mv in self.raw for a in mv.acks] + [a for p in self.players for a in p.acks]
        sent = [e for mv in self.raw for e in mv.log]
        sent += [(seat, seq, t) for (seat, seq), t in self.clocks.sent.items()]
        return {"moves": count, "end": end, "acks": acks, "sent": sent,
                "receipts": self.clocks.receipts,
                "frames": self.frames[0] + sum(mv.frames for mv in self.raw),
                "nice": os.nice(0), "fifo": os.sched_getscheduler(0) == os.SCHED_FIFO}

    async def _paced(self, first: float, interval: float, deadline: float, slot: int,
                     slots: int) -> int:
        movers = len(self.raw) + len(self.players)
        starts = [first + (slot + i) * interval / slots for i in range(movers)]
        if self.players:
            counts = await asyncio.gather(*(
                p.paced(starts[i], interval, deadline) for i, p in enumerate(self.players)))
            return sum(counts)

        async def paced(mover: RawMover, due: float) -> int:
            sent = 0
            while due < deadline:
                if (wait := due - time.monotonic()) > 0:
                    await asyncio.sleep(wait)
                mover.move()
                sent += 1
                due += interval
            await asyncio.wait_for(mover.idle.wait(), DRAIN_S)
            return sent

        return sum(await asyncio.gather(*(paced(mv, starts[i])
                                          for i, mv in enumerate(self.raw))))

    async def _saturated(self, first: float, deadline: float, window: int) -> int:
        if (wait := first - time.monotonic()) > 0:
            await asyncio.sleep(wait)
        if self.players:
            return sum(await asyncio.gather(*(p.pipelined(deadline, window)
                                              for p in self.players)))
        for mover in self.raw:
            mover.window, mover.deadline = window, deadline
            for _ in range(window):
                mover.move()
        for mover in self.raw:
            await asyncio.wait_for(mover.idle.wait(), deadline - time.monotonic() + DRAIN_S)
            mover.window = 0
        return sum(len(mv.acks) for mv in self.raw)

    def close(self) -> None:
        """Drop every connection."""
        for mover in self.raw:
            mover.close()


def _counting(received: Any, count: list[int]) -> Any:
    def counted(frame: bytes) -> bool:
        count[0] += 1
        return bool(received(frame))
    return counted


async def serve(args: argparse.Namespace) -> None:
    """Seat the movers, then answer the parent's lines (module docstring)."""
    movers = Movers(args.kind, args.solrace, args.room_size)
    code = await movers.join(args.url, args.count, args.first_seat, args.code)
    print(f"joined {code}", flush=True)
    loop = asyncio.get_running_loop()
    try:
        while True:
            words = (await loop.run_in_executor(None, sys.stdin.readline)).split()
            if not words or words[0] == "quit":
                return
            if words[0] == "ready":
                print(await movers.ready(), flush=True)
            elif words[0] == "warm":
                print(await movers.warm(), flush=True)
            elif words[0] == "run":
                first, interval, deadline = (float(w) for w in words[1:4])
                slot, slots, window = (int(w) for w in words[4:7])
                result = await movers.run(first, interval, deadline, slot, slots, window)
                print(json.dumps(result), flush=True)
            else:
                print(f"error unknown command {words[0]!r}", flush=True)
    finally:
        for player in movers.players:
            await player.ws.close()
        movers.close()


class MoverProcess:
    """The parent's handle on a ``bench.movers`` process (started by ``start``, stopped
    by ``stop``: by its own handle, never by name)."""

    def __init__(self, kind: str, url: str, solrace: bool, count: int, first_seat: int = 1,
                 code: str = "", room_size: int = 16, nice: int = 0, cpus: str = "",
                 fifo: bool = False) -> None:
        self.argv = ["--kind", kind, "--url", url, "--count", str(count),
                     "--first-seat", str(first_seat), "--room-size", str(room_size)]
        if solrace:
            self.argv.append("--solrace")
        if code:
            self.argv += ["--code", code]
        if nice:
            self.argv += ["--nice", str(nice)]
        if cpus:
            self.argv += ["--cpus", cpus]
        if fifo:
            self.argv.append("--fifo")
        self.proc: asyncio.subprocess.Process | None = None

    @property
    def pid(self) -> int:
        """The process id (its CPU is read from /proc)."""
        assert self.proc is not None
        return self.proc.pid

    async def start(self) -> str:
        """Start it; once every mover is seated, the room's code."""
        from .servers import ROOT

        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bench.movers", *self.argv, cwd=ROOT,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=RESULT_LIMIT)
        line = await self.line(120.0)
        if not line.startswith("joined "):
            raise RuntimeError(f"movers did not join: {line!r}")
        return line.split()[1]

    async def line(self, within_s: float) -> str:
        """The next reply line."""
        assert self.proc is not None and self.proc.stdout is not None
        text = (await asyncio.wait_for(self.proc.stdout.readline(), within_s)).decode()
        if not text:
            raise RuntimeError(f"bench.movers {' '.join(self.argv)} exited")
        return text.strip()

    async def ask(self, command: str, within_s: float = 60.0) -> str:
        """Send one command line; its reply line."""
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(command.encode() + b"\n")
        await self.proc.stdin.drain()
        return await self.line(within_s)

    async def stop(self) -> None:
        """``quit``, then wait (killed by its handle if it does not exit in time)."""
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return
        assert proc.stdin is not None
        try:
            proc.stdin.write(b"quit\n")
            proc.stdin.close()
            await asyncio.wait_for(proc.wait(), 30)
        except (TimeoutError, ConnectionError):
            proc.kill()
            await proc.wait()


def set_cpus(pid: int, cpus: Sequence[int]) -> None:
    """Pin every thread of ``pid`` to ``cpus``."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(ProcessLookupError):  # a thread that ended meanwhile
            os.sched_setaffinity(int(tid), set(cpus))


def main() -> None:
    """Entry point of a movers process."""
    parser = argparse.ArgumentParser(description="a spectated room's movers (bench/fanout)")
    parser.add_argument("--kind", choices=["raw", "probe"], required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--solrace", action="store_true")
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--first-seat", type=int, default=1)
    parser.add_argument("--code", default="")
    parser.add_argument("--room-size", type=int, default=16,
                        help="solrace: the room's seats (the creator sets it)")
    parser.add_argument("--nice", type=int, default=0,
                        help="niceness added to this process (negative: root only)")
    parser.add_argument("--cpus", default="", help="comma-separated CPUs to run on")
    parser.add_argument("--fifo", action="store_true",
                        help="run under SCHED_FIFO (root only): woken, it runs at once")
    args = parser.parse_args()
    if args.fifo:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(FIFO_PRIORITY))
        except PermissionError:
            print("bench.movers: cannot use SCHED_FIFO (not root)", file=sys.stderr)
    if args.nice:
        try:
            os.nice(args.nice)
        except PermissionError:
            print(f"bench.movers: cannot change niceness by {args.nice} (not root)",
                  file=sys.stderr)
    if args.cpus:
        set_cpus(os.getpid(), [int(c) for c in args.cpus.split(",")])
    try:
        import uvloop
    except ImportError:
        asyncio.run(serve(args))
    else:
        uvloop.run(serve(args))


if __name__ == "__main__":
    main()
