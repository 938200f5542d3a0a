"""Typed errors of the client SDK. Each carries the protocol's error code (``code``, a
``protocol.Code`` when the server sent a known one) so callers branch on codes, not text."""

from __future__ import annotations

from protocol import RETRYABLE, Code


def as_code(code: str) -> Code | str:
    """The ``Code`` for a wire code string, or the string itself if this client does not
    know it (a newer server)."""
    try:
        return Code(code)
    except ValueError:
        return code


class RaceError(Exception):
    """Something the server refused (an ``Error`` frame), or a client-side failure with a
    code of its own. ``retryable``: sending the same thing again later may succeed."""

    def __init__(self, code: Code | str, message: str, retryable: bool | None = None) -> None:
        self.code = as_code(str(code))
        self.message = message
        self.retryable = self.code in RETRYABLE if retryable is None else retryable
        super().__init__(f"{self.code}: {message}")


class MoveRejected(RaceError):
    """The server did not play the move (``Rejected``); the board is unchanged.
    ``expected`` is the sequence the server expects next."""

    def __init__(
        self, move: str, seq: int, code: str, message: str, expected: int, retryable: bool = False
    ) -> None:
        super().__init__(code, message, retryable)
        self.move = move
        self.seq = seq
        self.expected = expected


class ConnectionLost(RaceError):
    """The connection dropped and could not be resumed (or reconnecting is off)."""

    def __init__(self, message: str) -> None:
        super().__init__("connection_lost", message, retryable=True)


class ClientClosed(RaceError):
    """The client was closed by its owner while a request was waiting."""

    def __init__(self) -> None:
        super().__init__("client_closed", "the client was closed", retryable=False)
