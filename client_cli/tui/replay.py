"""``solrace replay``: a finished race played again in the terminal from its results file,
every board side by side (two abreast, scrolling), at a speed you choose.

Keys: space pauses, ``+``/``-`` double or halve the speed, ``n`` plays the next move
(paused), ``e`` jumps to the end, ``r`` restarts, ``?`` the variant's rules, ``q`` quits.
The replay's clock is injected (``clock``), so tests drive it without waiting.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from client_cli.replay import Replay
from protocol import messages as M

from .base import RaceApp
from .common import variant_title
from .help import RulesScreen
from .render import clock_text
from .watch import COLUMN, side_by_side, titled_board

CSS = """
Screen { layout: vertical; }
#header { height: 1; }
#scroll { height: 1fr; }
#boards { padding: 0 0 0 1; }
#msg { height: 1; padding: 0 1; }
#keys { height: 1; color: $text-muted; padding: 0 1; }
"""
KEYS = "space pause · +/- speed · n next move · e end · r restart · ? rules · q quit"
MAX_SPEED = 256.0  # bounds: doubling for ever would make a float of no use
MIN_SPEED = 1 / 16


class ReplayApp(RaceApp):
    """The replay screen for ``results``, starting at ``speed`` times real time."""

    CSS = CSS
    TITLE = "solrace replay"
    AUTO_FOCUS = "#scroll"

    def __init__(
        self,
        results: M.Results,
        *,
        speed: float = 1.0,
        symbols: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.replay = Replay(results)
        self.speed = min(MAX_SPEED, max(MIN_SPEED, speed))
        self.symbols = symbols
        self.clock = clock
        self.paused = False
        self.race_ms = 0.0
        self._last = clock()
        self.message = Text("")
        self.exit_code = 0

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        with VerticalScroll(id="scroll"):
            yield Static(id="boards")
        yield Static(id="msg")
        yield Static(Text(KEYS), id="keys")

    async def on_mount(self) -> None:
        self._mounted = True
        self.set_interval(0.1, self._tick)
        self.redraw()

    def _tick_once(self) -> None:
        now = self.clock()
        elapsed, self._last = now - self._last, now
        if self.paused or self.replay.done:
            return
        self.race_ms += elapsed * 1000 * self.speed
        self.replay.advance_to(int(self.race_ms))
        self.redraw()  # the clock in the header moves even between moves

    def _redraw(self) -> None:
        if not self._mounted:
            return
        replay, results = self.replay, self.replay.results
        head = Text.assemble(
            (" solrace ", "bold reverse"),
            (f" replay {results.code} ", "bold"),
            f"{variant_title(results.variant)} · seed {results.seed}",
            (f"  ⏱ {clock_text(min(self.race_ms, replay.end_ms))}", "bold green"),
            (f" / {clock_text(replay.end_ms)}", "dim"),
            (f"  speed {self.speed:g}x", "bold"),
            ("  paused" if self.paused else "", "bold yellow"),
        )
        head.truncate(self.size.width)
        self.query_one("#header", Static).update(head)
        blocks = [
            titled_board(
                replay.status(seat),
                replay.names.get(seat, f"seat {seat}"),
                replay.games[seat].view(),
                replay.moves[seat],
                COLUMN - 1,
                self.symbols,
            )
            for seat in replay.seats
        ]
        text = Text("\n").join(side_by_side(blocks, COLUMN))
        text.no_wrap, text.overflow = True, "ellipsis"
        self.query_one("#boards", Static).update(text)
        if replay.done and not self.message.plain:
            self.say(f"end of the race ({results.reason}) — r restarts, q quits", "bold magenta")
        self.query_one("#msg", Static).update(self.message)

    async def on_key(self, event: Any) -> None:
        char = event.character or ""
        if self.screen is not self.screen_stack[0]:
            return
        if char == "q":
            self.exit(self.exit_code)
        elif char == "?":
            self.push_screen(RulesScreen(self.replay.results.variant))
        elif char == " ":
            self.paused = not self.paused
            self.say("paused — space goes on, n plays one move" if self.paused else "")
        elif char in ("+", "-"):
            factor = 2.0 if char == "+" else 0.5
            self.speed = min(MAX_SPEED, max(MIN_SPEED, self.speed * factor))
        elif char == "n":
            self.paused = True
            step = self.replay.step()
            if step is not None:
                self.race_ms = max(self.race_ms, step.clock_ms)
                who = self.replay.names.get(step.seat, f"seat {step.seat}")
                self.say(f"{who}: {step.move} at {clock_text(step.clock_ms)}")
        elif char == "e":
            self.replay.seek_end()
            self.race_ms = self.replay.end_ms
        elif char == "r":
            self.replay.reset()
            self.race_ms = 0.0
            self.say("")
        else:
            return
        self.redraw()
