"""Spectators in a process of their own, so their thousands of frames do not delay the
players' event loop (whose ack and rival timings are the measurement).

    python -m bench.watchers PORT CODE COUNT

joins COUNT ``bench/rawws.py`` spectators to room CODE on 127.0.0.1:PORT, prints
``joined``, then answers each line on stdin: ``count`` → the frames received so far by
all spectators (one integer line); ``quit`` (or end of input) → close all and exit.
"""

from __future__ import annotations

import asyncio
import sys

from protocol import PROTOCOL_VERSION, encode
from protocol import messages as m

from .rawws import RawClient, source_address

JOIN_BATCH = 100  # spectators joining at once: bounded, so set-up does not storm the server


async def watch(port: int, code: str, count: int) -> list[RawClient]:
    """``count`` spectators of room ``code``, each joined (its ``Pong`` came back)."""
    setup = [encode(m.Hello(version=PROTOCOL_VERSION, name="watcher", bot=True, batched=True)),
             encode(m.Join(code=code, role="spectator"))]
    clients: list[RawClient] = []
    for first in range(0, count, JOIN_BATCH):
        batch = range(first, min(count, first + JOIN_BATCH))
        clients += await asyncio.gather(*(
            RawClient.open(port, setup, nonce=i + 1, source=source_address(i)) for i in batch))
    return clients


async def serve(port: int, code: str, count: int) -> None:
    """Join, then answer ``count`` / ``quit`` lines from stdin."""
    clients = await watch(port, code, count)
    print("joined", flush=True)
    loop = asyncio.get_running_loop()
    try:
        while True:
            line = (await loop.run_in_executor(None, sys.stdin.readline)).strip()
            if line == "count":
                print(sum(c.frames for c in clients), flush=True)
            else:
                return
    finally:
        for c in clients:
            c.close()


class Watchers:
    """The parent's handle on a ``bench.watchers`` process."""

    def __init__(self, port: int, code: str, count: int) -> None:
        self.args = (str(port), code, str(count))
        self.proc: asyncio.subprocess.Process | None = None

    async def __aenter__(self) -> Watchers:
        from .servers import ROOT

        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bench.watchers", *self.args, cwd=ROOT,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        line = await self._line(120.0)
        if line != "joined":
            raise RuntimeError(f"spectators did not join: {line!r}")
        return self

    @property
    def pid(self) -> int:
        """The spectators' process id (its CPU is read from /proc: the load generator's)."""
        assert self.proc is not None
        return self.proc.pid

    async def _line(self, within_s: float) -> str:
        assert self.proc is not None and self.proc.stdout is not None
        return (await asyncio.wait_for(self.proc.stdout.readline(), within_s)).decode().strip()

    async def frames(self) -> int:
        """Frames all spectators received so far."""
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(b"count\n")
        await self.proc.stdin.drain()
        return int(await self._line(30.0))

    async def __aexit__(self, *exc: object) -> None:
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return
        assert proc.stdin is not None
        proc.stdin.write(b"quit\n")
        proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 30)
        except TimeoutError:
            proc.kill()  # our own child, by its handle
            await proc.wait()


def main() -> None:
    """Entry point of the spectator process."""
    port, code, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    try:
        import uvloop
    except ImportError:
        asyncio.run(serve(port, code, count))
    else:
        uvloop.run(serve(port, code, count))


if __name__ == "__main__":
    main()
