"""``solrace play``: race on a board from the terminal (Textual).

Layout (80x24 and up): a header line; the board (foundations, then one row per pile,
keyed 1-9, 0, a, b, c) beside the race panel (every seat's live progress); a message
line; the command line for typed moves; the key help.

Keys: a pile key picks the source, a second pile key (or ``f`` for the foundation) the
destination (the same pile twice sends its top card to the foundation); ``+``/``-`` after
the source choose how many cards move (Brisbane, Perseverance); ``:`` types a move
(``3>7``, ``3:4>7``, ``fH>4``, ``redeal``); ``r`` redeal (warns first when it would
change nothing); ``t`` toggles auto-moves to the foundations; ``y`` ready; ``s`` start
now (creator); ``x`` twice resigns; ``q`` twice leaves a room whose race is not over
(saying how to rejoin); ``h`` asks for a hint (rooms with hints on); ``?`` shows the
variant's rules. The key line lists only the keys the variant has. The session resumes
by itself after a drop, and says so (with the rejoin command) if it gives up.
"""

from __future__ import annotations

import shlex
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Input, Static

from client_cli.sdk import (
    ClientClosed,
    ConnectionLost,
    Disconnected,
    RaceClient,
    RaceError,
    Reconnected,
)
from client_cli.sdk.verify import SeedCheck
from client_cli.tokens import forget_token, load_seat, save_token
from engine.moves import TABLEAU, TO_FOUNDATION
from protocol import Code
from protocol import messages as M

from .base import RaceApp
from .common import header_text, keep_results, results_lines
from .help import RulesScreen
from .keys import GROUP_VARIANTS, KEYS_DONE, KEYS_LOBBY, fit, race_keys
from .render import PILE_KEYS, board_lines, card_label, join_lines, seats_panel, with_symbols

SIDE_WIDTH = 26
# SIDE_WIDTH cells of content + the border and padding (2).
CSS = """
Screen { layout: vertical; }
#header { height: 1; }
#body { height: 1fr; }
#board { width: 1fr; padding: 0 0 0 1; }
#side { width: 28; border-left: vkey $primary-darken-2; padding: 0 0 0 1; }
#msg { height: auto; max-height: 2; padding: 0 1; }
#cmd { height: 1; border: none; padding: 0 1; background: $boost; }
#cmd:focus { border: none; background: $primary-darken-3; }
#keys { height: auto; max-height: 2; color: $text-muted; padding: 0 1; }
"""



def advice(error: RaceError) -> str:
    """What to do about a refusal to create or join, where there is something to do."""
    if error.code == Code.NAME_TAKEN:
        return " — pick another name with --name"
    if error.code == Code.BAD_TOKEN:
        return " — the race is over: watch it with solrace watch"
    return ""


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
        save_results: str | None = None,
    ) -> None:
        super().__init__()
        self.url, self.player_name = url, name
        self.create, self.join_code = create, join
        self.auto_foundation, self.auto_ready, self.symbols = auto_foundation, auto_ready, symbols
        self.remember = remember
        self.save_results = save_results  # a path: the results go there when they come
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
        self.session_error: RaceError | None = None  # the session could not start
        self.session_lost: RaceError | None = None  # it started, then ended for good
        self.group_n: int | None = None  # cards a pile key moves (+/-); None: the most

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
            saved = None
            if self.join_code and self.remember and client.welcome is None:
                saved = load_seat(self.url, self.join_code, self.player_name)
            if saved is not None:
                try:
                    await client.resume(saved.token)
                    resumed = True
                    self.auto_foundation = self.auto_foundation or saved.auto
                except RaceError as exc:
                    forget_token(self.url, self.join_code or "", self.player_name)
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
            self.say(f"✗ {exc.message} ({exc.code}){advice(exc)}", "bold red")
            return
        room = client.room
        self.committed = room.commitment
        self._remember_seat()
        if resumed:
            self.say(f"took your seat back in room {room.code}", "green")
            self._after_board_change()  # auto-moves pick up where they were
        else:
            self.say(f"in room {room.code}: share the code; press y when ready", "green")
        if self.auto_ready:
            await self._ready()
        self.redraw()
        async for _ in client.events():
            pass  # on_event redraws; this keeps the session worker alive until the end
        failure = client.failure
        if failure is not None and not isinstance(failure, ClientClosed):
            # Resuming gave up (or the seat was taken elsewhere): say so, and how to rejoin.
            self.session_lost = failure
            lost = isinstance(failure, ConnectionLost)
            why = "gave up reconnecting" if lost else failure.message
            hint = f" — rejoin: {self.rejoin_command()}" if self._seat_waits() else ""
            self.say(f"✗ {why}{hint}", "bold red")
            self.redraw()

    def _remember_seat(self) -> None:
        room = self.client.room
        if self.remember and room.token and room.results is None:
            save_token(
                self.url, room.code, self.player_name, room.token, auto=self.auto_foundation
            )

    def _seat_waits(self) -> bool:
        """True when this player has a seat in a race that is not over (it can rejoin)."""
        room = self.client.room
        return bool(room.code and room.seat and room.results is None)

    def rejoin_command(self) -> str:
        """The command that takes this seat back (quoted for a shell)."""
        url, name = shlex.quote(self.url), shlex.quote(self.player_name)
        return f"solrace play {url} --join {self.client.room.code} --name {name}"

    def farewell(self) -> str | None:
        """What to tell the player after the screen closes: how to rejoin a race that is
        not over (None after the results or before any room)."""
        if not self._seat_waits():
            return None
        code = self.client.room.code
        return f"you left room {code}; your seat waits: {self.rejoin_command()}"

    def _on_event(self, event: Any) -> None:
        if isinstance(event, M.Joined) and self.client.room.results is None:
            self.committed = event.commitment  # a rematch: the new deal's commitment
            self._remember_seat()
            if event.round > 1 and event.phase == "lobby":
                self.say(f"round {event.round}: a new deal in this room — y when ready",
                         "bold green")
        if isinstance(event, M.Started):
            self.say("go!", "bold green")
            self._after_board_change()
        elif isinstance(event, M.Results):
            self.exit_code = 0
            if self.remember:
                forget_token(self.url, event.code, self.player_name)
            saved = keep_results(self.client.room.results or event, self.save_results)
            self.say(f"the race is over — results below{saved}; q quits", "bold magenta")
        elif isinstance(event, M.Verdict):
            self._on_verdict()
        elif isinstance(event, Disconnected):
            self.say(f"connection lost ({event.reason}); reconnecting…", "bold yellow")
        elif isinstance(event, Reconnected):
            self.say(f"reconnected after {event.attempts} attempt(s)", "green")
            self._after_board_change()
        elif isinstance(event, M.Error):
            self.say(f"✗ {self._cards(event.message)} ({event.code})", "bold red")
        me = self.client.room.me
        if me is not None and me.status != self._my_status:
            self._my_status = me.status
            if me.status == "won" and self.client.room.results is None:
                self.say("★ you won! waiting for the others…", "bold green")
            elif me.status == "stuck" and self.client.room.results is None:
                self.say("■ no legal move left: your race is over", "bold yellow")
        self.redraw()

    def _cards(self, text: str) -> str:
        """``text`` with card codes drawn as the board draws them (``2C`` → ``2♣``)."""
        return with_symbols(text) if self.symbols else text

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
            hints = room.settings.hints if room.settings else False
            keys = race_keys(room.variant, len(board.view["tableau"]), hints)
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
        self.query_one("#keys", Static).update(Text(fit(keys, width - 2)))

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
        if self.focused is not None or self.screen is not self.screen_stack[0]:
            return  # the command line (or the rules screen) has the keys
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
        armed, self._armed = self._armed, None
        if char == "q":
            self._quit(armed == "q")
        elif char == "?":
            self.push_screen(RulesScreen(self._variant()))
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
            self._remember_seat()
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
        elif char == "n" and self.client.room.results is not None:
            self.run_worker(self._rematch(), group="requests")
        elif char == "r":
            self._redeal(armed == "r")
        elif char in ("+", "-"):
            self._group_size(1 if char == "+" else -1)
        elif char == "f":
            if self.selected is not None:
                src, self.selected = self.selected, None
                self.play(f"{src}>f")
            else:
                self.say("pick a pile first (its key), then f")
            self.redraw()
        elif char and char in PILE_KEYS:
            self._pile_key(PILE_KEYS.index(char) + 1)

    def _variant(self) -> str:
        room = self.client.room
        if room.variant:
            return room.variant
        return self.create.variant if self.create is not None else ""

    def _quit(self, confirmed: bool) -> None:
        """``q``: in a room whose race is not over, the first press says what leaving
        means and how to come back; the second leaves. Elsewhere one press quits."""
        if self._seat_waits() and self.session_lost is None and not confirmed:
            self._armed = "q"
            room = self.client.room
            if room.phase == "lobby":
                self.say(f"press q again to leave room {room.code} (--join {room.code} "
                         "comes back)", "yellow")
            else:
                self.say("press q again to leave the race (your seat waits: "
                         f"--join {room.code} takes it back)", "yellow")
            return
        self.exit(self.exit_code)

    def _redeal(self, confirmed: bool) -> None:
        """``r``: redeal, but first warn when the redeal would give the same piles back
        (it still uses one up: docs/RULES.md, Perseverance)."""
        board = self.client.room.my_board
        if board is None:
            return
        if not confirmed:
            game = board.game()
            if any(str(m) == "redeal" for m in game.legal_moves()):
                after = game.copy()
                after.play("redeal")
                if after.view()["tableau"] == game.view()["tableau"]:
                    self._armed = "r"
                    left = board.view.get("redeals_left", 0)
                    self.say(f"this redeal gives the same piles back and still uses one of "
                             f"your {left} — press r again to redeal anyway", "yellow")
                    return
        self.play("redeal")

    def _group_size(self, step: int) -> None:
        """``+`` / ``-`` after picking a source pile: how many cards its pile key moves
        (Brisbane groups, Perseverance runs). Cycles through 1 .. the face-up cards."""
        board = self.client.room.my_board
        if board is None or self.selected is None:
            self.say("pick a pile first (its key), then + or - for how many cards")
            return
        if self._variant() not in GROUP_VARIANTS:
            self.say("one card moves at a time in this game")
            return
        up = board.view["tableau"][self.selected - 1]["up"]
        current = self.group_n or len(up)
        self.group_n = (current - 1 + step) % len(up) + 1
        self._say_source()

    def _say_source(self) -> None:
        board = self.client.room.my_board
        if board is None or self.selected is None:
            return
        up = board.view["tableau"][self.selected - 1]["up"]
        if self.group_n is None:
            top = card_label(up[-1], self.symbols)
            extra = " (+/- picks how many)" if self._variant() in GROUP_VARIANTS else ""
            self.say(f"from pile {self.selected} ({top}) to…  (pile key, f, or esc){extra}")
            return
        bottom = card_label(up[-self.group_n], self.symbols)
        self.say(f"from pile {self.selected}: {self.group_n} card(s) from {bottom} up "
                 "to…  (pile key, +/-, esc)")

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
            self.selected, self.group_n = number, None
            self._say_source()
        else:
            src, n = self.selected, self.group_n
            self.selected, self.group_n = None, None
            self.play(f"{src}>f" if src == number else self.resolve(src, number, n))
        self.redraw()

    def resolve(self, src: int, dst: int, n: int | None = None) -> str:
        """The move from pile ``src`` to pile ``dst``: ``n`` cards if given (chosen with
        +/-), else among the legal ones the one that moves the most cards (a Brisbane
        group, a Perseverance run); ``src>dst`` if none is legal (the server then says
        why)."""
        if n is not None:
            return f"{src}>{dst}" if n == 1 else f"{src}:{n}>{dst}"
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
        """Esc: close the rules screen, or drop the selection and leave the command line."""
        if self.screen is not self.screen_stack[0]:
            self.pop_screen()
            return
        self.selected = self.group_n = None
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
            self.say(f"✗ {notation}: {self._cards(exc.message)}", "bold red")
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

    async def _rematch(self) -> None:
        try:
            await self.client.rematch()
        except RaceError as exc:
            if exc.code == Code.ROOM_CLOSED:
                self.say("this server does not offer a next deal in the same room yet", "yellow")
            else:
                self.say(f"✗ {exc.message} ({exc.code})", "bold red")
            return
        if self.client.room.results is not None:  # (else the new round is already here)
            self.say("you asked for a next deal — waiting for the others", "green")

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
