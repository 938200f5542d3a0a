"""Resume tokens kept on disk, so ``solrace play --join CODE`` (and ``solrace bot``) takes
your seat back after you quit, the connection dropped for good, or the program died in the
middle of a race.

A token belongs to one (server, room, player name): two terminals on one machine with two
names keep two seats, and ``--name`` picks which seat a rejoin takes. Beside the token the
file keeps the seat's display preferences (auto-moves on or off), so a rejoin comes back
as you left.

The file is ``$XDG_STATE_HOME/solrace/tokens.json`` (``~/.local/state`` by default),
readable by you only (0600): a token is a key to your seat. A token is forgotten when
its race's results arrive or the server refuses it. At most ``MAX_TOKENS`` are kept (the
oldest go first), so the file cannot grow without end.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Rooms a person is seated in at once is small; 200 covers any real use with room to spare.
MAX_TOKENS = 200


@dataclass(frozen=True)
class SavedSeat:
    """A seat to take back: its resume token and whether auto-moves were on."""

    token: str
    auto: bool = False


def token_file() -> Path:
    """Where tokens are kept (read from the environment on every call)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "solrace" / "tokens.json"


def _load() -> dict[str, Any]:
    try:
        data = json.loads(token_file().read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _store(tokens: dict[str, Any]) -> None:
    path = token_file()
    while len(tokens) > MAX_TOKENS:
        tokens.pop(next(iter(tokens)))  # dicts keep insertion order: the oldest first
    with contextlib.suppress(OSError):  # no token file is a lost convenience, not an error
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(tokens, f)


def _key(url: str, code: str, name: str) -> str:
    return json.dumps([url.rstrip("/"), code.upper(), name])


def load_seat(url: str, code: str, name: str) -> SavedSeat | None:
    """The saved seat of player ``name`` in room ``code`` on ``url``, if any."""
    entry = _load().get(_key(url, code, name))
    if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
        return None
    return SavedSeat(entry["token"], bool(entry.get("auto", False)))


def load_token(url: str, code: str, name: str) -> str | None:
    """The saved token of player ``name`` in room ``code`` on ``url``, if any."""
    seat = load_seat(url, code, name)
    return seat.token if seat else None


def save_token(url: str, code: str, name: str, token: str, *, auto: bool = False) -> None:
    """Keep ``token`` (and the auto-move setting) for ``name`` in room ``code`` on ``url``."""
    tokens = _load()
    key = _key(url, code, name)
    tokens.pop(key, None)  # re-inserted last: the newest
    tokens[key] = {"token": token, "auto": auto}
    _store(tokens)


def forget_token(url: str, code: str, name: str) -> None:
    """Drop the token of ``name`` in room ``code`` on ``url`` (race over, or refused)."""
    tokens = _load()
    if tokens.pop(_key(url, code, name), None) is not None:
        _store(tokens)
