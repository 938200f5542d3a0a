"""The state hash: a short, stable fingerprint of a view, so a client that applied a
diff can tell at once whether its board still equals the server's.

Specification (docs/DEALS.md has a worked example): build the ASCII text
``<pile>|<pile>|...|F<S>,<H>,<D>,<C>|R<redeals_left>`` where each ``<pile>`` is
``<face-down count>:<face-up codes concatenated bottom to top>`` and the foundation
numbers are top ranks 0..13 in decimal; the hash is the first 4 bytes of its SHA-256,
read as a big-endian unsigned 32-bit integer. A desync is a lasting difference, so the
chance that it escapes k successive 32-bit checks is 2**(-32k).
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable, Mapping
from typing import Any


def hash_text(
    piles: Iterable[tuple[int, Iterable[str]]], found: Iterable[int], redeals: int
) -> str:
    """The canonical text the hash is taken over (exposed for other implementations'
    tests and for debugging a desync)."""
    return join_text([pile_text(down, up) for down, up in piles], found, redeals)


def pile_text(down: int, up: Iterable[str]) -> str:
    """One pile's part of the text: ``<face-down count>:<face-up codes>``."""
    return f"{down}:{''.join(up)}"


def join_text(piles: Iterable[str], found: Iterable[int], redeals: int) -> str:
    """The whole text from each pile's ``pile_text``, the foundations and the redeals."""
    return "|".join(piles) + tail_text(found, redeals)


def tail_text(found: Iterable[int], redeals: int) -> str:
    """The end of the text, after the last pile: ``|F<S>,<H>,<D>,<C>|R<redeals>``."""
    return f"|F{','.join(map(str, found))}|R{redeals}"


_FIRST_WORD = struct.Struct(">I").unpack_from


def digest(text: str) -> int:
    """First 4 bytes of SHA-256 of the ASCII text, big-endian."""
    # (unpack_from reads the first 4 bytes without slicing a copy: asked once per move)
    return int(_FIRST_WORD(hashlib.sha256(text.encode("ascii")).digest())[0])


def view_hash(view: Mapping[str, Any]) -> int:
    """The state hash of a view (face-down cards as counts, as sent to clients)."""
    piles = [(p["down"] if isinstance(p["down"], int) else len(p["down"]), p["up"])
             for p in view["tableau"]]
    found = [view["foundations"][s] for s in "SHDC"]
    return digest(hash_text(piles, found, view["redeals_left"]))
