"""Hostile-frame fuzzer: random bytes, byte-mutated valid frames, structure-mutated
MessagePack maps (wrong types, huge and negative numbers, floats, bin and ext values,
unknown and missing keys, deep nesting), text frames and oversized frames, sent by a
player racing in its own room.

Counted: crashes (the server process exits), ``internal`` errors, and state changes from
rejected input. After every batch a probe move with an impossible sequence number gets
``R{out_of_order, e}``: ``e - 1`` must equal the moves the server acknowledged with an
``A`` (a frame that was rejected must not have changed the log). Frames the reference
decoder accepts as ``ready``/``start``/``resign``/``leave``, and hellos of another
protocol version (answered and closed, as specified), are not sent: they are valid input
whose effect is meant to change the room or end the connection.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgpack
from websockets.exceptions import ConnectionClosed

from bench.attack.harness import Client, Ctx
from protocol import DecodeError, decode_client, decode_server
from protocol import messages as m

# The fuzzer's own bursts are far above a human's 10 messages/s.
SERVER_ARGS = ["--rate", "1000000", "--burst", "1000000"]
PROBE_SEQ = 1_000_000  # MAX_SEQ: never the next move of a real race
STATE_CHANGING = (m.Ready, m.StartNow, m.Resign, m.Leave)

TEMPLATES: list[dict[str, Any]] = [
    {"t": "hello", "v": 1, "n": "Ann", "c": "fuzz/1"},
    {"t": "hello", "v": 1, "n": "Ann", "k": "QX7KDP.2.9rT0cM2bWq3kXn8ZsYv4Lh1AeUo6GfJd", "s": 4},
    {"t": "create", "r": {"v": "brisbane", "tl": 600, "o": {"empty_pile": "king"}}, "p": True},
    {"t": "join", "c": "QX7KDP", "r": "spectator"},
    {"t": "list"},
    {"t": "M", "s": 1, "m": "7:4>2"},
    {"t": "M", "s": 2, "m": "3>f"},
    {"t": "M", "s": 1, "m": "fH>4"},
    {"t": "M", "s": 3, "m": "redeal"},
    {"t": "hint"},
    {"t": "ping", "x": 7},
    {"t": "ready", "r": True},
    {"t": "start"},
    {"t": "resign"},
    {"t": "leave"},
]


def _weird(rng: random.Random, depth: int = 0) -> Any:
    """A hostile value of a random MessagePack type."""
    choice = rng.randrange(16)
    if choice == 0:
        return rng.choice([0, -1, 1, 2**31, -(2**31) - 1, 2**32, 2**63 - 1, -(2**63),
                           2**64 - 1, 1_000_001, 4_294_967_296])
    if choice == 1:
        return rng.choice([0.0, -0.0, 1.5, float("nan"), float("inf"), -float("inf"), 1e308])
    if choice == 2:
        return rng.choice([True, False, None])
    if choice == 3:
        return "".join(chr(rng.randrange(0x20, 0x7F)) for _ in range(rng.randrange(40)))
    if choice == 4:
        return rng.choice(["", " ", "\x00", "\u202e", "\ufeff", "é" * 33, "A" * 5000,
                           "7:4>2", "1>f", "redeal", "fS>1", "99>1", "1:0>2", "1:99>2",
                           "spectator", "player", "brisbane", "time", "progress"])
    if choice == 5:
        return rng.randbytes(rng.randrange(20))
    if choice == 6:
        if rng.random() < 0.3:
            return msgpack.Timestamp(rng.randrange(2**34), rng.randrange(10**9))
        return msgpack.ExtType(rng.randrange(128), rng.randbytes(rng.randrange(9)))
    if choice == 7 and depth < 4:
        return [_weird(rng, depth + 1) for _ in range(rng.randrange(5))]
    if choice == 8 and depth < 4:
        return {rng.choice(["v", "o", "x", "", "é", "t", "zz"]): _weird(rng, depth + 1)
                for _ in range(rng.randrange(4))}
    if choice == 9:
        deep: Any = 1
        for _ in range(rng.choice([8, 50, 200, 2000])):
            deep = [deep]
        return deep
    if choice == 10:
        return [1, "X" * 3]
    return rng.randrange(-5, 70)


def _mutate_map(rng: random.Random, frame: dict[str, Any]) -> Any:
    """A few structural mutations of a template map."""
    frame = {k: (dict(v) if isinstance(v, dict) else v) for k, v in frame.items()}
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(8)
        keys = list(frame)
        if op == 0 and keys:
            frame[rng.choice(keys)] = _weird(rng)
        elif op == 1 and keys:
            del frame[rng.choice(keys)]
        elif op == 2:
            frame[rng.choice(["zz", "t2", "", "s", "m", "r", "x" * 40])] = _weird(rng)
        elif op == 3:
            frame["t"] = rng.choice([*(t["t"] for t in TEMPLATES), "A", "err", "", "M ",
                                     "joined", 1, None])
        elif op == 4 and isinstance(frame.get("r"), dict):
            inner = frame["r"]
            inner[rng.choice([*inner, "o", "m", "tl", "sd", "cd", "d", "q"])] = _weird(rng)
        elif op == 5:
            return [frame]  # not a map
        elif op == 6:
            key = rng.choice([1, -7, 2.5, None, True, b"t", (1, 2)])  # non-string keys
            return {key: "x", **frame}
        else:
            frame["s"] = rng.choice([0, -1, 1, 2, 999_999, 1_000_000, 1_000_001, 2**40])
    return frame


def _pack(obj: Any) -> bytes | None:
    try:
        return msgpack.packb(obj, use_bin_type=True)  # type: ignore[no-any-return]
    except (ValueError, OverflowError, TypeError):
        return None


def _mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(5)
        if op == 0 and buf:
            i = rng.randrange(len(buf))
            buf[i] ^= 1 << rng.randrange(8)
        elif op == 1:
            i = rng.randrange(len(buf) + 1)
            buf[i:i] = rng.randbytes(rng.randint(1, 8))
        elif op == 2 and buf:
            i = rng.randrange(len(buf))
            del buf[i:i + rng.randint(1, 8)]
        elif op == 3 and buf:
            del buf[rng.randrange(len(buf)):]
        else:
            buf += bytes(buf[:rng.randint(1, 10)])  # trailing bytes
    return bytes(buf)


def hostile_frame(rng: random.Random) -> bytes | str:
    """One hostile frame (bytes; a ``str`` goes as a text frame)."""
    r = rng.random()
    template = rng.choice(TEMPLATES)
    if r < 0.15:
        return rng.randbytes(rng.randrange(1, 300))
    if r < 0.45:
        return _mutate_bytes(rng, _pack(template) or b"\x80")
    if r < 0.90:
        return _pack(_mutate_map(rng, template)) or rng.randbytes(20)
    if r < 0.93:
        return rng.choice(['{"t":"list"}', "hello", "", "\x00" * 10])
    if r < 0.95:
        return _pack({"t": "list", "z": "x" * rng.randint(4097, 60_000)}) or b""
    return _pack({"t": "M", "s": rng.randint(0, 5), "m": rng.choice(
        ["1>2", "2>1", "7>f", "1:2>3", "fS>1", "redeal", "13>1"])}) or b""


@dataclass
class FuzzStats:
    """The fuzzer's counters."""

    frames: int = 0
    skipped_valid: int = 0
    accepted_moves: int = 0
    crashes: int = 0
    internal: int = 0
    state_changes: int = 0
    contexts: int = 0  # rooms the fuzzer raced in (a new one after a close or a finish)
    replies: Counter[str] = field(default_factory=Counter)
    closes: Counter[str] = field(default_factory=Counter)
    elapsed_s: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready counters."""
        return {"frames": self.frames, "frames_per_s": round(self.frames / self.elapsed_s)
                if self.elapsed_s else None, "crashes": self.crashes,
                "internal": self.internal, "state_changes_from_rejected": self.state_changes,
                "accepted_moves": self.accepted_moves, "skipped_valid": self.skipped_valid,
                "contexts": self.contexts, "closes": dict(self.closes),
                "replies": dict(self.replies.most_common(12))}


class Fuzzer:
    """Sends hostile frames in batches from a racing seat and checks after each batch."""

    def __init__(self, url: str, seed: int, batch: int, alive: Callable[[], bool]) -> None:
        self.url, self.rng, self.batch, self.alive = url, random.Random(seed), batch, alive
        self.stats = FuzzStats()
        self.client: Client | None = None
        self.acked = 0
        self.nonce = 0

    async def _context(self) -> Client:
        """A fresh connection racing alone in a fresh room."""
        if self.client is not None:
            await self.client.close()
        client = await Client.open(self.url, "fuzz")
        await client.create(variant="brisbane", countdown_s=0, public=False, max_players=1)
        await client.send(m.Ready())
        await client.expect(m.Started)
        client.inbox.clear()
        self.client, self.acked = client, 0
        self.stats.contexts += 1
        return client

    def _next_frame(self) -> bytes | str | None:
        frame = hostile_frame(self.rng)
        if isinstance(frame, bytes):
            try:
                if isinstance(decode_client(frame, max_frame=1 << 20), STATE_CHANGING):
                    self.stats.skipped_valid += 1
                    return None
            except DecodeError as exc:
                # A hello of another version is answered and closed, as specified: each
                # one would leave a room behind (its race abandoned 5 minutes later), so a
                # long run would measure abandoned races, not hostile frames.
                if exc.code == "version_mismatch":
                    self.stats.skipped_valid += 1
                    return None
        return frame

    async def _batch(self, client: Client, count: int) -> bool:
        """Send ``count`` frames and the probe; False when the context is gone."""
        sent = 0
        while sent < count:
            frame = self._next_frame()
            if frame is None:
                continue
            await client.ws.send(frame)
            sent += 1
        self.stats.frames += sent
        self.nonce = (self.nonce + 1) % 2**32
        await client.send(m.Move(seq=PROBE_SEQ, move="1>2"))
        await client.send(m.Ping(nonce=self.nonce))
        while True:
            reply = decode_server(await asyncio.wait_for(client.ws.recv(), 30))
            kind = type(reply).__name__
            if isinstance(reply, m.Error):
                self.stats.replies[f"err:{reply.code}"] += 1
                self.stats.internal += reply.code == "internal"
            elif isinstance(reply, m.Rejected):
                if reply.seq == PROBE_SEQ and reply.code == "out_of_order":
                    if reply.expected != self.acked + 1:
                        self.stats.state_changes += 1
                        self.acked = reply.expected - 1
                else:
                    self.stats.replies[f"R:{reply.code}"] += 1
            elif isinstance(reply, m.Accepted):
                self.acked = reply.seq
                self.stats.accepted_moves += 1
            elif isinstance(reply, m.Pong) and reply.nonce == self.nonce:
                return True
            elif isinstance(reply, m.Results | m.Joined | m.Closing):
                self.stats.replies[kind] += 1
                if isinstance(reply, m.Closing):
                    self.stats.closes[reply.code] += 1
                return False  # the race ended (a fuzzed move got the seat stuck) or a close
            else:
                self.stats.replies[kind] += 1

    async def run(self, frames: int, seconds: float) -> FuzzStats:
        """Fuzz until ``frames`` were sent or ``seconds`` passed, or the server died."""
        t0 = time.monotonic()
        client = await self._context()
        while self.stats.frames < frames and time.monotonic() - t0 < seconds:
            try:
                ok = await self._batch(client, min(self.batch, frames - self.stats.frames))
            except ConnectionClosed as exc:
                self.stats.closes[f"ws:{exc.rcvd.code if exc.rcvd else 'none'}"] += 1
                ok = False
            except TimeoutError:
                self.stats.closes["timeout"] += 1
                ok = False
            if not self.alive():
                self.stats.crashes += 1
                break
            if not ok:
                client = await self._context()
        self.stats.elapsed_s = time.monotonic() - t0
        if self.client is not None:
            await self.client.close()
        return self.stats


def add_args(group: argparse._ArgumentGroup) -> None:
    """This attack's options."""
    group.add_argument("--frames", type=int, default=20_000, help="hostile frames to send")
    group.add_argument("--fuzz-seed", type=int, default=1)
    group.add_argument("--fuzz-batch", type=int, default=50, help="frames between checks")
    group.add_argument("--fuzz-max-s", type=float, default=7200.0, help="most seconds")


async def attack(ctx: Ctx, seconds: float) -> dict[str, Any]:
    """Run the fuzzer (bounded by ``--frames`` and ``--fuzz-max-s``, not ``seconds``)."""
    fuzzer = Fuzzer(ctx.url, ctx.args.fuzz_seed, ctx.args.fuzz_batch, ctx.server.alive)
    stats = await fuzzer.run(ctx.args.frames, ctx.args.fuzz_max_s)
    return stats.as_dict()
