"""``solrace watch``: every board of a race, live and masked, with the ranking (Textual).

Boards are drawn two abreast (39 cells each); with more than two the area scrolls
(arrows, PgUp/PgDn). The demo uses this screen with its bots running beside it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from client_cli.sdk import Disconnected, RaceClient, RaceError, Reconnected, RoomState
from client_cli.sdk.verify import SeedCheck
from protocol import messages as M

from .base import RaceApp
from .common import header_text, keep_results, results_lines
from .help import RulesScreen
from .render import STATUS_MARK, board_lines, seat_line

COLUMN = 39  # two boards side by side in 80 cells, one cell between
CSS = """
Screen { layout: vertical; }
#header { height: 1; }
#seats { height: auto; max-height: 5; padding: 0 1; }
#scroll { height: 1fr; }
#boards { padding: 0 0 0 1; }
#msg { height: 1; padding: 0 1; }
#keys { height: 1; color: $text-muted; padding: 0 1; }
"""


def board_block(room: RoomState, seat_no: int, width: int, symbols: bool = True) -> list[Text]:
    """One seat's board with a title line (status, name, cards, moves), ``width`` cells."""
    seat = room.seats.get(seat_no)
    board = room.boards[seat_no]
    name = seat.name + ("*" if seat.bot else "") if seat else f"seat {seat_no}"
    status = seat.status if seat else "playing"
    note = "resyncing…" if board.desynced else ""
    return titled_board(status, name, board.view, board.seq, width, symbols, note)


def titled_board(
    status: str,
    name: str,
    view: dict[str, Any],
    moves: int,
    width: int,
    symbols: bool = True,
    note: str = "",
) -> list[Text]:
    """A board under a title line: status mark, name, cards home, moves made."""
    progress = sum(view["foundations"].values())
    title = Text(f"{STATUS_MARK.get(status, '?')} {name}", style="bold")
    title.append(f"  {progress}/52 · {moves} mv", style="dim")
    if note:
        title.append(f"  {note}", style="yellow")
    title.truncate(width)
    return [title, *board_lines(view, width, symbols=symbols)]


def side_by_side(blocks: list[list[Text]], width: int) -> list[Text]:
    """Blocks two abreast: each line of the left block padded to ``width`` + 1 cells."""
    lines: list[Text] = []
    for i in range(0, len(blocks), 2):
        left = blocks[i]
        right = blocks[i + 1] if i + 1 < len(blocks) else []
        for row in range(max(len(left), len(right))):
            line = left[row].copy() if row < len(left) else Text("")
            line.truncate(width, pad=True)
            line.append(" ")
            if row < len(right):
                line.append_text(right[row])
            lines.append(line)
        lines.append(Text(""))
    return lines


class WatchApp(RaceApp):
    """The spectator screen for room ``code``. ``background`` (optional) is a coroutine
    run alongside (the demo's bots); ``exit_after_results_s`` closes the app that long
    after the results (None: stay until q)."""

    CSS = CSS
    TITLE = "solrace watch"
    AUTO_FOCUS = "#scroll"

    def __init__(
        self,
        url: str,
        code: str,
        *,
        client: RaceClient | None = None,
        background: Callable[[], Awaitable[Any]] | None = None,
        exit_after_results_s: float | None = None,
        symbols: bool = True,
        save_results: str | None = None,
    ) -> None:
        super().__init__()
        self.url, self.code = url, code
        self.client = client or RaceClient(url, "spectator", on_event=self._on_event)
        if client is not None:
            client.on_event = self._on_event
        self.background = background
        self.exit_after_results_s = exit_after_results_s
        self.symbols = symbols
        self.save_results = save_results
        self.committed: str | None = None
        self.check: SeedCheck | None = None
        self.message = Text("connecting…", style="dim")
        self.exit_code = 1
        self._mounted = False
        self._close_at: float | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="header")
        yield Static(id="seats")
        with VerticalScroll(id="scroll"):
            yield Static(id="boards")
        yield Static(id="msg")
        yield Static(Text("↑↓ PgUp PgDn scroll · ? rules · q quit"), id="keys")

    async def on_mount(self) -> None:
        self._mounted = True
        self.set_interval(0.2, self._tick)
        self.run_worker(self._session(), name="session", exit_on_error=False)
        if self.background is not None:
            self.run_worker(self.background(), name="background", exit_on_error=False)
        self.redraw()

    async def _session(self) -> None:
        client = self.client
        try:
            if client.welcome is None:
                await client.connect()
            if client.room.code != self.code:
                await client.join(self.code, "spectator")
        except RaceError as exc:
            self.say(f"✗ {exc.message} ({exc.code})", "bold red")
            return
        self.committed = client.room.commitment
        self.say(f"watching room {self.code}", "green")
        self.redraw()
        async for _ in client.events():
            pass  # on_event redraws

    def _on_event(self, event: Any) -> None:
        if isinstance(event, M.Joined) and self.client.room.results is None:
            self.committed = event.commitment  # a rematch: the new deal's commitment
            if event.round > 1:
                self.say(f"round {event.round}: a new deal in this room", "bold green")
        if isinstance(event, M.Results):
            self.exit_code = 0
            saved = keep_results(self.client.room.results or event, self.save_results)
            if self.exit_after_results_s is not None:
                self._close_at = time.monotonic() + self.exit_after_results_s
                self.say(
                    f"the race is over{saved} — closing in {self.exit_after_results_s:g} s "
                    "(q closes now)",
                    "bold magenta",
                )
            else:
                self.say(f"the race is over{saved} — q quits", "bold magenta")
        elif isinstance(event, M.Verdict):
            self._on_verdict()
        elif isinstance(event, Disconnected):
            self.say(f"connection lost ({event.reason}); reconnecting…", "bold yellow")
        elif isinstance(event, Reconnected):
            self.say("reconnected", "green")
        elif isinstance(event, M.Error):
            self.say(f"✗ {event.message} ({event.code})", "bold red")
        self.redraw()

    def _tick_once(self) -> None:
        if self._close_at is not None and time.monotonic() >= self._close_at:
            self.exit(self.exit_code)
            return
        room = self.client.room
        if room.phase in ("countdown", "running"):
            self.query_one("#header", Static).update(
                header_text(room, self.size.width, "spectating")
            )

    def _redraw(self) -> None:
        """Redraw from the client's room state."""
        if not self._mounted:
            return
        room = self.client.room
        width = self.size.width
        self.query_one("#header", Static).update(header_text(room, width, "spectating"))
        order = {r.seat: r.rank for r in room.ranking}
        seats = sorted(
            room.seats.values(), key=lambda s: (order.get(s.seat, 99), -s.progress, s.seat)
        )
        seat_texts = [seat_line(s, COLUMN - 1) for s in seats]
        self.query_one("#seats", Static).update(
            Text("\n").join(side_by_side_lines(seat_texts, COLUMN))
        )
        lines: list[Text] = []
        if room.results is not None:
            result, self.check = results_lines(room, self.committed, width - 2)
            lines += [*result, Text("")]
        blocks = [board_block(room, n, COLUMN - 1, self.symbols) for n in sorted(room.boards)]
        if blocks:
            lines += side_by_side(blocks, COLUMN)
        elif room.results is None:
            lines.append(Text("the boards appear when the race starts", style="dim"))
        text = Text("\n").join(lines)
        text.no_wrap, text.overflow = True, "ellipsis"
        self.query_one("#boards", Static).update(text)
        self.query_one("#msg", Static).update(self.message)

    async def on_key(self, event: Any) -> None:
        if event.character == "q":
            self.exit(self.exit_code)
        elif event.character == "?" and self.client.room.variant:
            self.push_screen(RulesScreen(self.client.room.variant))

    async def on_unmount(self) -> None:
        await self.client.close()
        await asyncio.sleep(0)


def side_by_side_lines(lines: list[Text], width: int) -> list[Text]:
    """Single lines two abreast (the seats list)."""
    out = []
    for i in range(0, len(lines), 2):
        line = lines[i].copy()
        if i + 1 < len(lines):
            line.truncate(width, pad=True)
            line.append_text(lines[i + 1])
        out.append(line)
    return out
