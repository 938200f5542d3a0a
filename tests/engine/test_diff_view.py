"""Views hide face-down cards; diffs turn one view into the next; the state hash of a
view equals the game's; a desynced diff is refused."""

from __future__ import annotations

import copy
import json

import pytest

import engine
from engine import Diff, IllegalMove, apply_diff, view_hash
from engine.statehash import digest, hash_text
from tests.engine.engine_testkit import game

PILES = ["KS | 9S TH 8S", "JC | QH", "TS 7S", "QS | KH JH", "", "QC | JS KC"]


def test_view_hides_face_down_cards() -> None:
    for seed in range(10):
        g = engine.new_game("brisbane", seed=seed)
        view = g.view()
        text = json.dumps(view)
        full = g.to_layout()
        hidden = [c for p in full["tableau"] for c in p["down"]]
        assert len(hidden) == 21
        for code in hidden:
            assert code not in text
        assert [p["down"] for p in view["tableau"]] == [len(p["down"]) for p in full["tableau"]]
        assert [p["up"] for p in view["tableau"]] == [p["up"] for p in full["tableau"]]


def test_view_has_the_layout_keys() -> None:
    view = engine.new_game("perseverance", seed=1).view()
    assert set(view) == {"variant", "options", "tableau", "foundations", "redeals_left"}
    assert view["redeals_left"] == 2 and view["foundations"] == {"S": 1, "H": 1, "D": 1, "C": 1}


def test_apply_diff_with_a_reveal() -> None:
    g = game("brisbane", PILES)
    before = g.view()
    saved = copy.deepcopy(before)
    diff = g.play("6:2>2")
    after = apply_diff(before, diff)
    assert after == g.view()
    assert before == saved  # the input view is not changed
    assert view_hash(after) == g.state_hash()


def test_apply_diff_foundation_and_takeback() -> None:
    g = game("spanish", ["KH QC", "KS JS", "QS", "KC"], options={"foundation_takeback": True})
    view = g.view()
    for move in ("2>f", "fS>3", "fH>4", "1>f"):
        view = apply_diff(view, g.play(move))
        assert view == g.view()
        assert view_hash(view) == g.state_hash()


@pytest.mark.parametrize(
    ("diff", "expected"),
    [
        (Diff("9>1"), "diff '9>1' names pile 9, which does not exist"),
        (Diff("5>1"), "diff '5>1': pile 5 has 0 face-up cards"),
        (Diff("2:2>1"), "diff '2:2>1': pile 2 has 1 face-up cards"),
        (Diff("1>f"), "diff '1>f': 8S does not go on the S foundation"),
        (Diff("3>1", ((3, "AS"),)), "diff '3>1' reveals a card on pile 3, which has none"),
        (Diff("2>6", ((2, "XX"),)), "diff '2>6' reveals a bad card"),
        (Diff("3>>1"), "'3>>1' is not a move"),
    ],
)
def test_a_diff_that_does_not_fit_the_view_is_refused(diff: Diff, expected: str) -> None:
    view = game("brisbane", PILES).view()
    saved = copy.deepcopy(view)
    with pytest.raises(IllegalMove) as info:
        apply_diff(view, diff)
    assert expected in str(info.value)
    assert view == saved


def test_a_takeback_diff_from_an_empty_foundation_is_refused() -> None:
    view = game("fortress", ["KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H AH"]).view()
    with pytest.raises(IllegalMove, match="diff 'fH>2': the H foundation is empty"):
        apply_diff(view, Diff("fH>2"))


def test_state_hash_text_format() -> None:
    g = game("brisbane", PILES)
    text = hash_text([(1, ["9S", "TH", "8S"]), (1, ["QH"]), (0, ["TS", "7S"]),
                      (1, ["KH", "JH"]), (0, []), (1, ["JS", "KC"]), (0, [])],
                     [6, 9, 13, 10], 0)
    assert text == "1:9STH8S|1:QH|0:TS7S|1:KHJH|0:|1:JSKC|0:|F6,9,13,10|R0"
    assert g.state_hash() == digest(text) == view_hash(g.view())
    assert 0 <= g.state_hash() < 2**32


def test_state_hash_sees_every_part_of_the_view() -> None:
    g = engine.new_game("perseverance", seed=4)
    base = g.view()
    hashes = {view_hash(base)}
    v = copy.deepcopy(base)
    v["redeals_left"] = 1
    hashes.add(view_hash(v))
    v = copy.deepcopy(base)
    v["foundations"]["C"] = 2
    hashes.add(view_hash(v))
    v = copy.deepcopy(base)
    v["tableau"][0]["up"].reverse()
    hashes.add(view_hash(v))
    v = copy.deepcopy(base)
    v["tableau"][0]["down"] = 1
    hashes.add(view_hash(v))
    assert len(hashes) == 5


def test_diff_to_dict() -> None:
    assert Diff("3>7").to_dict() == {"move": "3>7", "revealed": []}
    assert Diff("2>6", ((2, "JC"),)).to_dict() == {"move": "2>6", "revealed": [[2, "JC"]]}


def test_game_from_view_has_the_real_legal_moves() -> None:
    g = game("brisbane", PILES)
    shadow = engine.game_from_view(g.view())
    assert shadow.legal_moves() == g.legal_moves()
    assert shadow.view() == g.view()
