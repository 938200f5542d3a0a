"""Brisbane: Yukon group moves building down regardless of suit, only the top card to a
foundation, a King (or a group on a King) fills an empty pile unless ``empty_pile=any``,
and a face-down top card turns up as part of the move that uncovered it."""

from __future__ import annotations

import pytest

import engine
from engine.errors import BadNotation
from tests.engine.engine_testkit import assert_illegal, game, legal, tops

# Spades from 7S, hearts from TH, clubs from JC are on the tableau; diamonds all home.
# Piles 5 and 7 are empty. Face-down: KS (1), JC (2), QS (4), QC (6).
PILES = ["KS | 9S TH 8S", "JC | QH", "TS 7S", "QS | KH JH", "", "QC | JS KC"]

EXPECTED = {
    "3>f",  # 7S on the 6S foundation
    "3>1",  # 7S on 8S
    "4>2",  # JH on QH
    "6:2>2",  # JS KC on QH: only JS has to fit
    "1:2>4",  # TH 8S on JH
    "3:2>4",  # TS 7S on JH
    "2>6",  # QH on KC
    "4:2>5", "4:2>7",  # KH JH: a group whose bottom card is a King, to each empty pile
    "6>5", "6>7",  # KC alone
}


def test_legal_moves_exactly() -> None:
    g = game("brisbane", PILES)
    assert g.found == [6, 9, 13, 10]
    assert g.down == [1, 1, 0, 1, 0, 1, 0]
    assert legal(g) == EXPECTED


def test_group_move_whatever_the_order_of_the_cards_on_top() -> None:
    g = game("brisbane", PILES)
    assert g.play("1:2>4") == engine.Diff("1:2>4")
    assert tops(g)[3] == ["QS", "KH", "JH", "TH", "8S"]
    assert tops(g)[0] == ["KS", "9S"]
    assert g.view()["tableau"][3] == {"down": 1, "up": ["KH", "JH", "TH", "8S"]}


def test_group_move_uncovering_a_face_down_card_turns_it_up() -> None:
    g = game("brisbane", PILES)
    diff = g.play("6:2>2")
    assert diff == engine.Diff("6:2>2", ((6, "QC"),))
    assert diff.to_dict() == {"move": "6:2>2", "revealed": [[6, "QC"]]}
    assert g.down[5] == 0
    assert g.view()["tableau"][5] == {"down": 0, "up": ["QC"]}
    assert g.view()["tableau"][1] == {"down": 1, "up": ["QH", "JS", "KC"]}


def test_single_card_move_uncovering_a_face_down_card_turns_it_up() -> None:
    g = game("brisbane", PILES)
    assert g.play("2>6") == engine.Diff("2>6", ((2, "JC"),))
    assert g.view()["tableau"][1] == {"down": 0, "up": ["JC"]}
    # The turned card is immediately playable: JC goes on QH.
    assert "2>6" in legal(g)


def test_move_to_foundation_turns_up_the_card_below() -> None:
    g = game("brisbane", ["KS | 7S", "QS JS TS 9S 8S"])
    assert g.play("1>f") == engine.Diff("1>f", ((1, "KS"),))
    assert g.view()["tableau"][0] == {"down": 0, "up": ["KS"]}
    assert g.found[0] == 7


def test_two_face_down_cards_turn_up_one_at_a_time() -> None:
    g = game("brisbane", ["QS KS | 7S", "JS TS 9S 8S"])
    assert g.play("1>f").revealed == ((1, "KS"),)
    assert g.view()["tableau"][0] == {"down": 1, "up": ["KS"]}
    assert g.play("1>3").revealed == ((1, "QS"),)  # the King to an empty pile


def test_no_reveal_when_face_up_cards_remain() -> None:
    g = game("brisbane", PILES)
    assert g.play("3>1").revealed == ()


def test_face_down_cards_never_move() -> None:
    g = game("brisbane", PILES)
    assert_illegal(g, "1:4>2", "pile 1 has only 3 face-up cards")
    assert_illegal(g, "2:2>6", "pile 2 has only 1 face-up card")


def test_only_the_top_card_goes_to_a_foundation() -> None:
    g = game("brisbane", PILES)
    assert_illegal(g, "1>f", "8S cannot go to the S foundation: it needs 7S next")
    assert_illegal(g, "3:2>f", "only one card at a time goes to a foundation", kind=BadNotation)


def test_group_must_fit_on_its_bottom_card() -> None:
    g = game("brisbane", PILES)
    assert_illegal(g, "1:3>2", "a group from 9S does not go on QH")
    msg = assert_illegal(g, "1:2>2", "a group from TH does not go on QH")
    assert msg == "a group from TH does not go on QH: build down by one rank, any suit"


def test_empty_pile_takes_a_king_or_a_group_on_a_king_only() -> None:
    g = game("brisbane", PILES)
    msg = assert_illegal(g, "1:3>5", "pile 5 is empty")
    assert msg == (
        "pile 5 is empty: only a King, or a group whose bottom card is a King, may go there"
    )
    assert_illegal(g, "2>5", "pile 5 is empty")
    assert_illegal(g, "4>5", "pile 5 is empty")  # JH alone, off its King
    g.play("4:2>5")
    assert tops(g)[4] == ["KH", "JH"]


def test_empty_pile_any_takes_any_card_or_group() -> None:
    g = game("brisbane", PILES, options={"empty_pile": "any"})
    moves = legal(g)
    assert moves >= EXPECTED
    # Every face-up card of every other pile may go, with its cards on top, to 5 or 7.
    groups = {"1:3", "1:2", "1", "2", "3:2", "3", "4:2", "4", "6:2", "6"}
    to_empty = {f"{grp}>{j}" for grp in groups for j in (5, 7)}
    assert moves == EXPECTED | to_empty
    g.play("1:3>5")
    assert tops(g)[4] == ["9S", "TH", "8S"]
    assert g.view()["tableau"][0] == {"down": 0, "up": ["KS"]}


def test_a_whole_pile_king_may_move_to_another_empty_pile() -> None:
    # RULES.md: "When several empty piles could take a move, each destination is a
    # separate legal move" -- even a King already at the bottom of its pile.
    g = game("brisbane", ["KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S"])
    assert legal(g) == {f"1:12>{j}" for j in range(2, 8)} | {"1>f"}


def test_brisbane_has_no_takeback_and_no_redeal() -> None:
    g = game("brisbane", PILES)
    assert_illegal(g, "fS>5", "Brisbane never takes a card back from a foundation")
    assert_illegal(g, "redeal", "Brisbane has no redeal")


@pytest.mark.parametrize("value", ["queen", "King", 1, True, None])
def test_empty_pile_option_values(value: object) -> None:
    with pytest.raises(engine.BadOption, match="brisbane option empty_pile takes one of king, any"):
        engine.new_game("brisbane", seed=1, empty_pile=value)
