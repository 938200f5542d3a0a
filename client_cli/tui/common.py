"""What the play and watch screens share: the header line, the results panel and a way
to read the screen back as plain text (for tests and the captures in docs/CLIENT.md)."""

from __future__ import annotations

import textwrap
from typing import Any

from rich.text import Text
from textual.app import App

import engine
from client_cli.results_file import save_results
from client_cli.sdk import RoomState
from client_cli.sdk.verify import SeedCheck, check_results, deal_verdict
from protocol import messages as M

from .render import clock_text, ranking_lines


def variant_title(name: str) -> str:
    """``"brisbane"`` → ``"Brisbane"`` (the engine's title when it knows the variant)."""
    try:
        return str(engine.get_variant(name).title)
    except engine.EngineError:
        return name or "?"


def header_text(room: RoomState, width: int, extra: str = "") -> Text:
    """The top line: room code, variant, ranking rule, phase and the race clock."""
    settings = room.settings
    parts = [Text(" solrace ", style="bold reverse")]
    if room.code:
        parts.append(Text(f" {room.code} ", style="bold"))
    if settings is not None:
        parts.append(Text(f"{variant_title(settings.variant)} · by {settings.rank_by}"))
        if settings.time_limit_s and room.phase != "running":  # running: the time left shows
            parts.append(Text(f" · limit {settings.time_limit_s}s", style="dim"))
    phase = room.phase
    if phase == "countdown":
        left = max(0, -room.race_clock_ms())
        parts.append(Text(f"  starts in {left / 1000:.1f}s", style="bold yellow"))
    elif phase == "running":
        clock = room.race_clock_ms()
        parts.append(Text(f"  ⏱ {clock_text(clock)}", style="bold green"))
        if settings is not None and settings.time_limit_s:
            left = max(0, settings.time_limit_s * 1000 - clock)
            parts.append(
                Text(f" ({clock_text(left)[:-2]} left)", style="yellow" if left < 30_000 else "dim")
            )
    elif phase == "finished":
        parts.append(Text("  finished", style="bold magenta"))
    else:
        parts.append(Text("  lobby", style="dim"))
    if extra:
        parts.append(Text(f"  {extra}", style="dim"))
    line = Text.assemble(*parts)
    line.truncate(width)
    return line


def results_lines(
    room: RoomState, committed: str | None, width: int
) -> tuple[list[Text], SeedCheck | None]:
    """The final ranking, then the seed check (commitment and log replay)."""
    results = room.results
    if results is None:
        return [Text("waiting for the results…", style="dim")], None
    lines = [Text(f"Results ({results.reason})", style="bold")]
    lines += ranking_lines(results.ranking, width)
    lines += wrapped(deal_verdict(results), width, style="dim")
    check = check_results(results, committed)
    lines.append(Text(""))
    verdict = "✓ seed check passed" if check.ok else "✗ seed check FAILED"
    lines.append(Text(verdict, style="bold green" if check.ok else "bold red"))
    for text in check.lines:
        # Wrapped, never cut: a 20-digit seed or a long name must still be read whole.
        lines += wrapped(text, width, style="dim", indent="  ")
    return lines, check


def wrapped(text: str, width: int, *, style: str = "", indent: str = "") -> list[Text]:
    """``text`` in lines of at most ``width`` cells, each starting with ``indent`` (and
    two more spaces on the lines after the first)."""
    rows = textwrap.wrap(
        text,
        max(8, width),
        initial_indent=indent,
        subsequent_indent=indent + "  ",
        break_on_hyphens=False,
    )
    return [Text(row, style=style) for row in rows or [indent]]


def keep_results(results: M.Results, path: str | None) -> str:
    """Save ``results`` to ``path`` (``--save-results``) if given; the few words the
    message bar adds about it ("" when there is no path)."""
    if not path:
        return ""
    try:
        save_results(results, path)
    except OSError as exc:
        return f" (not saved: {exc.strerror})"
    return f", saved to {path}"


def screen_text(app: App[Any]) -> str:
    """The screen as plain text, one line per row (what a person sees, without colour)."""
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(segment.text for segment in strip).rstrip() for strip in strips)
