"""Pure rendering: views, seats and rankings to Rich ``Text``, sized for an 80x24 terminal.

Nothing here does I/O or knows about Textual, so every screen's content is testable from
an engine view alone. Piles are drawn as rows (pile 1 at the top), so 13 piles take 13
lines and a pile grows to the right; a row too long for its width folds its face-down
cards into ``##xn`` and then drops its oldest face-up cards behind ``…``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.text import Text

SUIT_SYMBOL = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
SUIT_STYLE = {"S": "bold bright_white", "C": "bold bright_white", "H": "bold red", "D": "bold red"}
DOWN_STYLE = "bold blue"
# The key that selects each pile in the play screen: 1-9, 0 for 10, then a b c.
PILE_KEYS = "1234567890abc"
STATUS_MARK = {
    "lobby": "·",
    "playing": "▶",
    "won": "★",
    "stuck": "■",
    "resigned": "✗",
    "timeout": "⌛",
}
CARD_CELLS = 3  # "K♠ " — two cells and a space


def card_label(code: str, symbols: bool = True) -> str:
    """``"TD"`` → ``"T♦"`` (or ``"TD"`` with ``symbols=False``)."""
    return code[0] + (SUIT_SYMBOL[code[1]] if symbols else code[1])


_CARD_CODE = re.compile(r"\b([A2-9TJQK])([SHDC])\b")


def with_symbols(text: str) -> str:
    """Card codes in a message drawn as the board draws them: ``"2C on 3H"`` →
    ``"2♣ on 3♥"`` (whole words only: a room code like ``E59D44`` is left alone)."""
    return _CARD_CODE.sub(lambda m: m.group(1) + SUIT_SYMBOL[m.group(2)], text)


def card(code: str, symbols: bool = True) -> Text:
    """One face-up card, coloured by suit."""
    return Text(card_label(code, symbols), style=SUIT_STYLE[code[1]])


def pile_key(number: int) -> str:
    """The key that selects pile ``number`` (1-based)."""
    return PILE_KEYS[number - 1] if 1 <= number <= len(PILE_KEYS) else "?"


def pile_row(
    number: int,
    pile: Mapping[str, Any],
    width: int,
    *,
    selected: bool = False,
    symbols: bool = True,
) -> Text:
    """One pile as a line of at most ``width`` cells: its key, then face-down cards as
    ``##`` and face-up cards bottom → top."""
    down = pile["down"] if isinstance(pile["down"], int) else len(pile["down"])
    up: list[str] = list(pile["up"])
    label = Text(f"{pile_key(number):>2}", style="reverse bold" if selected else "bold cyan")
    row = Text.assemble(label, Text("│", style="dim"))
    room = max(0, width - 3)
    need = CARD_CELLS * (down + len(up))
    down_text = Text("## " * down, style=DOWN_STYLE)
    if need > room and down:
        down_text = Text(f"##x{down} ", style=DOWN_STYLE)
    used = len(down_text.plain)
    cards_fit = max(0, (room - used) // CARD_CELLS)
    row.append_text(down_text)
    shown = up
    if len(up) > cards_fit:
        shown = up[len(up) - max(0, cards_fit - 1) :] if cards_fit > 0 else []
        row.append("… ", style="dim")
    for code in shown:
        row.append_text(card(code, symbols))
        row.append(" ")
    if not down and not up:
        row.append("··", style="dim")
    row.truncate(width)
    return row


def foundations_line(view: Mapping[str, Any], symbols: bool = True) -> Text:
    """The four foundations' top cards (``·♠`` when empty) and redeals left, if any."""
    line = Text("F ", style="bold cyan")
    for s in "SHDC":
        height = view["foundations"][s]
        if height:
            line.append_text(card("A23456789TJQK"[height - 1] + s, symbols))
        else:
            line.append("·" + (SUIT_SYMBOL[s] if symbols else s), style="dim")
        line.append(" ")
    redeals = view.get("redeals_left", 0)
    if redeals or view.get("variant") == "perseverance":
        line.append(f" redeals left: {redeals}", style="dim")
    return line


def board_lines(
    view: Mapping[str, Any],
    width: int,
    *,
    selected: int | None = None,
    symbols: bool = True,
) -> list[Text]:
    """A whole board: the foundations line, then one line per pile."""
    lines = [foundations_line(view, symbols)]
    for number, pile in enumerate(view["tableau"], 1):
        lines.append(pile_row(number, pile, width, selected=selected == number, symbols=symbols))
    return lines


def join_lines(lines: Iterable[Text]) -> Text:
    """Lines into one ``Text`` separated by newlines."""
    return Text("\n").join(list(lines))


def progress_bar(progress: int, width: int, total: int = 52) -> Text:
    """A bar of ``width`` cells filled in eighths."""
    eighths = round(width * 8 * max(0, min(progress, total)) / total)
    full, part = divmod(eighths, 8)
    bar = "█" * full + (" ▏▎▍▌▋▊▉"[part] if part else "")
    return Text(bar.ljust(width), style="green on grey23")


def seat_line(seat: Any, width: int, *, me: bool = False) -> Text:
    """One seat (a ``SeatInfo``-like object) in ``width`` cells: status mark, name (bots
    marked ``*``), a progress bar and the cards on its foundations."""
    mark = STATUS_MARK.get(seat.status, "?")
    name_width = max(4, width - 12)
    name = (seat.name + ("*" if seat.bot else ""))[:name_width]
    style = "bold yellow" if me else ""
    if not getattr(seat, "connected", True):
        style = (style + " dim").strip()
    line = Text(f"{mark} ", style=style)
    line.append(name.ljust(name_width), style=style)
    line.append(" ")
    line.append_text(progress_bar(seat.progress, 6))
    line.append(f" {seat.progress:>2}", style="bold")
    line.truncate(width)
    return line


def seats_panel(
    seats: Sequence[Any], ranking: Sequence[Any], my_seat: int, width: int
) -> list[Text]:
    """Every seat, in ranking order when there is a ranking, else by progress."""
    order = {r.seat: r.rank for r in ranking}
    ordered = sorted(seats, key=lambda s: (order.get(s.seat, 99), -s.progress, s.seat))
    return [seat_line(s, width, me=s.seat == my_seat) for s in ordered]


def clock_text(ms: float) -> str:
    """``83456`` → ``"01:23.4"``; negative (a countdown) → ``"-00:02.1"``."""
    sign = "-" if ms < 0 else ""
    ms = abs(int(ms))
    minutes, rest = divmod(ms, 60_000)
    return f"{sign}{minutes:02d}:{rest // 1000:02d}.{rest % 1000 // 100}"


def _ranked_name(entry: Any) -> str:
    """A ranked name: ``*`` for a declared bot, `` bot-like`` for a seat whose move
    clocks were beyond human (protocol.ranking.bot_like)."""
    mark = " bot-like" if getattr(entry, "bot_like", False) else ""
    return f"{entry.name}{'*' if entry.bot else ''}{mark}"


def ranking_lines(ranking: Sequence[Any], width: int) -> list[Text]:
    """The final ranking as a table: rank, name, status, cards, moves, time (43 cells
    and up: the name column takes what the width allows, up to a whole name)."""
    longest = max((len(_ranked_name(r)) for r in ranking), default=6)
    nw = max(12, min(longest, width - 31))
    head = Text(f"{'#':>2} {'player':<{nw}} {'status':<8} {'cards':>5} {'moves':>5} {'time':>7}",
                style="bold underline")
    head.truncate(width)
    lines = [head]
    for r in ranking:
        name = _ranked_name(r)[:nw]
        when = clock_text(r.finish_ms)[:-2] if r.finish_ms is not None else "—"
        line = Text(
            f"{r.rank:>2} {name:<{nw}} {r.status:<8} {r.progress:>5} {r.moves:>5} {when:>7}"
        )
        if r.rank == 1:
            line.stylize("bold yellow")
        line.truncate(width)
        lines.append(line)
    return lines
