"""A complete solrace bot in a few lines: foundation moves first, then moves that turn a
face-down card up, else the first legal move. Run it against a room, or offline on a
deal of your choice (no server: the engine deals in this process):

    python examples/foundation_first.py ws://127.0.0.1:8765 ROOMCODE [NAME]
    python examples/foundation_first.py --offline brisbane 7

Online it joins as a bot, says ready, plays until the race is over and prints the
outcome; offline it prints the outcome and every move. docs/CLIENT.md explains the SDK.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

NOT_INSTALLED = (
    "{exc}: this Python does not have solrace installed. Activate the environment the "
    "README's set-up made (. .venv/bin/activate) or run .venv/bin/python {script}"
)
try:
    from client_cli.sdk import Bot, play_offline, run_bot_sync
except ModuleNotFoundError:
    # A checkout run by a Python that has the dependencies but not solrace itself.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    try:
        from client_cli.sdk import Bot, play_offline, run_bot_sync
    except ModuleNotFoundError as exc:
        sys.exit(NOT_INSTALLED.format(exc=exc, script=sys.argv[0]))


class FoundationFirst(Bot):
    """Foundations first; then moves from a pile with face-down cards; else the first."""

    name = "foundation-first"

    def __init__(self) -> None:
        self.wandering = 0  # moves since the last one to a foundation

    def choose_move(self, view: dict[str, Any], legal_moves: list[str]) -> str | None:
        for move in legal_moves:
            if move.endswith(">f"):
                self.wandering = 0
                return move
        self.wandering += 1
        if self.wandering > 200:
            return None  # resign rather than wander for ever
        piles = view["tableau"]
        for move in legal_moves:
            source = move.split(">")[0].split(":")[0]
            if source.isdigit() and piles[int(source) - 1]["down"] > 0:
                return move  # uncovering a face-down card is progress too
        return legal_moves[0]


def main(argv: list[str]) -> int:
    if len(argv) >= 3 and argv[0] == "--offline":
        variant, seed = argv[1], int(argv[2])
        result = play_offline(FoundationFirst(), variant, seed)
        print(f"{result.status}: {result.progress} cards in {len(result.moves)} moves")
        print(" ".join(result.moves))
        return 0
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
