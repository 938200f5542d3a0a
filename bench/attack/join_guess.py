"""Join-code guessing: connections from several addresses send ``join`` with random room
codes as fast as the rate limit allows.

Codes are drawn like the server's (10 characters of ``23456789ABCDEFGHJKMNPQRSTUVWXYZ``:
49.5 bits; 6 characters, 29.7 bits, before issue 17). Reports failed joins per second
(total and per connection), hits, and whether any guesser was ever locked out (closed,
or refused for anything but the ordinary rate limit), and after how many attempts.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import time
from collections import Counter
from typing import Any

from bench.attack.harness import Client, Ctx, source_addr
from bench.attack.room_flood import RATE_WAIT_S
from protocol import messages as m

ROUNDS = True  # the runner may alternate quiet and attack phases (--rounds)

ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
LENGTH = 10  # server/lobby.py CODE_LENGTH


def add_args(group: argparse._ArgumentGroup) -> None:
    """This attack's options."""
    group.add_argument("--guessers", type=int, default=8, help="guessing connections")
    group.add_argument("--guess-sources", type=int, default=8,
                       help="client addresses they come from")


async def attack(ctx: Ctx, seconds: float) -> dict[str, Any]:
    """Guess until ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    rng = random.Random(17)
    replies: Counter[str] = Counter()
    lockouts: list[int] = []

    async def guesser(i: int) -> None:
        attempts = 0
        client = await Client.open(ctx.url, f"g{i}",
                                   source=source_addr(i % ctx.args.guess_sources))
        while time.monotonic() < deadline:
            code = "".join(rng.choice(ALPHABET) for _ in range(LENGTH))
            attempts += 1
            try:
                await client.send(m.Join(code=code))
                reply = await client.expect(m.Joined | m.Error,
                                            wait=max(1.0, deadline - time.monotonic() + 5))
            except Exception:
                lockouts.append(attempts)  # closed on us: that is a lockout
                break
            if isinstance(reply, m.Joined):
                replies["hit"] += 1
                await client.send(m.Leave())
                continue
            replies[reply.code] += 1
            if reply.code == "rate_limited":
                attempts -= 1  # not judged: not a guess
                await asyncio.sleep(RATE_WAIT_S)
            elif reply.code not in ("no_such_room", "room_full", "room_closed"):
                lockouts.append(attempts)
                break
        await client.close()

    t0 = time.monotonic()
    await asyncio.gather(*(guesser(i) for i in range(ctx.args.guessers)))
    elapsed = time.monotonic() - t0
    failed = replies.get("no_such_room", 0)
    space = len(ALPHABET) ** LENGTH
    return {"guessers": ctx.args.guessers, "sources": ctx.args.guess_sources,
            "failed_joins": failed, "failed_per_s": round(failed / elapsed, 1),
            "failed_per_s_per_conn": round(failed / elapsed / ctx.args.guessers, 2),
            "hits": replies.get("hit", 0), "replies": dict(replies),
            "locked_out": len(lockouts), "attempts_before_lockout": lockouts[:8],
            "code_bits": round(math.log2(space), 1)}
