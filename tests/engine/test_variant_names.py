"""Variant names are case-insensitive wherever the engine resolves one (issue #12)."""

from __future__ import annotations

import pytest

import engine
from engine import Game, UnknownVariant, get_variant, new_game
from tests.engine.engine_testkit import full_deck_layout

SPELLINGS = ["spanish", "Spanish", "SPANISH", "sPaNiSh"]


@pytest.mark.parametrize("name", SPELLINGS)
def test_any_case_resolves_to_the_lower_case_variant(name: str) -> None:
    variant = get_variant(name)
    assert variant.name == "spanish"
    assert variant.title == "Spanish Patience"
    assert variant is engine.REGISTRY["spanish"]


@pytest.mark.parametrize("name", SPELLINGS)
def test_new_game_and_layouts_take_any_case(name: str) -> None:
    game = new_game(name, seed=5)
    assert game.name == "spanish"  # the canonical name, whatever was asked for
    assert game.to_layout() == new_game("spanish", seed=5).to_layout()
    lay = full_deck_layout("spanish")
    lay["variant"] = name
    assert Game.from_layout(lay).name == "spanish"


@pytest.mark.parametrize("name", ["PORTUGUESE", "Brisbane", "FortRess", "PERSEVERANCE"])
def test_every_variant_in_any_case(name: str) -> None:
    assert get_variant(name).name == name.lower()


@pytest.mark.parametrize("name", ["SPANISHH", "Spanish Patience", "spanish ", "\u017fpanish"])
def test_unknown_names_still_raise_the_documented_error(name: str) -> None:
    with pytest.raises(UnknownVariant) as info:
        get_variant(name)
    assert str(info.value) == (
        f"unknown variant {name!r}; choose one of portuguese, spanish, brisbane, fortress, "
        "perseverance"
    )
