"""A room's secret deal: the seed for a new room, and for each rematch's new round."""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

from protocol import Code, ProtocolError
from protocol.messages import RoomSettings

from .room import Host


async def choose_seed(
    server: Host, settings: RoomSettings
) -> tuple[int, bool | None, int | None]:
    """A secret 64-bit seed; for ``deal=winnable`` the first seed from a secret random
    start that the solver proves winnable (with its solution length as ``par``).

    The search runs in a thread, one at a time per node (it is CPU-bound: while it runs,
    it shares the interpreter with the event loop), for at most ``solver_budget_s``."""
    source = server.config.seed_source
    seed = source() if source is not None else secrets.randbits(64)
    if settings.deal != "winnable":
        return seed, None, None
    try:
        from engine.solver import find_winnable_seed
    except ImportError:
        raise ProtocolError(Code.BAD_SETTINGS, "deal=winnable is not available yet") from None
    async with server.solver_slot:
        found = await asyncio.to_thread(
            find_winnable_seed, settings.variant, dict(settings.options), seed,
            total_seconds=server.config.solver_budget_s,
        )
    if found is None:
        raise ProtocolError(
            Code.BAD_SETTINGS, "no winnable deal found in the time allowed; try again"
        )
    winnable_seed, result = found  # (seed, SolveResult); older solvers gave the moves
    moves: Any = getattr(result, "moves", result)
    return winnable_seed, True, len(moves)
