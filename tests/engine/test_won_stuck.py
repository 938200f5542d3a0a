"""Foundations, progress, won and stuck, the same in every variant."""

from __future__ import annotations

import pytest

import engine
from tests.engine.engine_testkit import assert_illegal, game, legal

ALL_HOME = {"S": 13, "H": 13, "D": 13, "C": 13}


@pytest.mark.parametrize("variant", engine.VARIANTS)
def test_all_cards_home_is_won_with_no_moves(variant: str) -> None:
    g = game(variant, [], foundations=ALL_HOME)
    assert g.won and g.progress == 52
    assert g.legal_moves() == []
    assert not g.stuck
    for move in ("1>2", "1>f", "fS>1", "redeal", "1:2>3"):
        assert_illegal(g, move, "the game is won: no moves remain")


@pytest.mark.parametrize("variant", engine.VARIANTS)
def test_the_last_card_home_wins(variant: str) -> None:
    g = game(variant, ["KS"])
    assert g.progress == 51 and not g.won
    assert "1>f" in legal(g)
    diff = g.play("1>f")
    assert diff == engine.Diff("1>f")
    assert g.won and g.legal_moves() == [] and not g.stuck
    assert g.view()["foundations"] == ALL_HOME


def test_stuck_when_no_move_remains() -> None:
    # Tops QS and QH: neither fits the other, JS and JH are buried, no King is on top.
    g = game("portuguese", ["JS KH QS", "JH KS QH"])
    assert g.legal_moves() == []
    assert g.stuck and not g.won
    assert g.progress == 46


def test_yukon_moves_reach_buried_cards() -> None:
    # The same piles in Brisbane are not stuck: whole groups move.
    g = game("brisbane", ["JS KH QS", "JH KS QH"])
    assert not g.stuck
    kings_to_empty = {f"{i}:2>{j}" for i in (1, 2) for j in range(3, 8)}
    assert legal(g) == kings_to_empty | {"1:3>2", "2:3>1"}


def test_stuck_in_perseverance_needs_the_redeals_used() -> None:
    g = game("perseverance", ["JS 9S KS TS", "QS"], redeals_left=0)
    assert g.stuck and g.legal_moves() == []
    g = game("perseverance", ["JS 9S KS TS", "QS"], redeals_left=1)
    assert not g.stuck


def test_fortress_and_spanish_are_rarely_stuck_with_an_empty_pile() -> None:
    # An empty pile that takes any card keeps the game moving (RULES.md, "Common").
    g = game("spanish", ["JS KH QS", "JH KS QH"])
    assert not g.stuck
    assert legal(g) == {f"{i}>{j}" for i in (1, 2) for j in range(3, 14)}


@pytest.mark.parametrize("variant", engine.VARIANTS)
def test_progress_counts_the_foundations(variant: str) -> None:
    g = game(variant, ["KS QS", "KH"], foundations={"S": 11, "H": 12, "D": 13, "C": 13})
    assert g.progress == 49
    g.play("1>f")
    assert g.progress == 50
