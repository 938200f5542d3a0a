"""Reading boards out of the page's DOM and playing moves the ways a person does (click,
drag, keyboard, typing, double click). The expected boards come from the engine, run by
the test on the board it read from the DOM: an independent check of what the page draws.
"""

from __future__ import annotations

from typing import Any

import engine

RANKS = "A23456789TJQK"

_READ_BOARD = """(el) => ({
  seq: Number(el.dataset.seq),
  tableau: [...el.querySelectorAll('.pile')].map((p) => {
    const back = p.querySelector('.card.back .count');
    return {down: back ? Number(back.textContent.slice(1)) : 0,
            up: [...p.querySelectorAll('.card.up')].map((c) => c.dataset.code)};
  }),
  foundations: Object.fromEntries([...el.querySelectorAll('.found')].map(
    (f) => [f.dataset.suit, f.dataset.code ? 'A23456789TJQK'.indexOf(f.dataset.code[0]) + 1 : 0])),
  redeals_left: parseInt(el.querySelector('.redeals')?.textContent ?? '0'),
})"""


def read_board(page: Any, selector: str = ".board.own") -> dict[str, Any]:
    """The board drawn at ``selector`` as {seq, tableau, foundations, redeals_left}."""
    board: dict[str, Any] = page.eval_on_selector(selector, _READ_BOARD)
    return board


def as_view(board: dict[str, Any], variant: str, options: dict[str, Any]) -> dict[str, Any]:
    """A protocol view (PROTOCOL.md Views) of a board read from the DOM."""
    return {"variant": variant, "options": options, "tableau": board["tableau"],
            "foundations": board["foundations"], "redeals_left": board["redeals_left"]}


def legal_moves(view: dict[str, Any]) -> list[str]:
    """The rules' legal moves of ``view`` (the engine, not the page)."""
    return [str(mv) for mv in engine.game_from_view(view).legal_moves()]


def expected_after(before: dict[str, Any], move: str, after: dict[str, Any]) -> dict[str, Any]:
    """``before`` with ``move`` applied by the engine; the cards it turned up are taken
    from ``after`` (which pile lost a face-down card), since nobody can know them."""
    revealed = tuple(
        (i + 1, b["up"][0]) for i, (a, b) in enumerate(zip(before["tableau"], after["tableau"],
                                                            strict=True))
        if b["down"] < a["down"]
    )
    return engine.apply_diff(before, engine.Diff(move, revealed))


def _card(page: Any, pile: int, index: int) -> Any:
    return page.locator(f'.board.own .pile[data-pile="{pile}"] .card.up[data-index="{index}"]')


def _target(page: Any, to: int | str) -> Any:
    if to == "f":
        return page.locator(".board.own .foundations .found").first
    return page.locator(f'.board.own .pile[data-pile="{to}"]')


def play(page: Any, move: str, how: str, board: dict[str, Any]) -> None:
    """Play ``move`` on the page's own board by ``how``: click, drag, keys, typed or
    dblclick (to a foundation). Cards are grabbed by their visible top strip."""
    if how == "typed":
        page.fill('input[name="move"]', move)
        page.press('input[name="move"]', "Enter")
        return
    src, n, to = _parse(move)
    up = board["tableau"][src - 1]["up"]
    index = len(up) - n
    strip = {"x": 8, "y": 6}
    if how == "click":
        _card(page, src, index).click(position=strip)
        _target(page, to).click(position=strip)
    elif how == "dblclick":
        assert to == "f" and n == 1
        _card(page, src, index).dblclick(position=strip)
    elif how == "drag":
        box = _card(page, src, index).bounding_box()
        dest = _target(page, to).bounding_box()
        page.mouse.move(box["x"] + 8, box["y"] + 6)
        page.mouse.down()
        page.mouse.move(box["x"] + 30, box["y"] + 30, steps=3)
        page.mouse.move(dest["x"] + dest["width"] / 2, dest["y"] + 20, steps=5)
        page.mouse.up()
    elif how == "keys":
        piles = len(board["tableau"])
        page.locator("body").press("Escape")
        page.keyboard.press("Home")  # the cursor to pile 1
        for _ in range(src - 1):
            page.keyboard.press("ArrowRight")
        if to == "f":
            page.keyboard.press("f")
            return
        for _ in range(n - 1):
            page.keyboard.press("ArrowUp")
        page.keyboard.press("Enter")
        for _ in range((int(to) - src) % piles):
            page.keyboard.press("ArrowRight")
        page.keyboard.press("Enter")
    else:
        raise ValueError(how)


def _parse(move: str) -> tuple[int, int, int | str]:
    """(source pile, cards, destination pile or "f") of a tableau or foundation move."""
    left, to = move.split(">")
    if ":" in left:
        src, n = left.split(":")
        return int(src), int(n), int(to)
    return int(left), 1, "f" if to == "f" else int(to)


def pick(legal: list[str], how: str) -> str:
    """A legal move that ``how`` can play: a foundation move for dblclick, else a
    tableau move (the first), else any foundation move."""
    to_found = [m for m in legal if m.endswith(">f")]
    tableau = [m for m in legal if not m.startswith("f") and m != "redeal" and m not in to_found]
    if how == "dblclick":
        assert to_found, f"no foundation move in {legal}"
        return to_found[0]
    choices = tableau or to_found
    assert choices, f"no playable move in {legal}"
    return choices[0]


def play_checked(page: Any, how: str, variant: str, options: dict[str, Any]) -> str:
    """Read the own board, pick a legal move (engine), play it by ``how``, wait for the
    page's board to reach the next move, and check it equals the engine's result."""
    before = read_board(page)
    view = as_view(before, variant, options)
    move = pick(legal_moves(view), how)
    play(page, move, how, before)
    page.wait_for_selector(f'.board.own[data-seq="{before["seq"] + 1}"]')
    after = read_board(page)
    expected = expected_after(view, move, after)
    got = as_view(after, variant, options)
    assert got["tableau"] == expected["tableau"], move
    assert got["foundations"] == expected["foundations"], move
    return move


def default_options(variant: str) -> dict[str, Any]:
    """Every option of ``variant`` at its default (what a room created without options
    resolves to)."""
    options: dict[str, Any] = engine.new_game(variant, seed=1).view()["options"]
    return options
