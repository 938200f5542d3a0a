"""``solrace deal``: the readable print, colour rules, ``--json``, options, and one-line
errors with exit status 2 for bad input."""

from __future__ import annotations

import io
import json
import sys
from typing import Any

import pytest

import engine
from client_cli.main import main

from .reference_deal import ref_deal

ANSI = "\x1b["


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def deal(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["deal", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def on_terminal(monkeypatch: pytest.MonkeyPatch, *argv: str) -> str:
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    assert main(["deal", *argv]) == 0
    return terminal.getvalue()


def pile_lines(variant: str, seed: int, options: dict[str, Any]) -> list[str]:
    """The pile lines the print must show, from the reference deal (tests/engine/
    reference_deal.py, written from docs/DEALS.md alone): '##' per face-down card."""
    piles = ref_deal(variant, seed, options)
    width = len(str(len(piles)))
    return [f"{k:>{width}}: " + " ".join(["##"] * len(down) + up)
            for k, (down, up) in enumerate(piles, 1)]


def test_brisbane_print(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = deal(capsys, "brisbane", "--seed", "42")
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "Brisbane, seed 42 (empty_pile=king)"
    assert lines[1:8] == pile_lines("brisbane", 42, {})
    assert out.count("##") == 21  # Brisbane deals 0+1+...+6 cards face down
    # Brisbane's foundations start empty (docs/RULES.md).
    assert "foundations: S:-- H:-- D:-- C:--  (progress 0/52)" in lines
    assert "state hash: 0x1df6c76d" in lines  # docs/DEALS.md's worked example
    assert ANSI not in out  # captured output is not a terminal
    # No face-down card's code appears anywhere in the print.
    hidden = [c for down, _ in ref_deal("brisbane", 42, {}) for c in down]
    assert len(hidden) == 21
    for code in hidden:
        assert code not in out


@pytest.mark.parametrize("variant", engine.VARIANTS)
def test_every_variant_prints_its_piles(capsys: pytest.CaptureFixture[str], variant: str) -> None:
    status, out, _ = deal(capsys, variant, "--seed", "7")
    assert status == 0
    options = engine.new_game(variant, seed=7).options  # the variant's defaults
    lines = out.splitlines()
    for line in pile_lines(variant, 7, options):
        assert line in lines
    assert ("redeals left: 2" in out) == (variant == "perseverance")


def test_perseverance_foundations_and_padding(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = deal(capsys, "perseverance", "--seed", "42")
    # Perseverance starts with the four aces home (docs/RULES.md): progress 4.
    assert "foundations: S:AS H:AH D:AD C:AC  (progress 4/52)" in out
    expected = pile_lines("perseverance", 42, {"kings_to_bottom": True})
    assert expected[0].startswith(" 1: ") and expected[11].startswith("12: ")  # padded
    assert out.splitlines()[1:13] == expected


def test_json_is_the_full_layout(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = deal(capsys, "brisbane", "--seed", "42", "--json")
    assert status == 0
    layout = json.loads(out)
    assert layout == engine.new_game("brisbane", seed=42).to_layout()
    assert engine.Game.from_layout(layout).state_hash() == 0x1DF6C76D
    assert layout["tableau"][6]["down"] == ref_deal("brisbane", 42, {})[6][0]


def test_options_are_parsed_by_the_variant(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = deal(capsys, "Spanish", "--seed", "0x2a", "--option", "kings_to_bottom=off",
                     "-o", "foundation_takeback=YES", "--json")
    layout = json.loads(out)
    assert layout["options"] == {"kings_to_bottom": False, "foundation_takeback": True}
    assert layout == engine.new_game("spanish", seed=42, kings_to_bottom=False,
                                     foundation_takeback=True).to_layout()
    _, out, _ = deal(capsys, "perseverance", "--seed", "1_000", "-o", "redeals=5",
                     "-o", "redeal_when=any_time")
    assert out.startswith("Perseverance, seed 1000 (kings_to_bottom=true, redeals=5, "
                          "redeal_when=any_time)")
    assert "redeals left: 5" in out
    _, out, _ = deal(capsys, "brisbane", "--seed", "3", "-o", "empty_pile=ANY", "--json")
    assert json.loads(out)["options"] == {"empty_pile": "any"}


def test_colour_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    out = on_terminal(monkeypatch, "fortress", "--seed", "42")
    assert "\x1b[31m7H\x1b[0m" in out  # hearts and diamonds red
    assert "\x1b[31m" + "7S" not in out and " 7S " in out  # spades plain
    assert "\x1b[31m" + "8C" not in out


def test_no_color_and_never_turn_colour_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    assert ANSI not in on_terminal(monkeypatch, "fortress", "--seed", "42")
    monkeypatch.delenv("NO_COLOR")
    assert ANSI not in on_terminal(monkeypatch, "fortress", "--seed", "42", "--color", "never")
    # An empty NO_COLOR does not count (no-color.org).
    monkeypatch.setenv("NO_COLOR", "")
    assert ANSI in on_terminal(monkeypatch, "fortress", "--seed", "42")


def test_color_always_wins_over_no_color(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    _, out, _ = deal(capsys, "brisbane", "--seed", "42", "--color", "always")
    assert "\x1b[31m4D\x1b[0m" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["klondike", "--seed", "1"], "unknown variant 'klondike'; choose one of portuguese, "
                                      "spanish, brisbane, fortress, perseverance"),
        (["brisbane"], "--seed N is required (an integer 0 .. 18446744073709551615)"),
        (["brisbane", "--seed", "abc"], "bad seed 'abc': write an integer 0 .. "
                                        "18446744073709551615 (decimal, or hex with 0x)"),
        (["brisbane", "--seed", "1.5"], "bad seed '1.5'"),
        (["brisbane", "--seed", "-1"], "a seed must be in 0 .. 2**64-1, got -1"),
        (["brisbane", "--seed", str(2**64)], "a seed must be in 0 .. 2**64-1, got 1844674407"),
        (["brisbane", "--seed", "1", "-o", "colour=red"],
         "brisbane has no option 'colour'; its options are: empty_pile"),
        (["brisbane", "--seed", "1", "-o", "empty_pile=queen"],
         "brisbane option empty_pile takes one of king, any, not 'queen'"),
        (["perseverance", "--seed", "1", "-o", "redeals=-2"],
         "perseverance option redeals takes an integer >= 0, not -2"),
        (["perseverance", "--seed", "1", "-o", "redeals=two"],
         "perseverance option redeals takes an integer >= 0, not 'two'"),
        (["spanish", "--seed", "1", "-o", "kings_to_bottom=maybe"],
         "spanish option kings_to_bottom takes true or false, not 'maybe'"),
        (["spanish", "--seed", "1", "-o", "kings_to_bottom"],
         "option 'kings_to_bottom' must be written NAME=VALUE (e.g. redeals=3)"),
        (["spanish", "--seed", "1", "-o", "=on"], "option '=on' must be written NAME=VALUE"),
        (["spanish", "--seed", "1", "-o", "kings_to_bottom=on", "-o", "kings_to_bottom=off"],
         "option kings_to_bottom is given twice"),
        (["fortress", "--seed", "1", "-o", "kings_to_bottom=on"],
         "fortress has no option 'kings_to_bottom'; its options are: foundation_takeback"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    status, out, err = deal(capsys, *argv)
    assert status == 2
    assert out == ""
    assert err.startswith("solrace deal: " + message)
    assert err.count("\n") == 1 and "Traceback" not in err
