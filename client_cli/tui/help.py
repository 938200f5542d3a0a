"""The rules screen (``?``): the current variant's section of docs/RULES.md, scrollable;
``?``, ``q`` or Esc closes it."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from client_cli.rules import variant_rules

CSS = """
RulesScreen { align: center middle; }
#rules-box { width: 100%; height: 100%; border: round $primary; padding: 0 1; }
#rules-keys { dock: bottom; height: 1; color: $text-muted; }
"""


class RulesScreen(ModalScreen[None]):
    """The rules of ``variant`` over the race screen."""

    DEFAULT_CSS = CSS

    def __init__(self, variant: str) -> None:
        super().__init__()
        self.variant = variant

    def compose(self) -> ComposeResult:
        title, text = variant_rules(self.variant)
        with VerticalScroll(id="rules-box") as box:
            box.border_title = f"Rules: {title}"
            yield Static(Text(text))
        yield Static(Text("↑↓ PgUp PgDn scroll · ? or Esc back to the race"), id="rules-keys")

    def action_close(self) -> None:
        """Back to the race screen."""
        self.dismiss(None)

    def on_key(self, event: Any) -> None:
        """``?``, ``q`` or Esc close; no key reaches the race screen (no move by accident)."""
        event.stop()
        if event.key in ("escape", "q", "question_mark") or event.character in ("?", "q"):
            self.action_close()
