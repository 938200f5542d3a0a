"""A complete solrace bot in a few lines: foundation moves first, then moves that turn a
face-down card up, else the first legal move. Run it against a room:

    python examples/foundation_first.py ws://127.0.0.1:8765 ROOMCODE [NAME]

It joins as a bot, says ready, plays until the race is over and prints the outcome.
docs/CLIENT.md explains the Bot SDK.
"""

from __future__ import annotations

import sys
from typing import Any

from client_cli.sdk import Bot, run_bot_sync


class FoundationFirst(Bot):
    """Foundations first; then moves from a pile with face-down cards; else the first."""

    name = "foundation-first"

    def choose_move(self, view: dict[str, Any], legal_moves: list[str]) -> str | None:
        for move in legal_moves:
            if move.endswith(">f"):
                return move
        piles = view["tableau"]
        for move in legal_moves:
            source = move.split(">")[0].split(":")[0]
            if source.isdigit() and piles[int(source) - 1]["down"] > 0:
                return move  # uncovering a face-down card is progress too
        seen = getattr(self, "_seen", 0)
        self._seen = seen + 1
        if seen > 500:
            return None  # resign rather than wander for ever
        return legal_moves[0]


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    url, code = argv[0], argv[1]
    name = argv[2] if len(argv) > 2 else None
    outcome = run_bot_sync(url, code, FoundationFirst(), name)
    print(f"{outcome.status}: {outcome.progress} cards in {outcome.moves} moves")
    return 0 if outcome.results is not None else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
