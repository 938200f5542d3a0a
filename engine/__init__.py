"""solrace's rules engine: the five variants of RULES.md, pure Python, no I/O.

The public API (stable; bots and outside tests rely on it):

- ``VARIANTS`` — the five variant names
- ``new_game(variant, seed=..., **options)`` → ``Game``
- ``Game.from_layout(dict)``, ``game.to_layout()``, ``game.view()``
- ``game.legal_moves()``, ``game.play("3>7")`` → ``Diff``
- ``game.won``, ``game.stuck``, ``game.progress``, ``game.copy()``, ``game.state_hash()``
- ``apply_diff(view, diff)``, ``view_hash(view)``, ``game_from_view(view)`` (clients)
- ``commitment(seed, salt)``, ``verify_commitment(...)``, ``shuffled_deck(seed)``
- errors: ``EngineError`` (a ``ValueError``) and its subclasses
"""

from .diff import Diff, apply_diff
from .errors import (
    BadLayout,
    BadNotation,
    BadOption,
    BadSeed,
    EngineError,
    IllegalMove,
    UnknownVariant,
)
from .game import Game, new_game
from .moves import Move, normalise_move, parse_move
from .shadow import game_from_view
from .shuffle import commitment, new_salt, shuffled_deck, verify_commitment
from .statehash import view_hash
from .variants import REGISTRY, VARIANTS, get_variant

__all__ = [
    "REGISTRY",
    "VARIANTS",
    "BadLayout",
    "BadNotation",
    "BadOption",
    "BadSeed",
    "Diff",
    "EngineError",
    "Game",
    "IllegalMove",
    "Move",
    "UnknownVariant",
    "apply_diff",
    "commitment",
    "game_from_view",
    "get_variant",
    "new_game",
    "new_salt",
    "normalise_move",
    "parse_move",
    "shuffled_deck",
    "verify_commitment",
    "view_hash",
]
