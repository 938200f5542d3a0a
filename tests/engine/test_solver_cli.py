"""``solrace solve``: verdicts, solutions, JSON, layouts from files and stdin, and one
clear line with exit status 2 for every kind of bad input."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from client_cli.main import main
from engine import Game, new_game


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["solve", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_a_won_deal_prints_a_solution_that_replays(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "spanish", "--seed", "5", "--json")
    assert status == 0 and err == ""
    report = json.loads(out)
    assert report["verdict"] == "won" and report["seed"] == 5
    assert report["options"] == {"kings_to_bottom": True, "foundation_takeback": False}
    assert report["nodes"] >= 1 and report["seconds"] >= 0
    game = new_game("spanish", 5)
    for mv in report["moves"]:
        game.play(mv)
    assert game.won


def test_the_readable_report(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "fortress", "--seed", "3")
    assert status == 0
    assert out.splitlines()[0] == "Fortress, seed 3 (foundation_takeback=false)"
    assert "verdict: unwinnable (all " in out and "searched " in out
    status, out, _ = run(capsys, "fortress", "--seed", "5")
    assert "verdict: won (" in out


def test_options_are_read_with_the_variants_own_parser(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = run(capsys, "perseverance", "--seed", "1", "-o", "redeals=0",
                         "--option", "redeal_when=any_time", "--json")
    assert status == 0
    assert json.loads(out)["options"] == {
        "kings_to_bottom": True, "redeals": 0, "redeal_when": "any_time"}


def test_a_budget_that_runs_out_says_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "portuguese", "--seed", "0", "--max-nodes", "3", "--json")
    assert status == 0
    report = json.loads(out)
    assert report["verdict"] == "unknown" and report["moves"] == []
    assert "node budget" in report["reason"]


def test_a_layout_file_and_stdin(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = new_game("brisbane", 2).to_layout()
    path = tmp_path / "pos.json"
    path.write_text(json.dumps(layout))
    status, out, _ = run(capsys, "brisbane", "--layout", str(path), "--json")
    assert status == 0
    report = json.loads(out)
    assert report["seed"] is None and report["verdict"] in ("won", "unwinnable", "unknown")
    if report["verdict"] == "won":
        game = Game.from_layout(layout)
        for mv in report["moves"]:
            game.play(mv)
        assert game.won
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(layout)))
    status, out, _ = run(capsys, "brisbane", "--layout", "-", "--max-seconds", "5")
    assert status == 0 and out.startswith("Brisbane, layout (empty_pile=king)")


@pytest.mark.parametrize(("argv", "message"), [
    (["klondike", "--seed", "1"], "unknown variant 'klondike'"),
    (["spanish"], "--seed N is required"),
    (["spanish", "--seed", "-1"], "a seed must be in 0 .. 2**64-1"),
    (["spanish", "--seed", "ten"], "bad seed 'ten'"),
    (["spanish", "--seed", "1", "-o", "redeals=2"], "spanish has no option 'redeals'"),
    (["spanish", "--seed", "1", "-o", "kings_to_bottom=maybe"], "takes true or false"),
    (["spanish", "--seed", "1", "-o", "kings_to_bottom"], "must be written NAME=VALUE"),
    (["spanish", "--seed", "1", "--max-seconds", "0"], "--max-seconds must be above 0"),
    (["spanish", "--seed", "1", "--max-seconds", "nan"], "--max-seconds must be above 0"),
    (["spanish", "--seed", "1", "--max-seconds", "soon"], "--max-seconds takes a number"),
    (["spanish", "--seed", "1", "--max-nodes", "1.5"], "--max-nodes takes a whole number"),
    (["spanish", "--layout", "/nonexistent/pos.json"], "cannot read /nonexistent/pos.json"),
    (["spanish", "--seed", "1", "--layout", "x.json"], "leave out --seed and --option"),
])
def test_bad_input_gets_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == ""
    assert err.startswith("solrace solve: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(("text", "message"), [
    ("{not json", "is not valid JSON"),
    ('{"variant": "fortress"}', "is 'fortress', not 'spanish'"),
    ('{"variant": "spanish"}', "the layout has no 'tableau'"),
    ("[1, 2]", "a layout must be a JSON object"),
    ('{"variant": 7}', "is a value of type int, not 'spanish'"),
    # 100,000 levels: the JSON decoder recurses per level (a RecursionError before)
    ('{"variant": "spanish", "tableau": ' + "[" * 100_000 + "]" * 100_000 + "}",
     "nested too deeply"),
    ('{"variant": ' + "[" * 900 + "]" * 900 + "}", "is a value of type list, not 'spanish'"),
])
def test_bad_layouts_get_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    status, out, err = run(capsys, "spanish", "--layout", str(path))
    assert status == 2 and out == ""
    assert message in err and err.count("\n") == 1


def test_variant_names_are_case_insensitive(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out, _ = run(capsys, "Spanish", "--seed", "5", "--json")
    assert status == 0 and json.loads(out)["variant"] == "spanish"
    layout = new_game("spanish", 5).to_layout()
    layout["variant"] = "SPANISH"
    path = tmp_path / "pos.json"
    path.write_text(json.dumps(layout))
    status, out, err = run(capsys, "spanish", "--layout", str(path), "--json")
    assert status == 0, err
    assert json.loads(out)["verdict"] == "won"
