"""Every error the engine raises. All are ``ValueError`` subclasses, so callers that only
care about "bad input" can catch ``ValueError``; each message names the problem."""

from __future__ import annotations


class EngineError(ValueError):
    """Base class of every error the engine raises on bad input or an illegal move."""


class UnknownVariant(EngineError):
    """The variant name is not one of ``engine.VARIANTS``."""


class BadOption(EngineError):
    """An option the variant does not have, or a value outside the ones it allows."""


class BadLayout(EngineError):
    """A layout (JSON interchange format) that is malformed or describes no legal position."""


class BadSeed(EngineError):
    """A seed that is not an integer in 0 .. 2**64 - 1."""


class IllegalMove(EngineError):
    """A move the rules do not allow in the current position; the game is unchanged."""


class BadNotation(IllegalMove):
    """A move string that is not in the notation of RULES.md (e.g. ``"3>>7"``)."""
