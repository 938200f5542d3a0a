"""Property tests over random playouts of every variant and every option combination.

At every step of a playout: the 52 cards are all there once; every listed legal move
plays; moves not listed (drawn from every notation form) raise ``IllegalMove`` and change
nothing; the diffs, applied one by one to the initial view, give the current view; the
view's hash is the game's; no view shows a face-down card; layouts round-trip; a copy is
independent; a client's ``game_from_view`` has the same legal moves. Same seed, same deal.
"""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine import Game, IllegalMove, apply_diff, parse_move, view_hash
from engine.cards import CODES, SUITS
from engine.moves import REDEAL, TO_FOUNDATION

SEEDS = st.integers(min_value=0, max_value=2**64 - 1)
STEPS = 80  # moves per playout
CANDIDATES = 30  # unlisted candidate moves tried per step


def option_combos() -> list[tuple[str, dict[str, Any]]]:
    """Every variant with every combination of its options (redeals: 0, 1, 2)."""
    out = []
    for name in engine.VARIANTS:
        specs = engine.get_variant(name).options
        values = []
        for spec in specs.values():
            if isinstance(spec.default, bool):
                values.append([False, True])
            elif isinstance(spec.default, int):
                values.append([0, 1, 2])
            else:
                values.append(list(spec.choices))
        for combo in itertools.product(*values):
            out.append((name, dict(zip(specs, combo, strict=True))))
    return out


COMBOS = option_combos()
COMBO_IDS = [f"{v}-" + "-".join(f"{k}={o[k]}" for k in o) for v, o in COMBOS]


def snapshot(g: Game) -> tuple[Any, ...]:
    """Everything a move could change, for "the game is unchanged" checks."""
    return ([p[:] for p in g.piles], g.down[:], g.found[:], g.redeals_left)


def candidate(rng: random.Random, piles: int, longest: int) -> str:
    """A move string in one of the notation forms, with pile numbers and counts a little
    beyond what exists (``piles`` piles, ``longest`` cards at most) so the edges are tried
    too."""
    pile = rng.randint(1, piles + 1)
    form = rng.randrange(5)
    if form == 0:
        return f"{pile}>{rng.randint(1, piles + 1)}"
    if form == 1:
        return f"{pile}:{rng.randint(2, max(2, longest))}>{rng.randint(1, piles + 1)}"
    if form == 2:
        return f"{pile}>f"
    if form == 3:
        return f"f{rng.choice(SUITS)}>{rng.randint(1, piles + 1)}"
    return "redeal"


def check_cards(g: Game) -> None:
    cards = [c for p in g.piles for c in p]
    cards += [s * 13 + r for s in range(4) for r in range(g.found[s])]
    assert sorted(cards) == list(range(52))
    assert all(0 <= d <= len(p) for p, d in zip(g.piles, g.down, strict=True))
    assert all(d == 0 or len(p) > d for p, d in zip(g.piles, g.down, strict=True))


def check_view(g: Game, view: dict[str, Any]) -> None:
    assert view == g.view()
    assert view_hash(view) == g.state_hash()
    text = json.dumps(view)
    for p, d in zip(g.piles, g.down, strict=True):
        for c in p[:d]:
            assert f'"{CODES[c]}"' not in text, f"face-down {CODES[c]} shows in the view"


def check_round_trip(g: Game) -> None:
    layout = g.to_layout()
    again = Game.from_layout(json.loads(json.dumps(layout)))
    assert again.to_layout() == layout
    assert again.state_hash() == g.state_hash()
    assert again.legal_moves() == g.legal_moves()


def check_moves(g: Game, rng: random.Random) -> list[engine.Move]:
    moves = g.legal_moves()
    listed = {str(m) for m in moves}
    assert len(listed) == len(moves), "a move is listed twice"
    if g.won:
        assert moves == []
    assert g.stuck == (not moves and not g.won)
    for m in moves:
        assert parse_move(str(m)) == m
        trial = g.copy()
        trial.play(str(m))  # every listed move plays
    before = snapshot(g)
    longest = max(len(p) for p in g.piles) + 1
    for _ in range(CANDIDATES):
        text = candidate(rng, len(g.piles), longest)
        if text in listed:
            continue
        try:
            g.play(text)
        except IllegalMove:
            pass
        else:
            raise AssertionError(f"{text!r} is not listed as legal but was accepted")
        assert snapshot(g) == before, f"refused {text!r} changed the game"
    assert engine.game_from_view(g.view()).legal_moves() == moves
    return moves


def choose(rng: random.Random, moves: list[engine.Move]) -> engine.Move:
    """Mostly random, but foundation moves are favoured so playouts make progress."""
    home = [m for m in moves if m.kind == TO_FOUNDATION]
    if home and rng.random() < 0.5:
        return rng.choice(home)
    return rng.choice(moves)


@pytest.mark.parametrize(("variant", "options"), COMBOS, ids=COMBO_IDS)
@settings(max_examples=6, deadline=None)
@given(seed=SEEDS, rng_seed=st.integers(0, 2**32 - 1))
def test_random_playout(variant: str, options: dict[str, Any], seed: int, rng_seed: int) -> None:
    rng = random.Random(rng_seed)
    g = engine.new_game(variant, seed=seed, **options)
    first_view = g.view()
    view = first_view
    diffs = []
    for step in range(STEPS):
        check_cards(g)
        check_view(g, view)
        check_round_trip(g)
        moves = check_moves(g, rng)
        if not moves:
            break
        if step % 10 == 0:
            before = snapshot(g)
            twin = g.copy()
            twin.play(moves[-1])
            assert snapshot(g) == before != snapshot(twin)
        move = choose(rng, moves)
        down_before = g.down[:]
        diff = g.play(str(move))
        assert diff.move == str(move)
        # A reveal names exactly the pile whose face-down count fell, and its new top.
        flipped = [i + 1 for i, (a, b) in enumerate(zip(down_before, g.down, strict=True))
                   if b < a and move.kind != REDEAL]
        assert [n for n, _ in diff.revealed] == flipped
        for n, code in diff.revealed:
            assert CODES[g.piles[n - 1][-1]] == code and g.down[n - 1] == len(g.piles[n - 1]) - 1
        diffs.append(diff)
        view = apply_diff(view, diff)
    check_view(g, view)
    replay = first_view
    for diff in diffs:
        replay = apply_diff(replay, diff)
    assert replay == g.view()


@settings(max_examples=40, deadline=None)
@given(combo=st.sampled_from(COMBOS), seed=SEEDS)
def test_same_seed_same_deal(combo: tuple[str, dict[str, Any]], seed: int) -> None:
    variant, options = combo
    a = engine.new_game(variant, seed=seed, **options)
    b = engine.new_game(variant, seed=seed, **options)
    assert a.to_layout() == b.to_layout()
    assert a.state_hash() == b.state_hash()
    assert a.legal_moves() == b.legal_moves()
    check_cards(a)


@settings(max_examples=30, deadline=None)
@given(combo=st.sampled_from(COMBOS), seed=SEEDS, rng_seed=st.integers(0, 2**32 - 1))
def test_copy_is_independent(combo: tuple[str, dict[str, Any]], seed: int, rng_seed: int) -> None:
    variant, options = combo
    rng = random.Random(rng_seed)
    g = engine.new_game(variant, seed=seed, **options)
    original = g.to_layout()
    twin = g.copy()
    for _ in range(20):
        moves = twin.legal_moves()
        if not moves:
            break
        twin.play(rng.choice(moves))
    assert g.to_layout() == original  # playing the copy left the original alone
    twin_layout = twin.to_layout()
    for _ in range(20):
        moves = g.legal_moves()
        if not moves:
            break
        g.play(rng.choice(moves))
    assert twin.to_layout() == twin_layout  # and the other way round


NOTATION_CHARS = "0123456789:>fSHDCredalX -"


@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet=NOTATION_CHARS, max_size=8)
       | st.from_regex(r"[1-9][0-9]?(:[0-9]{1,2})?>([1-9][0-9]?|f)|f[SHDCX]>[0-9]{1,2}|redeal",
                       fullmatch=True))
def test_accepted_notation_is_canonical(text: str) -> None:
    """Whatever parse_move accepts prints back as exactly the same string (so a diff can
    carry the player's own string), and parsing twice gives the same move (the cache)."""
    try:
        move = parse_move(text)
    except engine.BadNotation:
        return
    assert str(move) == text
    assert parse_move(text) == move


def test_no_variant_has_more_piles_than_the_move_tables() -> None:
    from engine.moves import MAX_PILES

    assert max(v.piles for v in engine.REGISTRY.values()) <= MAX_PILES
