"""Fortress: build up or down by one rank in the same suit, one card at a time, any card
fills an empty pile, and (option) a card may come back from a foundation."""

from __future__ import annotations

import engine
from tests.engine.engine_testkit import assert_illegal, game, legal, tops

# Only spades from 6S up are out; piles 6..10 are empty.
PILES = ["KS 7S", "9S", "8S", "QS 6S", "JS TS"]
TOPS = {1: "7S", 2: "9S", 3: "8S", 4: "6S", 5: "TS"}


def test_legal_moves_exactly() -> None:
    g = game("fortress", PILES)
    assert g.found == [5, 13, 13, 13]
    tableau = {"1>3", "1>4", "2>3", "2>5", "3>1", "3>2", "4>1", "5>2"}
    to_empty = {f"{i}>{j}" for i in TOPS for j in range(6, 11)}
    assert legal(g) == {"4>f"} | tableau | to_empty


def test_builds_down_and_up_in_suit() -> None:
    g = game("fortress", PILES)
    g.play("1>3")  # 7S down on 8S
    assert tops(g)[2] == ["8S", "7S"]
    g.play("4>3")  # 6S down on 7S
    assert tops(g)[2] == ["8S", "7S", "6S"]
    g = game("fortress", PILES)
    g.play("2>3")  # 9S up on 8S
    g.play("5>3")  # TS up on 9S
    assert tops(g)[2] == ["8S", "9S", "TS"]


def test_direction_may_change_within_a_pile() -> None:
    g = game("fortress", PILES)
    g.play("1>3")  # pile 3: 8S 7S, built down
    g.play("3>6")  # 7S away to an empty pile
    g.play("2>3")  # 9S up on 8S: pile 3 now builds up
    assert tops(g)[2] == ["8S", "9S"]
    g.play("6>4")  # 7S up on 6S
    assert tops(g)[3] == ["QS", "6S", "7S"]
    assert_illegal(g, "3>4", "9S does not go on 7S")


def test_other_suits_are_refused() -> None:
    g = game("fortress", ["KS QS JS TS 9S 8S", "KH QH JH TH 9H 8H 7H"])
    msg = assert_illegal(g, "2>1", "7H does not go on 8S")
    assert msg == "7H does not go on 8S: build up or down by one rank in the same suit"
    assert_illegal(g, "1>2", "8S does not go on 7H")


def test_two_ranks_apart_is_refused() -> None:
    g = game("fortress", PILES)
    assert_illegal(g, "1>2", "7S does not go on 9S")
    assert_illegal(g, "4>3", "6S does not go on 8S")


def test_one_card_at_a_time_and_any_card_to_an_empty_pile() -> None:
    g = game("fortress", PILES)
    assert_illegal(g, "5:2>6", "only one card moves at a time in Fortress")
    g.play("5>6")
    assert tops(g)[5] == ["TS"]


def test_foundation_needs_the_next_card_and_an_ace_to_start() -> None:
    g = game("fortress", PILES)
    assert_illegal(g, "1>f", "7S cannot go to the S foundation: it needs 6S next")
    g = game("fortress", ["KH QH JH TH 9H 8H 7H 6H 5H 4H 3H AH 2H"],
             foundations={"S": 13, "H": 0, "D": 13, "C": 13})
    assert_illegal(g, "1>f", "2H cannot go to the H foundation: it needs an Ace to start it")


def test_takeback_off_by_default() -> None:
    g = game("fortress", PILES)
    assert_illegal(g, "fS>1", "foundation takeback is off in this game")


def test_takeback_on() -> None:
    g = game("fortress", PILES, options={"foundation_takeback": True})
    takebacks = {m for m in legal(g) if m.startswith("f")}
    # 5S goes up on 6S (pile 4) or to any empty pile; the complete foundations' Kings
    # go to empty piles only.
    expected = {"fS>4"} | {f"f{s}>{j}" for s in "SHDC" for j in range(6, 11)}
    assert takebacks == expected
    assert g.play("fS>4") == engine.Diff("fS>4")
    assert tops(g)[3] == ["QS", "6S", "5S"]
    assert g.found[0] == 4 and g.progress == 43
    # 4S would go on 5S in Fortress (down in suit): it is legal.
    assert "fS>4" in legal(g)


def test_takeback_refused_where_the_card_does_not_fit() -> None:
    g = game("fortress", PILES, options={"foundation_takeback": True})
    msg = assert_illegal(g, "fS>1", "5S does not go on 7S")
    assert msg.endswith("build up or down by one rank in the same suit")
    g = game("fortress", ["KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H AH"],
             foundations={"S": 13, "H": 0, "D": 13, "C": 13},
             options={"foundation_takeback": True})
    assert_illegal(g, "fH>2", "the H foundation is empty")
    assert_illegal(g, "fX>2", "is not a move", kind=engine.BadNotation)
