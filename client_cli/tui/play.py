"""``solrace play``: race on a board from the terminal (Textual).

Layout (80x24 and up): a header line; the board (foundations, then one row per pile,
keyed 1-9, 0, a, b, c) beside the race panel (every seat's live progress); a message
line; the command line for typed moves; the key help.

Keys: a pile key picks the source, a second pile key (or ``f`` for the foundation) the
destination (the same pile twice sends its top card to the foundation); ``:`` types a
move (``3>7``, ``3:4>7``, ``fH>4``, ``redeal``); ``r`` redeal; ``t`` toggles auto-moves
to the foundations; ``y`` ready; ``s`` start now (creator); ``x`` twice resigns; ``q``
quits (twice while racing); ``h`` asks for a hint (rooms with hints on). The session
resumes by itself after a drop.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Input, Static

from client_cli.sdk import Disconnected, RaceClient, RaceError, Reconnected
from client_cli.sdk.verify import SeedCheck
from engine.moves import TABLEAU, TO_FOUNDATION
from protocol import Code
from protocol import messages as M

from .base import RaceApp
from .common import header_text, results_lines
from .render import PILE_KEYS, board_lines, card_label, join_lines, seats_panel
from .tokens import forget_token, load_token, save_token

SIDE_WIDTH = 26
# SIDE_WIDTH cells of content + the border and padding (2).
CSS = """
Screen { layout: vertical; }
#header { height: 1; }
#body { height: 1fr; }
#board { width: 1fr; padding: 0 0 0 1; }
#side { width: 28; border-left: vkey $primary-darken-2; padding: 0 0 0 1; }
#msg { height: 1; padding: 0 1; }
#cmd { height: 1; border: none; padding: 0 1; background: $boost; }
#cmd:focus { border: none; background: $primary-darken-3; }
#keys { height: 1; color: $text-muted; padding: 0 1; }
"""

KEYS_LOBBY = "y ready · s start now (creator) · q quit"
KEYS_RACE = "1-9 0 a-c pile · f foundation · r redeal · : type · t auto · x resign · q quit"
KEYS_DONE = "q quit"


class PlayApp(RaceApp):
    """The play screen. Give it a server ``url`` and ``name`` and either ``create``
    (``RoomSettings``: make a room and take its first seat) or ``join`` (a room code).
    With ``remember`` the seat's resume token is kept on disk (``tui.tokens``), and
    ``join`` takes the seat back with it if you had one in that room.
    The exit value is 0 after a finished race, 1 if the session could not start."""

    CSS = CSS
    TITLE = "solrace"
    AUTO_FOCUS = None  # keys belong to the board until ':' opens the command line
    BINDINGS = [Binding("escape", "cancel", "cancel", show=False, priority=True)]

    def __init__(
        self,
        url: str,
        name: str,
        *,
        create: M.RoomSettings | None = None,
        join: str | None = None,
        auto_foundation: bool = False,
        auto_ready: bool = False,
        symbols: bool = True,
        client: RaceClient | None = None,
        remember: bool = False,
    ) -> None:
        super().__init__()
        self.url, self.player_name = url, name
        self.create, self.join_code = create, join
        self.auto_foundation, self.auto_ready, self.symbols = auto_foundation, auto_ready, symbols
        self.remember = remember
        self.client = client or self._new_client()
        if client is not None:
            client.on_event = self._on_event
        self.selected: int | None = None
        self.message: Text = Text("connecting…", style="dim")
        self.committed: str | None = None
        self.check: SeedCheck | None = None
        self._armed: str | None = None  # "x" or "q": a second press confirms
        self.exit_code = 1
        self._my_status = ""
        self._typing = False  # ':' was pressed: keys go to the command line
        self._mounted = False
        self.session_error: RaceError | None = None

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield Static(id="header")
        with Horizontal(id="body"):
            yield Static(id="board")
            yield Static(id="side")
        yield Static(id="msg")
        yield Input(placeholder="type a move (3>7, 3:4>7, 5>f, fH>4, redeal) — press :", id="cmd")
        yield Static(id="keys")

    async def on_mount(self) -> None:
        self._mounted = True
        self.set_focus(None)
        self.set_interval(0.2, self._tick)
        self.run_worker(self._session(), name="session", exit_on_error=False)
        self.redraw()

    # ------------------------------------------------------------------ session
    def _new_client(self) -> RaceClient:
        return RaceClient(self.url, self.player_name, on_event=self._on_event)

    async def _session(self) -> None:
        client = self.client
        resumed = False
        try:
            token = None
            if self.join_code and self.remember and client.welcome is None:
                token = load_token(self.url, self.join_code)
            if token:
                try:
                    await client.resume(token)
                    resumed = True
                except RaceError as exc:
                    forget_token(self.url, self.join_code or "")
                    if exc.code != Code.BAD_TOKEN:
                        raise
                    client = self.client = self._new_client()  # the race is over: join
            if not resumed:
                if client.welcome is None:
                    await client.connect()
                if self.create is not None:
                    await client.create_room(self.create)
                elif self.join_code:
                    await client.join(self.join_code, "player")
        except RaceError as exc:
            self.session_error = exc
            self.say(f"✗ {exc.message} ({exc.code})", "bold red")
            return
        room = client.room
        self.committed = room.commitment
        if self.remember and room.token:
            save_token(self.url, room.code, room.token)
        if resumed:
            self.say(f"took your seat back in room {room.code}", "green")
        else:
            self.say(f"in room {room.code}: share the code; press y when ready", "green")
        if self.auto_ready:
            await self._ready()
        self.redraw()
        async for _ in client.events():
            pass  # on_event redraws; this keeps the session worker alive until the end

    def _on_event(self, event: Any) -> None:
        if isinstance(event, M.Started):
            self.say("go!", "bold green")
            self._after_board_change()
        elif isinstance(event, M.Results):
            self.exit_code = 0
            if self.remember:
                forget_token(self.url, event.code)
            self.say("the race is over — results below; q quits", "bold magenta")
        elif isinstance(event, Disconnected):
            self.say(f"connection lost ({event.reason}); reconnecting…", "bold yellow")
        elif isinstance(event, Reconnected):
            self.say(f"reconnected after {event.attempts} attempt(s)", "green")
        elif isinstance(event, M.Error):
            self.say(f"✗ {event.message} ({event.code})", "bold red")
        me = self.client.room.me
        if me is not None and me.status != self._my_status:
            self._my_status = me.status
            if me.status == "won" and self.client.room.results is None:
                self.say("★ you won! waiting for the others…", "bold green")
            elif me.status == "stuck" and self.client.room.results is None:
                self.say("■ no legal move left: your race is over", "bold yellow")
        self.redraw()

    # ------------------------------------------------------------------ drawing
    def _tick_once(self) -> None:
        room = self.client.room
        if room.phase in ("countdown", "running"):
            self.query_one("#header", Static).update(self._header())

    def _header(self) -> Text:
        auto = "auto:on" if self.auto_foundation else ""
        return header_text(self.client.room, self.size.width, auto)

    def _redraw(self) -> None:
        """Redraw every part from the client's room state."""
        if not self._mounted:
            return
        room = self.client.room
        width = self.size.width
        self.query_one("#header", Static).update(self._header())
        board_width = max(20, width - SIDE_WIDTH - 4)
        board = room.my_board
        if room.results is not None:
            lines, self.check = results_lines(room, self.committed, board_width)
            keys = KEYS_DONE
        elif board is not None:
            lines = board_lines(
                board.view, board_width, selected=self.selected, symbols=self.symbols
            )
            keys = KEYS_RACE
        else:
            lines = self._lobby_lines()
            keys = KEYS_LOBBY
        text = join_lines(lines)
        text.no_wrap, text.overflow = True, "ellipsis"
        self.query_one("#board", Static).update(text)
        side = [Text("Race", style="bold underline")]
        side += seats_panel(list(room.seats.values()), room.ranking, room.seat, SIDE_WIDTH)
        if room.commitment:
            side += [
                Text(""),
                Text("commitment", style="dim"),
                Text(room.commitment[:SIDE_WIDTH], style="dim"),
            ]
        self.query_one("#side", Static).update(join_lines(side))
        self.query_one("#msg", Static).update(self.message)
        self.query_one("#keys", Static).update(Text(keys[: width - 2]))

    def _lobby_lines(self) -> list[Text]:
        room = self.client.room
        if not room.code:
            return [Text("connecting to " + self.url, style="dim")]
        lines = [
            Text.assemble(("Room ", "bold"), (room.code, "bold reverse"), "  (share this code)"),
            Text(""),
        ]
        for seat in sorted(room.seats.values(), key=lambda s: s.seat):
            ready = "ready" if seat.ready else "not ready"
            who = " (you)" if seat.seat == room.seat else ""
            creator = " creator" if seat.seat == room.creator else ""
            name = seat.name + ("*" if seat.bot else "")
            lines.append(Text(f"  {seat.seat:>2}. {name}{who} — {ready}{creator}"))
        if room.phase == "countdown":
            lines += [Text(""), Text("get ready…", style="bold yellow")]
        return lines

    # ------------------------------------------------------------------ input
    async def on_key(self, event: Any) -> None:
        if self.focused is not None:
            return  # the command line has the keys
        char = event.character or ""
        if self._typing:
            # ':' asked for the command line but focus moves on the next refresh: keys
            # typed before then (a fast typist, a paste) belong to it, not to the board.
            cmd = self.query_one("#cmd", Input)
            if event.key == "enter":
                self.submit(cmd.value)
                cmd.value = ""
            elif char and char.isprintable():
                cmd.insert_text_at_cursor(char)
            event.stop()
            return
        room = self.client.room
        armed, self._armed = self._armed, None
        if char == "q":
            if room.phase == "running" and room.results is None and armed != "q":
                self._armed = "q"
                self.say("press q again to leave the race (your seat waits for you)", "yellow")
                return
            self.exit(self.exit_code)
        elif char in (":", "/", "m"):
            self._typing = True
            self.query_one("#cmd", Input).focus()
            event.stop()
        elif char == "y":
            self.run_worker(self._ready(), group="requests")
        elif char == "s":
            self.run_worker(self._start_now(), group="requests")
        elif char == "t":
            self.auto_foundation = not self.auto_foundation
            self.say(f"auto-move to foundations {'on' if self.auto_foundation else 'off'}")
            if self.auto_foundation:
                self._after_board_change()
            self.redraw()
        elif char == "x":
            if armed != "x":
                self._armed = "x"
                self.say("press x again to resign", "yellow")
                return
            self.run_worker(self._resign(), group="requests")
        elif char == "h":
            self.run_worker(self._hint(), group="requests")
        elif char == "r":
            self.play("redeal")
        elif char == "f":
            if self.selected is not None:
                src, self.selected = self.selected, None
                self.play(f"{src}>f")
            else:
                self.say("pick a pile first (its key), then f")
            self.redraw()
        elif char and char in PILE_KEYS:
            self._pile_key(PILE_KEYS.index(char) + 1)

    def _pile_key(self, number: int) -> None:
        board = self.client.room.my_board
        if board is None:
            return
        piles = board.view["tableau"]
        if number > len(piles):
            self.say(f"there is no pile {PILE_KEYS[number - 1]}: this game has {len(piles)}")
            return
        if self.selected is None:
            if not piles[number - 1]["up"]:
                self.say(f"pile {number} has no card to move")
                return
            self.selected = number
            top = card_label(piles[number - 1]["up"][-1], self.symbols)
            self.say(f"from pile {number} ({top}) to…  (pile key, f, or esc)")
        else:
            src, self.selected = self.selected, None
            self.play(f"{src}>f" if src == number else self.resolve(src, number))
        self.redraw()

    def resolve(self, src: int, dst: int) -> str:
        """The move from pile ``src`` to pile ``dst``: among the legal ones the one that
        moves the most cards (a Brisbane group, a Perseverance run); ``src>dst`` if
        none is legal (the server then says why)."""
        board = self.client.room.my_board
        candidates = []
        if board is not None:
            for move in board.game().legal_moves():
                if move.kind == TABLEAU and move.src == src and move.dst == dst:
                    candidates.append(move)
        if not candidates:
            return f"{src}>{dst}"
        return str(max(candidates, key=lambda m: m.n))

    def action_cancel(self) -> None:
        """Esc: drop the selection and leave the command line."""
        self.selected = None
        self._armed = None
        self._typing = False
        self.query_one("#cmd", Input).value = ""
        if self.focused is not None:
            self.set_focus(None)
        self.redraw()

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        event.input.value = ""
        self.submit(event.value)

    def submit(self, value: str) -> None:
        """A line from the command line: a move, or ready / start / resign."""
        text = value.strip()
        self._typing = False
        self.set_focus(None)
        # A focus() still queued from ':' would land after this: drop it again after it.
        self.call_later(self.set_focus, None)
        words = {"ready": self._ready, "start": self._start_now, "resign": self._resign}
        if text.lower() in words:
            self.run_worker(words[text.lower()](), group="requests")
        elif text:
            self.play(text)

    # ------------------------------------------------------------------ requests
    def play(self, notation: str) -> None:
        """Send a move (in the background); the message bar shows the outcome."""
        self.run_worker(self._play(notation), group="moves")

    async def _play(self, notation: str) -> None:
        try:
            await self.client.move(notation)
        except RaceError as exc:
            self.say(f"✗ {notation}: {exc.message}", "bold red")
            self.redraw()
            return
        self.say(f"✓ {notation}", "green")
        self._after_board_change()
        self.redraw()

    def _after_board_change(self) -> None:
        if self.auto_foundation:
            self.run_worker(self._auto_foundations(), group="moves", exclusive=True)

    async def _auto_foundations(self) -> None:
        """Play foundation moves while there are any (auto-move is on)."""
        while self.auto_foundation:
            board = self.client.room.my_board
            me = self.client.room.me
            if board is None or me is None or me.status != "playing":
                return
            moves = [m for m in board.game().legal_moves() if m.kind == TO_FOUNDATION]
            if not moves:
                return
            try:
                await self.client.move(str(moves[0]))
            except RaceError:
                return
            self.redraw()

    async def _hint(self) -> None:
        try:
            move = await self.client.hint()
        except RaceError as exc:
            self.say(f"✗ {exc.message} ({exc.code})", "bold red")
            return
        self.say(f"hint: {move}" if move else "no hint: no legal move", "cyan")

    async def _ready(self) -> None:
        try:
            await self.client.ready()
            self.say("ready — waiting for the others (the creator can press s)", "green")
        except RaceError as exc:
            self.say(f"✗ {exc.message} ({exc.code})", "bold red")

    async def _start_now(self) -> None:
        try:
            await self.client.start_now()
        except RaceError as exc:
            self.say(f"✗ {exc.message} ({exc.code})", "bold red")

    async def _resign(self) -> None:
        try:
            await self.client.resign()
            self.say("you resigned", "yellow")
        except RaceError as exc:
            self.say(f"✗ {exc.message} ({exc.code})", "bold red")

    async def on_unmount(self) -> None:
        await self.client.close()
