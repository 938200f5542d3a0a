"""Portuguese Solitaire and Spanish Patience: build down regardless of suit, one card at a
time; Portuguese fills an empty pile only with a King, Spanish with any card and may take
a card back from a foundation when ``foundation_takeback`` is on."""

from __future__ import annotations

import pytest

import engine
from engine.errors import BadNotation
from tests.engine.engine_testkit import assert_illegal, game, legal, tops

# Spades up to TS, hearts up to QH, clubs up to JC and every diamond are on the
# foundations; tops are QC, JS, QS, KC; piles 5..13 are empty.
PILES = ["KH QC", "KS JS", "QS", "KC"]
EMPTIES = range(5, 14)


def test_portuguese_legal_moves_exactly() -> None:
    g = game("portuguese", PILES)
    assert g.found == [10, 12, 13, 11]
    expected = {"2>f", "1>f"} | {"2>1", "2>3", "1>4", "3>4"} | {f"4>{j}" for j in EMPTIES}
    assert legal(g) == expected
    # Foundation moves come first, then tableau moves by destination.
    moves = [str(m) for m in g.legal_moves()]
    assert moves[:2] == ["1>f", "2>f"]
    assert moves.index("2>1") < moves.index("2>3") < moves.index("1>4") < moves.index("4>5")


def test_build_down_regardless_of_suit() -> None:
    g = game("portuguese", PILES)
    diff = g.play("2>1")  # JS on QC
    assert diff == engine.Diff("2>1")
    assert tops(g)[:2] == [["KH", "QC", "JS"], ["KS"]]
    g2 = game("portuguese", PILES)
    g2.play("2>3")  # JS on QS
    assert tops(g2)[2] == ["QS", "JS"]


@pytest.mark.parametrize("variant", ["portuguese", "spanish"])
def test_same_rank_up_and_two_down_are_refused(variant: str) -> None:
    g = game(variant, PILES)
    msg = assert_illegal(g, "3>1", "QS does not go on QC")
    assert msg == "QS does not go on QC: build down by one rank, any suit"
    assert_illegal(g, "4>3", "KC does not go on QS")  # up
    g = game(variant, ["KH QC", "KS QS JS", "TS", "KC"])
    assert_illegal(g, "3>1", "TS does not go on QC")  # two ranks down


@pytest.mark.parametrize("variant", ["portuguese", "spanish"])
def test_only_one_card_moves(variant: str) -> None:
    g = game(variant, PILES)
    title = engine.get_variant(variant).title
    assert_illegal(g, "2:2>5", f"only one card moves at a time in {title}")
    assert not any(m.n > 1 for m in g.legal_moves())


def test_portuguese_empty_pile_takes_only_a_king() -> None:
    g = game("portuguese", PILES)
    assert_illegal(g, "1>5", "pile 5 is empty: only a King may go there")
    g.play("4>13")
    assert tops(g)[12] == ["KC"] and tops(g)[3] == []
    # The emptied pile 4 now takes a King only, too.
    assert_illegal(g, "3>4", "pile 4 is empty")


def test_spanish_empty_pile_takes_any_card() -> None:
    g = game("spanish", PILES)
    expected = {"2>f", "1>f", "2>1", "2>3", "1>4", "3>4"}
    expected |= {f"{i}>{j}" for i in range(1, 5) for j in EMPTIES}
    assert legal(g) == expected
    g.play("2>7")
    assert tops(g)[6] == ["JS"]


def test_portuguese_has_no_takeback_and_no_redeal() -> None:
    g = game("portuguese", PILES)
    assert_illegal(g, "fS>2", "Portuguese Solitaire never takes a card back from a foundation")
    assert_illegal(g, "redeal", "Portuguese Solitaire has no redeal")
    with pytest.raises(engine.BadOption, match="foundation_takeback"):
        engine.new_game("portuguese", seed=1, foundation_takeback=True)


def test_spanish_takeback_is_off_by_default() -> None:
    g = game("spanish", PILES)
    msg = assert_illegal(g, "fS>2", "foundation takeback is off in this game")
    assert msg.endswith("(option foundation_takeback)")
    assert not any(m.kind == engine.moves.TAKEBACK for m in g.legal_moves())


def test_spanish_takeback_on() -> None:
    g = game("spanish", PILES, options={"foundation_takeback": True})
    takebacks = {m for m in legal(g) if m.startswith("f")}
    # TS may go on JS (pile 2); JC on QC (1) or QS (3); QH on KC (4); KD only to an empty
    # pile; and any of them to each empty pile.
    expected = {"fS>2", "fC>1", "fC>3", "fH>4"}
    expected |= {f"f{s}>{j}" for s in "SHDC" for j in EMPTIES}
    assert takebacks == expected
    before = g.progress
    assert g.play("fS>2") == engine.Diff("fS>2")
    assert tops(g)[1] == ["KS", "JS", "TS"]
    assert g.found[0] == 9 and g.progress == before - 1
    # The card goes back up again.
    g.play("2>f")
    assert g.found[0] == 10 and tops(g)[1] == ["KS", "JS"]


def test_takeback_refusals_name_the_problem() -> None:
    g = game("spanish", PILES, options={"foundation_takeback": True})
    assert_illegal(g, "fS>1", "TS does not go on QC: build down by one rank, any suit")
    assert_illegal(g, "fS>14", "there is no pile 14: piles are numbered 1 to 13")
    empty = game(
        "spanish", ["KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S AS"],
        foundations={"S": 0, "H": 13, "D": 13, "C": 13},
        options={"foundation_takeback": True},
    )
    assert_illegal(empty, "fS>2", "the S foundation is empty")


@pytest.mark.parametrize("variant", ["portuguese", "spanish"])
def test_bad_piles_and_same_pile(variant: str) -> None:
    g = game(variant, PILES)
    assert_illegal(g, "14>1", "there is no pile 14: piles are numbered 1 to 13")
    assert_illegal(g, "1>99", "there is no pile 99")
    assert_illegal(g, "1>1", "the source and destination piles are the same")
    assert_illegal(g, "5>1", "pile 5 is empty")
    assert_illegal(g, "5>f", "pile 5 is empty")
    assert_illegal(g, "1:2>2", "only one card moves at a time")
    # pile 0 fits the notation's grammar: the board has no such pile (not bad notation)
    assert_illegal(g, "0>1", "there is no pile 0: piles are numbered 1 to 13",
                   kind=engine.IllegalMove)
    assert_illegal(g, "01>2", "is not a move", kind=BadNotation)
