"""Bad input: each mistake raises the right ``EngineError`` subclass (a ``ValueError``)
with a message that names the problem, and changes nothing."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import engine
from engine import BadLayout, BadNotation, BadOption, BadSeed, IllegalMove, UnknownVariant
from engine.variants.base import OptionSpec
from tests.engine.engine_testkit import assert_illegal, full_deck_layout, layout


def test_error_hierarchy() -> None:
    for cls in (UnknownVariant, BadOption, BadLayout, BadSeed, IllegalMove, BadNotation):
        assert issubclass(cls, engine.EngineError)
        assert issubclass(cls, ValueError)
    assert issubclass(BadNotation, IllegalMove)


# ------------------------------------------------------------------ variants and options
@pytest.mark.parametrize("name", ["klondike", "Spanishh", " spanish", "", None, 3])
def test_unknown_variant(name: object) -> None:
    with pytest.raises(UnknownVariant) as info:
        engine.new_game(name, seed=1)  # type: ignore[arg-type]
    assert str(info.value) == (
        f"unknown variant {name!r}; choose one of portuguese, spanish, brisbane, fortress, "
        "perseverance"
    )
    lay = full_deck_layout("portuguese")
    lay["variant"] = name
    with pytest.raises(UnknownVariant, match="unknown variant"):
        engine.Game.from_layout(lay)


def test_unknown_option_lists_the_valid_ones() -> None:
    with pytest.raises(BadOption) as info:
        engine.new_game("spanish", seed=1, colour="red")
    assert str(info.value) == (
        "spanish has no option 'colour'; its options are: kings_to_bottom, foundation_takeback"
    )
    with pytest.raises(BadOption, match="its options are: empty_pile"):
        engine.new_game("brisbane", seed=1, redeals=2)


@pytest.mark.parametrize(
    ("variant", "name", "value", "expected"),
    [
        ("spanish", "kings_to_bottom", "yes", "takes true or false, not 'yes'"),
        ("spanish", "foundation_takeback", 0, "takes true or false, not 0"),
        ("portuguese", "kings_to_bottom", None, "takes true or false, not None"),
        ("fortress", "foundation_takeback", "true", "takes true or false, not 'true'"),
        ("brisbane", "empty_pile", "queen", "takes one of king, any, not 'queen'"),
        ("perseverance", "redeals", 1.5, "takes an integer >= 0, not 1.5"),
        ("perseverance", "redeal_when", "sometimes", "takes one of stuck, any_time"),
    ],
)
def test_bad_option_values(variant: str, name: str, value: object, expected: str) -> None:
    with pytest.raises(BadOption) as info:
        engine.new_game(variant, seed=1, **{name: value})
    assert str(info.value).startswith(f"{variant} option {name} takes ")
    assert expected in str(info.value)
    # The same check guards options in a layout.
    lay = full_deck_layout(variant, options={name: value})
    with pytest.raises(BadOption, match=name):
        engine.Game.from_layout(lay)


@pytest.mark.parametrize(
    ("text", "value"),
    [("true", True), ("on", True), ("YES", True), ("1", True), ("false", False), ("Off", False),
     ("no", False), ("0", False)],
)
def test_parse_text_booleans(text: str, value: bool) -> None:
    spec = engine.get_variant("spanish").options["kings_to_bottom"]
    assert spec.parse_text("spanish", "kings_to_bottom", text) is value


def test_parse_text_integers_and_choices() -> None:
    redeals = engine.get_variant("perseverance").options["redeals"]
    assert redeals.parse_text("perseverance", "redeals", "3") == 3
    assert redeals.parse_text("perseverance", "redeals", " 0 ") == 0
    with pytest.raises(BadOption, match="takes an integer >= 0, not -1"):
        redeals.parse_text("perseverance", "redeals", "-1")
    with pytest.raises(BadOption, match="takes an integer >= 0, not 'two'"):
        redeals.parse_text("perseverance", "redeals", "two")
    empty = engine.get_variant("brisbane").options["empty_pile"]
    assert empty.parse_text("brisbane", "empty_pile", "any") == "any"
    assert empty.parse_text("brisbane", "empty_pile", "ANY") == "any"
    with pytest.raises(BadOption, match="takes one of king, any, not 'queen'"):
        empty.parse_text("brisbane", "empty_pile", "queen")
    with pytest.raises(BadOption, match="takes true or false, not 'maybe'"):
        OptionSpec(False).parse_text("x", "flag", "maybe")


# ------------------------------------------------------------------ seeds
@pytest.mark.parametrize(
    ("seed", "expected"),
    [
        (-1, "a seed must be in 0 .. 2**64-1, got -1"),
        (2**64, "a seed must be in 0 .. 2**64-1, got 18446744073709551616"),
        ("12", "a seed must be an integer, not str"),
        (1.0, "a seed must be an integer, not float"),
        (True, "a seed must be an integer, not bool"),
        (None, "a seed must be an integer, not NoneType"),
    ],
)
def test_bad_seeds(seed: object, expected: str) -> None:
    with pytest.raises(BadSeed) as info:
        engine.new_game("fortress", seed=seed)  # type: ignore[arg-type]
    assert str(info.value) == expected
    with pytest.raises(BadSeed):
        engine.shuffled_deck(seed)  # type: ignore[arg-type]
    with pytest.raises(BadSeed):
        engine.commitment(seed, "00")  # type: ignore[arg-type]


def test_bad_salt() -> None:
    with pytest.raises(BadSeed) as info:
        engine.commitment(1, "xyz")
    assert str(info.value) == "a salt must be an even number of hex digits (at least 2), got 'xyz'"


# ------------------------------------------------------------------ layouts
def bad_layout(variant: str, change: Any) -> str:
    """The BadLayout message for the plain full-deck layout after ``change(lay)``."""
    lay = full_deck_layout(variant)
    engine.Game.from_layout(copy.deepcopy(lay))  # the unchanged layout is fine
    change(lay)
    with pytest.raises(BadLayout) as info:
        engine.Game.from_layout(lay)
    return str(info.value)


def set_(key: str, value: object) -> Any:
    return lambda lay: lay.__setitem__(key, value)


def pile0(value: object) -> Any:
    return lambda lay: lay["tableau"].__setitem__(0, value)


def up0(index: int, code: object) -> Any:
    return lambda lay: lay["tableau"][0]["up"].__setitem__(index, code)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (set_("extra", 1), "unknown layout key(s): extra"),
        (lambda lay: lay.pop("tableau"), "the layout has no 'tableau'"),
        (lambda lay: lay.pop("foundations"), "the layout has no 'foundations'"),
        (lambda lay: lay.pop("variant"), "the layout has no 'variant'"),
        (lambda lay: lay["tableau"].pop(), "portuguese has 13 piles; the layout has 12"),
        (lambda lay: lay["tableau"].append({"down": [], "up": []}),
         "portuguese has 13 piles; the layout has 14"),
        (set_("tableau", "piles"), "portuguese has 13 piles; the layout has str"),
        (pile0(["AS"]), "pile 1 must be an object with 'down' and 'up'"),
        (pile0({"up": []}), "pile 1 must be an object with 'down' and 'up'"),
        (pile0({"down": [], "up": [], "x": 1}), "pile 1 must be an object with 'down' and 'up'"),
        (up0(0, "2S"), "card 2S appears twice (pile 1 and pile 2)"),
        (up0(1, "AS"), "card AS appears twice in pile 1"),
        (lambda lay: lay["tableau"][0]["up"].pop(), "1 card is missing: AC"),
        (lambda lay: lay["tableau"][1].__setitem__("up", []), "4 cards are missing: 2S 2H 2D 2C"),
        (up0(0, "1S"), "pile 1: '1S' is not a card code: use a rank of A23456789TJQK then a "
                       "suit of SHDC, upper case (e.g. 'TD')"),
        (up0(0, "as"), "pile 1: 'as' is not a card code"),
        (up0(0, "10S"), "pile 1: '10S' is not a card code"),
        (up0(0, 5), "pile 1: a card must be a two-letter code like 'TD', not 5"),
        (lambda lay: lay["tableau"][0].__setitem__("up", "AS"),
         "pile 1: 'down' and 'up' must be lists of card codes"),
        (lambda lay: lay["tableau"][0].__setitem__("down", 2),
         "(a full layout names its face-down cards)"),
        (set_("foundations", {"S": 0}), "'foundations' must map each of S, H, D, C to a top "
                                        "rank 0..13"),
        (set_("foundations", [0, 0, 0, 0]), "'foundations' must map each of S, H, D, C"),
        (lambda lay: lay["foundations"].__setitem__("S", 14),
         "foundation S must be a rank 0..13, not 14"),
        (lambda lay: lay["foundations"].__setitem__("H", -1),
         "foundation H must be a rank 0..13, not -1"),
        (lambda lay: lay["foundations"].__setitem__("D", "3"),
         "foundation D must be a rank 0..13, not '3'"),
        (lambda lay: lay["foundations"].__setitem__("C", True),
         "foundation C must be a rank 0..13, not True"),
        (lambda lay: lay["foundations"].__setitem__("S", 1),
         "card AS appears twice (pile 1 and the S foundation)"),
        (set_("redeals_left", 1), "portuguese has no redeals: redeals_left must be 0, not 1"),
        (set_("options", ["kings_to_bottom"]), "'options' must be an object"),
    ],
)
def test_malformed_portuguese_layouts(change: Any, expected: str) -> None:
    message = bad_layout("portuguese", change)
    assert expected in message, message


def test_face_down_cards_in_a_variant_without_them() -> None:
    def hide_first(lay: dict[str, Any]) -> None:
        up = lay["tableau"][2]["up"]
        lay["tableau"][2] = {"down": up[:1], "up": up[1:]}

    for variant in ("portuguese", "spanish", "fortress", "perseverance"):
        message = bad_layout(variant, hide_first)
        assert message == f"pile 3: {variant} has no face-down cards"


def test_brisbane_pile_with_face_down_cards_only() -> None:
    def all_down(lay: dict[str, Any]) -> None:
        up = lay["tableau"][3]["up"]
        lay["tableau"][3] = {"down": up, "up": []}

    message = bad_layout("brisbane", all_down)
    assert message == (
        "pile 4 has face-down cards and none face up: its top card would already have been "
        "turned up"
    )
    message = bad_layout("brisbane", lambda lay: lay["tableau"][0].__setitem__("down", ["ZZ"]))
    assert message.startswith("pile 1: 'ZZ' is not a card code")


@pytest.mark.parametrize("value", [3, -1, "2", 1.0, True, None])
def test_bad_redeals_left(value: object) -> None:
    message = bad_layout("perseverance", set_("redeals_left", value))
    assert message == f"redeals_left must be an integer 0..2 (option redeals), not {value!r}"


def test_a_view_is_not_a_full_layout() -> None:
    view = engine.new_game("brisbane", seed=5).view()
    with pytest.raises(BadLayout, match="a full layout names its face-down cards"):
        engine.Game.from_layout(view)
    # Where nothing is face down, a view's 0 counts are accepted.
    flat = engine.new_game("fortress", seed=5)
    assert engine.Game.from_layout(flat.view()).to_layout() == flat.to_layout()


@pytest.mark.parametrize("value", [None, [], "layout", 3])
def test_a_layout_must_be_an_object(value: object) -> None:
    with pytest.raises(BadLayout, match="a layout must be a JSON object"):
        engine.Game.from_layout(value)  # type: ignore[arg-type]


def test_missing_options_and_redeals_left_take_the_defaults() -> None:
    lay = layout("perseverance", ["KS"])
    del lay["options"]
    g = engine.Game.from_layout(lay)
    assert g.options == {"kings_to_bottom": True, "redeals": 2, "redeal_when": "stuck"}
    assert g.redeals_left == 2
    assert g.to_layout()["redeals_left"] == 2


# ------------------------------------------------------------------ notation
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3>>7", "'3>>7' is not a move: write i>j, i:n>j, i>f, fS>j or redeal (e.g. '3>7')"),
        ("", "'' is not a move"),
        ("03>7", "'03>7' is not a move"),
        ("3>07", "'3>07' is not a move"),
        ("00>1", "'00>1' is not a move"),
        ("3:0>7", "'3:0>7' is not a move"),
        ("3:1>7", "'3:1>7' is not canonical: a one-card move is written 3>7"),
        ("12:1>f", "'12:1>f': only one card at a time goes to a foundation (i>f)"),
        ("3:2>f", "'3:2>f': only one card at a time goes to a foundation (i>f)"),
        ("fX>1", "'fX>1' is not a move"),
        ("fs>1", "'fs>1' is not a move"),
        ("fS>f", "'fS>f' is not a move"),
        ("f>1", "'f>1' is not a move"),
        ("3>F", "'3>F' is not a move"),
        ("3-7", "'3-7' is not a move"),
        (" 3>7", "' 3>7' is not a move"),
        ("REDEAL", "'REDEAL' is not a move"),
        ("3:00>7", "'3:00>7' is not a move"),
        ("3>7" * 6, "a move is at most 16 characters long"),
        (None, "a move must be a string like '3>7', not NoneType"),
        (37, "a move must be a string like '3>7', not int"),
        (b"3>7", "a move must be a string like '3>7', not bytes"),
    ],
)
def test_bad_notation(text: object, expected: str) -> None:
    with pytest.raises(BadNotation) as info:
        engine.parse_move(text)
    assert str(info.value).startswith(expected)
    g = engine.new_game("brisbane", seed=9)
    assert_illegal(g, text, expected, kind=BadNotation)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0>1", "there is no pile 0: piles are numbered 1 to 7"),
        ("1>0", "there is no pile 0: piles are numbered 1 to 7"),
        ("9>1", "there is no pile 9: piles are numbered 1 to 7"),
        ("100>1", "there is no pile 100: piles are numbered 1 to 7"),
        ("0>f", "there is no pile 0: piles are numbered 1 to 7"),
        ("3:2>100", "there is no pile 100: piles are numbered 1 to 7"),
    ],
)
def test_pile_numbers_the_board_lacks_are_illegal_not_bad_notation(
    text: str, expected: str
) -> None:
    # One failure kind, one error: the text fits the grammar; the board has no such pile.
    g = engine.new_game("brisbane", seed=9)
    assert len(g.view()["tableau"]) == 7
    assert_illegal(g, text, expected, kind=engine.IllegalMove)


@pytest.mark.parametrize(
    ("text", "canonical"),
    [("3 > 7", "3>7"), ("3:1>7", "3>7"), ("12 > F", "12>f"), ("fs>2", "fS>2"),
     ("FH > 4", "fH>4"), ("Redeal", "redeal"), ("3-7", "3>7"), ("3:4>7", "3:4>7")],
)
def test_normalise_move(text: str, canonical: str) -> None:
    assert engine.normalise_move(text) == canonical
    assert str(engine.parse_move(canonical)) == canonical


def test_move_objects_with_impossible_fields_are_refused() -> None:
    g = engine.new_game("spanish", seed=1, foundation_takeback=True)
    before = g.to_layout()
    for move, expected in [
        (engine.Move(0, 1, 2, 0), "a move takes at least one card, not 0"),
        (engine.Move(0, 1, 2, -3), "a move takes at least one card, not -3"),
        (engine.Move(2, 7, 1), "there is no foundation 7"),
        (engine.Move(2, -1, 1), "there is no foundation -1"),
        (engine.Move(9, 1, 2), "unknown move kind 9"),
        (engine.Move(0, 0, 2), "there is no pile 0"),
    ]:
        with pytest.raises(IllegalMove) as info:
            g.play(move)
        assert expected in str(info.value)
        assert g.to_layout() == before
