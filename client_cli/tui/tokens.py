"""Resume tokens kept on disk, so ``solrace play --join CODE`` takes your seat back after
you quit (or the program died) in the middle of a race.

The file is ``$XDG_STATE_HOME/solrace/tokens.json`` (``~/.local/state`` by default),
readable by you only (0600): a token is a key to your seat. A token is forgotten when
its race's results arrive or the server refuses it.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path


def token_file() -> Path:
    """Where tokens are kept (read from the environment on every call)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "solrace" / "tokens.json"


def _load() -> dict[str, str]:
    try:
        data = json.loads(token_file().read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _store(tokens: dict[str, str]) -> None:
    path = token_file()
    with contextlib.suppress(OSError):  # no token file is a lost convenience, not an error
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(tokens, f)


def _key(url: str, code: str) -> str:
    return f"{url}|{code.upper()}"


def load_token(url: str, code: str) -> str | None:
    """The saved token for room ``code`` on ``url``, if any."""
    return _load().get(_key(url, code))


def save_token(url: str, code: str, token: str) -> None:
    """Keep ``token`` for room ``code`` on ``url``."""
    tokens = _load()
    tokens[_key(url, code)] = token
    _store(tokens)


def forget_token(url: str, code: str) -> None:
    """Drop the token for room ``code`` on ``url`` (race over, or refused)."""
    tokens = _load()
    if tokens.pop(_key(url, code), None) is not None:
        _store(tokens)
