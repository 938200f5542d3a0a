"""The five variants, by name."""

from __future__ import annotations

from ..errors import UnknownVariant
from .base import Variant
from .brisbane import Brisbane
from .fortress import Fortress
from .perseverance import Perseverance
from .portuguese import Portuguese
from .spanish import Spanish

REGISTRY: dict[str, Variant] = {
    v.name: v for v in (Portuguese(), Spanish(), Brisbane(), Fortress(), Perseverance())
}
VARIANTS: tuple[str, ...] = tuple(REGISTRY)


def get_variant(name: object) -> Variant:
    """The variant of that name, in any case (``"Spanish"``, ``"SPANISH"`` and
    ``"spanish"`` are one variant, whose ``name`` is the lower-case one), or
    ``UnknownVariant`` naming what was asked for and listing the five."""
    # ASCII only: str.lower() maps a few non-ASCII letters onto ASCII ones (the Kelvin
    # sign onto "k"); no other spelling of a name is meant to be accepted
    variant = REGISTRY.get(name.lower()) if isinstance(name, str) and name.isascii() else None
    if variant is None:
        raise UnknownVariant(f"unknown variant {name!r}; choose one of {', '.join(VARIANTS)}")
    return variant


__all__ = ["REGISTRY", "VARIANTS", "Variant", "get_variant"]
