"""What the play and watch screens share: the message bar and a periodic tick that is
safe while the app shuts down."""

from __future__ import annotations

import contextlib

from rich.text import Text
from textual.app import App
from textual.css.query import NoMatches
from textual.widgets import Static

from client_cli.sdk import RaceClient
from client_cli.sdk.verify import deal_verdict

from .common import keep_results


class RaceApp(App[int]):
    """Base of ``PlayApp`` and ``WatchApp``. Subclasses set ``_mounted`` once their
    widgets exist and implement ``_tick_once`` (``_tick`` runs it on a timer) and
    ``_redraw`` (``redraw`` runs it)."""

    message: Text
    _mounted: bool = False
    client: RaceClient
    save_results: str | None = None  # --save-results: the path, or None

    def _on_verdict(self) -> None:
        """The deal's verdict came after the results (already folded into them): say it,
        and save the results again (``--save-results``) so the file has it too."""
        results = self.client.room.results
        if results is None or results.winnable is None:
            return
        saved = keep_results(results, self.save_results)
        self.say(f"{deal_verdict(results)}{saved}", "bold magenta")

    def say(self, text: str, style: str = "") -> None:
        """Show one line in the message bar (``#msg``)."""
        self.message = Text(text, style=style)
        if self._mounted:
            with contextlib.suppress(NoMatches):  # shutting down
                self.query_one("#msg", Static).update(self.message)

    def _tick(self) -> None:
        with contextlib.suppress(NoMatches):  # shutting down: the widgets are gone
            self._tick_once()

    def redraw(self) -> None:
        """Redraw every part from the client's room state (nothing once the screen is gone)."""
        with contextlib.suppress(NoMatches):  # shutting down: the widgets are gone
            self._redraw()

    def _tick_once(self) -> None:
        raise NotImplementedError

    def _redraw(self) -> None:
        raise NotImplementedError
