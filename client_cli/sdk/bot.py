"""The bot SDK: subclass ``Bot``, implement ``choose_move``, hand it to ``run_bot``.

    from client_cli.sdk import Bot, run_bot_sync

    class FoundationFirst(Bot):
        def choose_move(self, view, legal_moves):
            to_foundation = [m for m in legal_moves if m.endswith(">f")]
            return (to_foundation or legal_moves)[0]

    run_bot_sync("ws://127.0.0.1:8765", "ABCD", FoundationFirst(), name="ff")

``run_bot`` connects (saying ``bot=True`` in hello: bots always do), joins the room,
says ready, waits for the start, then asks the bot for a move whenever it is its turn to
think, until its race is over; it returns the results. The view a bot gets is masked
(face-down cards are counts) and ``legal_moves`` are exact (``engine.game_from_view``).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from dataclasses import dataclass, field
from typing import Any

from protocol import Code
from protocol import messages as M

from .client import RaceClient
from .errors import MoveRejected, RaceError

_OVER = {"won", "stuck", "resigned", "timeout"}


class Bot:
    """Base class of bots. Override ``choose_move``; the other hooks are optional.

    ``name`` is the default player name. ``blocking = True`` runs ``choose_move`` in a
    worker thread (for slow strategies, so the connection keeps being served)."""

    name: str = "bot"
    blocking: bool = False

    def choose_move(self, view: dict[str, Any], legal_moves: list[str]) -> str | None:
        """Return one of ``legal_moves`` (canonical notation, e.g. ``"3>7"``, ``"5>f"``),
        or None to resign. ``view`` is your board (a copy: change it freely) in the
        RULES.md layout format with face-down cards as counts. Never called with an
        empty ``legal_moves``."""
        raise NotImplementedError("a Bot must implement choose_move(view, legal_moves)")

    def on_start(self, room: Any) -> None:
        """Called once when the race starts (``room`` is the client's ``RoomState``)."""

    def on_rejected(self, move: str, error: MoveRejected) -> None:
        """Called when the server refused ``move`` (rare: the moves offered are legal)."""


@dataclass
class BotOutcome:
    """How a bot's race went: its seat, final status and progress, the moves it played
    and had refused, and the room's ``Results`` (None if the race did not end in time)."""

    seat: int
    status: str
    progress: int
    moves: int
    rejected: int
    results: M.Results | None = None
    latencies_s: list[float] = field(default_factory=list)


async def play_bot(
    client: RaceClient,
    bot: Bot,
    *,
    max_moves: int = 3000,
    think_s: float = 0.0,
    results_timeout: float | None = 120.0,
    record_latency: bool = False,
) -> BotOutcome:
    """Play ``bot`` on the client's seat (already joined and ready) until its race is
    over, then wait up to ``results_timeout`` for the room's results. Resigns after
    ``max_moves`` moves or 20 refusals in a row (a bot must not loop forever).
    ``think_s`` pauses between moves (so people can follow a demo)."""
    loop = asyncio.get_running_loop()
    room = await client.wait_for(
        lambda r: (
            r.results is not None or (r.phase in ("running", "finished") and r.my_board is not None)
        )
    )
    bot.on_start(room)
    played = refused = refused_in_a_row = 0
    latencies: list[float] = []
    while room.results is None:
        me, board = room.me, room.my_board
        if me is None or board is None or me.status in _OVER:
            break
        if board.desynced:
            await client.wait_for(lambda r: r.my_board is not None and not r.my_board.desynced)
            continue
        legal = board.legal_moves()
        if not legal:
            break  # won or stuck: the server ends this seat's race by itself
        if played >= max_moves or refused_in_a_row >= 20:
            await client.resign()
            break
        view = copy.deepcopy(board.view)
        if bot.blocking:
            choice = await asyncio.to_thread(bot.choose_move, view, legal)
        else:
            choice = bot.choose_move(view, legal)
        if choice is None:
            await client.resign()
            break
        t0 = loop.time()
        try:
            await client.move(choice)
        except MoveRejected as exc:
            refused += 1
            refused_in_a_row += 1
            bot.on_rejected(choice, exc)
            if exc.code in (Code.FINISHED, Code.NOT_RUNNING):
                break
            continue
        if record_latency:
            latencies.append(loop.time() - t0)
        played += 1
        refused_in_a_row = 0
        if think_s > 0:
            await asyncio.sleep(think_s)  # pacing for people watching, not synchronisation
    if results_timeout is None or results_timeout > 0:
        with contextlib.suppress(TimeoutError):
            await client.wait_for(lambda r: r.results is not None, results_timeout)
    me = room.me
    board = room.my_board
    status = me.status if me else "unknown"
    if room.results is not None:
        status = next((r.status for r in room.results.ranking if r.seat == room.seat), status)
    return BotOutcome(
        seat=room.seat,
        status=status,
        progress=board.progress if board else 0,
        moves=played,
        rejected=refused,
        results=room.results,
        latencies_s=latencies,
    )


async def run_bot(
    url: str,
    code: str,
    bot: Bot,
    name: str | None = None,
    *,
    max_moves: int = 3000,
    think_s: float = 0.0,
    results_timeout: float | None = 120.0,
) -> BotOutcome:
    """Connect to ``url`` as a bot, join room ``code``, say ready and play until the
    race is over; returns the outcome (with the room's results). Raises ``RaceError``
    if the room cannot be joined (e.g. ``no_such_room``, ``room_closed``)."""
    async with RaceClient(url, name or bot.name, bot=True) as client:
        await client.join(code, "player")
        try:
            await client.ready()
        except RaceError as exc:
            if exc.code not in (Code.NOT_RUNNING, Code.FINISHED):
                raise
        return await play_bot(
            client, bot, max_moves=max_moves, think_s=think_s, results_timeout=results_timeout
        )


def run_bot_sync(
    url: str, code: str, bot: Bot, name: str | None = None, **kwargs: Any
) -> BotOutcome:
    """``run_bot`` for scripts that are not async themselves."""
    return asyncio.run(run_bot(url, code, bot, name, **kwargs))
