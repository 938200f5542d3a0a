"""Perseverance: Aces start home, build down in suit, only the whole top run moves, empty
piles are never filled by a move, and up to ``redeals`` redeals regroup the piles in
fours (by default only when no other move remains)."""

from __future__ import annotations

import pytest

import engine
from tests.engine.engine_testkit import assert_illegal, game, legal, tops

# Spades from 7S and hearts from JH are out. Pile 1 ends in the run 9S 8S 7S, pile 3 is
# the run QS JS, pile 4 has a King on top that no move can place.
RUNS = ["KS 9S 8S 7S", "TS", "QS JS", "QH JH KH"]

# No move but a redeal: 4S under 9S, tops 6S, TS, QS fit nowhere; pile 2 was emptied.
STUCK_UNEVEN = ["4S 9S 6S", "", "KS 5S 8S TS", "JS 7S QS"]

# No move, and a redeal gives the same piles back.
STUCK_SAME = ["JS 9S KS TS", "QS"]


def test_aces_start_on_the_foundations() -> None:
    g = engine.new_game("perseverance", seed=3)
    assert g.progress == 4 and g.found == [1, 1, 1, 1]
    assert not g.won


def test_legal_moves_exactly() -> None:
    g = game("perseverance", RUNS)
    assert legal(g) == {"1>f", "1:3>2", "2>3"}


def test_the_whole_top_run_moves_as_a_unit() -> None:
    g = game("perseverance", RUNS)
    assert g.play("1:3>2") == engine.Diff("1:3>2")
    assert tops(g)[:2] == [["KS"], ["TS", "9S", "8S", "7S"]]
    # The grown run moves on as one unit of four.
    assert "2:4>3" in legal(g)
    g.play("2:4>3")
    assert tops(g)[2] == ["QS", "JS", "TS", "9S", "8S", "7S"]


def test_part_of_a_run_never_moves_on_its_own() -> None:
    g = game("perseverance", RUNS)
    assert_illegal(g, "1:2>2", "a group from 8S does not go on TS")
    assert_illegal(g, "1>2", "7S does not go on TS: build down by one rank in the same suit")
    assert not any(m.src == 1 and m.n in (1, 2) and m.kind == 0 for m in g.legal_moves())


def test_more_than_the_run_is_refused() -> None:
    g = game("perseverance", RUNS)
    assert_illegal(g, "1:4>2", "the top 4 cards of pile 1 are not a run down in one suit")
    assert_illegal(g, "1:5>2", "pile 1 has only 4 face-up cards")


def test_a_king_above_an_ace_is_not_a_run() -> None:
    # KS is card 12 and AH card 13: consecutive numbers, but no run.
    g = game("perseverance", ["AH KS", "KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H"],
             foundations={"S": 12, "H": 0, "D": 13, "C": 13})
    assert legal(g) == {"1>f"}
    assert_illegal(g, "1:2>3", "the top 2 cards of pile 1 are not a run down in one suit")


def test_same_suit_only() -> None:
    g = game("perseverance", ["KH QH JH", "KS QS JS TS", "TH"])
    assert "3>1" in legal(g)
    assert_illegal(g, "2>1", "TS does not go on JH")


def test_an_empty_pile_is_never_filled_by_a_move() -> None:
    g = game("perseverance", RUNS)
    msg = assert_illegal(g, "4>5", "pile 5 is empty")
    assert msg == "pile 5 is empty: in Perseverance an empty pile stays empty"
    assert_illegal(g, "3:2>6", "pile 6 is empty")
    g.play("2>3")  # empties pile 2
    assert legal(g) == {"1>f", "1:3>3"}
    assert_illegal(g, "4>2", "pile 2 is empty: in Perseverance an empty pile stays empty")


def test_redeal_is_the_only_move_when_stuck() -> None:
    g = game("perseverance", STUCK_UNEVEN)
    assert [str(m) for m in g.legal_moves()] == ["redeal"]
    assert not g.stuck and g.redeals_left == 2


def test_redeal_order_with_uneven_piles() -> None:
    g = game("perseverance", STUCK_UNEVEN)
    before = g.view()
    diff = g.play("redeal")
    assert diff == engine.Diff("redeal")
    # Collected pile by pile, bottom to top, dealt back in fours: the last pile gets two,
    # the emptied pile 2 is refilled, piles 4..12 stay empty, KS is not moved again.
    assert tops(g) == [
        ["4S", "9S", "6S", "KS"],
        ["5S", "8S", "TS", "JS"],
        ["7S", "QS"],
    ] + [[]] * 9
    assert g.redeals_left == 1
    assert engine.apply_diff(before, diff) == g.view()
    assert legal(g) == {"2>3", "3>1"}  # no redeal while other moves remain


def test_a_redeal_that_gives_the_same_piles_still_counts() -> None:
    g = game("perseverance", STUCK_SAME)
    before = tops(g)
    g.play("redeal")
    assert tops(g) == before and g.redeals_left == 1
    g.play("redeal")
    assert g.redeals_left == 0
    assert g.legal_moves() == [] and g.stuck and not g.won
    assert_illegal(g, "redeal", "no redeals left (this game allows 2 redeals)")


@pytest.mark.parametrize("redeals", [0, 1, 5])
def test_redeals_option_sets_the_count(redeals: int) -> None:
    g = game("perseverance", STUCK_SAME, options={"redeals": redeals})
    assert g.redeals_left == redeals
    for _ in range(redeals):
        g.play("redeal")
    assert g.stuck
    if redeals == 0:
        assert_illegal(g, "redeal", "this game allows no redeal (option redeals=0)")
    else:
        assert_illegal(g, "redeal", f"no redeals left (this game allows {redeals} redeal")
    assert engine.new_game("perseverance", seed=1, redeals=redeals).redeals_left == redeals


def test_redeal_when_stuck_refuses_an_early_redeal() -> None:
    g = game("perseverance", RUNS)
    msg = assert_illegal(g, "redeal", "a redeal is allowed only when no other move remains")
    assert msg.endswith("(you can still play 1>f)")


def test_redeal_any_time() -> None:
    g = game("perseverance", RUNS, options={"redeal_when": "any_time"})
    assert legal(g) == {"1>f", "1:3>2", "2>3", "redeal"}
    assert [str(m) for m in g.legal_moves()][-1] == "redeal"
    g.play("redeal")
    assert tops(g) == [["KS", "9S", "8S", "7S"], ["TS", "QS", "JS", "QH"], ["JH", "KH"]] + [
        []
    ] * 9
    g.play("redeal")
    assert g.redeals_left == 0
    assert "redeal" not in legal(g)


def test_redeals_left_in_a_layout() -> None:
    g = game("perseverance", STUCK_SAME, redeals_left=1)
    assert g.redeals_left == 1
    with pytest.raises(engine.BadLayout, match=r"redeals_left must be an integer 0\.\.2"):
        game("perseverance", STUCK_SAME, redeals_left=3)
    with pytest.raises(engine.BadLayout, match="not -1"):
        game("perseverance", STUCK_SAME, redeals_left=-1)
    assert game("perseverance", STUCK_SAME, options={"redeals": 7}).redeals_left == 7


def test_no_takeback_in_perseverance() -> None:
    g = game("perseverance", RUNS)
    assert_illegal(g, "fS>2", "Perseverance never takes a card back from a foundation")
    with pytest.raises(engine.BadOption, match="perseverance has no option 'foundation_takeback'"):
        engine.new_game("perseverance", seed=1, foundation_takeback=True)


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("redeals", -1, "perseverance option redeals takes an integer >= 0, not -1"),
        ("redeals", True, "perseverance option redeals takes an integer >= 0, not True"),
        ("redeals", "2", "perseverance option redeals takes an integer >= 0, not '2'"),
        ("redeal_when", "never", "takes one of stuck, any_time, not 'never'"),
        ("kings_to_bottom", 1, "perseverance option kings_to_bottom takes true or false, not 1"),
    ],
)
def test_bad_option_values(name: str, value: object, expected: str) -> None:
    with pytest.raises(engine.BadOption) as info:
        engine.new_game("perseverance", seed=1, **{name: value})
    assert expected in str(info.value)
