"""The portable seeded shuffle and the seed commitment.

Both are part of the protocol: anyone, in any language, must be able to recompute the
deck order of a seed and check a revealed seed against its commitment. The algorithm is
specified in docs/DEALS.md with test vectors (tests/engine/test_shuffle.py checks them).

Deck order: SplitMix64 seeded with the seed drives a Fisher-Yates shuffle of the
ordered deck (AS..KS, AH..KH, AD..KD, AC..KC), from the last position down to 1, each
index drawn without modulo bias by rejection sampling.
"""

from __future__ import annotations

import hashlib
import re
import secrets

from .errors import BadSeed

_MASK = (1 << 64) - 1
SEED_MAX = _MASK
COMMIT_PREFIX = b"solrace-commit-v1"
_SALT = re.compile(r"(?:[0-9a-fA-F]{2})+")  # bytes.fromhex alone would also take spaces


def check_seed(seed: object) -> int:
    """Return the seed if it is an int in 0 .. 2**64-1, else raise ``BadSeed``."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise BadSeed(f"a seed must be an integer, not {type(seed).__name__}")
    if not 0 <= seed <= SEED_MAX:
        raise BadSeed(f"a seed must be in 0 .. 2**64-1, got {seed}")
    return seed


class SplitMix64:
    """Sebastiano Vigna's SplitMix64: 64-bit state, one addition and two multiplies a draw."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = check_seed(seed)

    def next(self) -> int:
        """The next 64-bit output."""
        self.state = z = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """A uniform integer in 0 .. n-1: draws are rejected at or above the largest
        multiple of n that fits in 64 bits, then reduced modulo n."""
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            x = self.next()
            if x < limit:
                return x % n


def shuffled_deck(seed: int) -> list[int]:
    """The 52 cards (as ints, see ``engine.cards``) in the order the seed deals them."""
    rng = SplitMix64(seed)
    deck = list(range(52))
    for i in range(51, 0, -1):
        j = rng.below(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def new_salt() -> str:
    """16 random bytes as 32 lower-case hex digits, for one race's commitment."""
    return secrets.token_hex(16)


def commitment(seed: int, salt: str) -> str:
    """SHA-256 over ``b"solrace-commit-v1" + seed as 8 bytes big-endian + salt bytes``,
    as 64 lower-case hex digits. Published before a race; seed and salt revealed after."""
    if not isinstance(salt, str) or not _SALT.fullmatch(salt):
        raise BadSeed(f"a salt must be an even number of hex digits (at least 2), got {salt!r}")
    salt_bytes = bytes.fromhex(salt)
    data = COMMIT_PREFIX + check_seed(seed).to_bytes(8, "big") + salt_bytes
    return hashlib.sha256(data).hexdigest()


def verify_commitment(seed: int, salt: str, expected: str) -> bool:
    """True when ``commitment(seed, salt)`` equals ``expected`` (case-insensitive hex).
    Raises ``BadSeed`` for a bad seed or salt, or an ``expected`` that is not a string."""
    if not isinstance(expected, str):
        raise BadSeed(f"a commitment must be a string of hex digits, not {type(expected).__name__}")
    # Compared as bytes: compare_digest refuses str with non-ASCII characters.
    return secrets.compare_digest(commitment(seed, salt).encode(), expected.lower().encode())
