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
    """The variant of that name, or ``UnknownVariant`` listing the five."""
    variant = REGISTRY.get(name) if isinstance(name, str) else None
    if variant is None:
        raise UnknownVariant(f"unknown variant {name!r}; choose one of {', '.join(VARIANTS)}")
    return variant


__all__ = ["REGISTRY", "VARIANTS", "Variant", "get_variant"]
