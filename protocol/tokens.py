"""Resume tokens: ``"<room code>.<seat>.<secret>"``.

A token lets whoever holds it take a player's seat back (on another connection, another
node, after a crash). The room code and seat say where to look; the secret proves the
right to it. The server keeps only ``secret_hash(secret)``, so a leaked store does not
leak seats. The secret is 32 random bytes as unpadded base64url (43 characters).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from typing import NamedTuple

from .errors import Code, ProtocolError
from .limits import MAX_CODE, MAX_SEATS, MAX_SECRET, MAX_TOKEN

MIN_SECRET = 16  # characters: 96 bits at least, whoever made the token
_TOKEN = re.compile(
    rf"(?P<code>[A-Za-z0-9_-]{{1,{MAX_CODE}}})\.(?P<seat>[1-9][0-9]?)"
    rf"\.(?P<secret>[A-Za-z0-9_-]{{{MIN_SECRET},{MAX_SECRET}}})"
)


class TokenParts(NamedTuple):
    """A token taken apart."""

    code: str
    seat: int
    secret: str


def new_secret() -> str:
    """A fresh secret: 32 bytes from the OS's CSPRNG, base64url without padding."""
    return secrets.token_urlsafe(32)


def make_token(code: str, seat: int, secret: str) -> str:
    """The token for ``seat`` (1..MAX_SEATS) of room ``code``; ``ValueError`` if a part
    does not fit the format (so a server never hands out a token it would refuse)."""
    token = f"{code}.{seat}.{secret}"
    if len(token) > MAX_TOKEN or not _TOKEN.fullmatch(token) or not 1 <= seat <= MAX_SEATS:
        raise ValueError(f"cannot make a token from code {code!r}, seat {seat}, that secret")
    return token


def parse_token(token: str) -> TokenParts:
    """The parts of a token, or ``ProtocolError(bad_token)`` saying what is wrong with it
    (never echoing the secret)."""
    m = _TOKEN.fullmatch(token) if len(token) <= MAX_TOKEN else None
    if m is None or not 1 <= int(m["seat"]) <= MAX_SEATS:
        raise ProtocolError(
            Code.BAD_TOKEN,
            "a resume token has the form <room code>.<seat>.<secret>, as the server sent it "
            "in `joined`; this one does not",
        )
    return TokenParts(m["code"], int(m["seat"]), m["secret"])


def secret_hash(secret: str) -> str:
    """What the server stores for a secret: SHA-256 of its UTF-8 bytes, 64 hex digits."""
    return hashlib.sha256(secret.encode()).hexdigest()


def secret_matches(secret: str, stored_hash: str) -> bool:
    """True when ``secret`` hashes to ``stored_hash`` (compared in constant time)."""
    return secrets.compare_digest(secret_hash(secret), stored_hash)
