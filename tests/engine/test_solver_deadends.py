"""Dead ends in Portuguese (``engine.solver.single.stuck_cards``): positions the search
drops as lost because some cards can provably never move again while one of them covers
a lower card of its suit. Every position so told must be lost for the independent
brute force (tests/engine/solver_testkit.py), and the solver's verdicts must still agree
with it."""

from __future__ import annotations

import random

import pytest

from engine import REGISTRY, Game, new_game
from engine.cards import parse
from engine.moves import TABLEAU, TO_FOUNDATION
from engine.solver import solve
from engine.solver.positions import position_for
from engine.solver.single import SinglePosition, stuck_cards

from .engine_testkit import layout
from .solver_testkit import brute_force


def tall_position(seed: int, cards_left: int) -> Game:
    """A random Portuguese position with about ``cards_left`` cards in 2-5 tall piles
    (the rest empty), foundations as high as those cards allow: deals rarely reach
    such positions, searches often do (a chain of cards each waiting for another)."""
    rng = random.Random(seed)
    heights = [0] * 4
    while 52 - sum(heights) > cards_left:
        s = rng.randrange(4)
        if heights[s] < 13:
            heights[s] += 1
    cards = [s * 13 + r for s in range(4) for r in range(heights[s], 13)]
    rng.shuffle(cards)
    piles: list[list[int]] = [[] for _ in range(13)]
    count = rng.randint(2, 5)
    for c in cards:
        piles[rng.randrange(count)].append(c)
    variant = REGISTRY["portuguese"]
    return Game(variant, variant.resolve_options({}), piles, [0] * 13, heights, 0)


def single_card_rule(piles: list[list[int]], found: list[int]) -> bool:
    """The rule the solver used before (kept here to show what the new one adds): some
    card X, not a King, lies above a lower card of its suit, and every card one rank
    higher is on its foundation or under X in X's own pile."""
    for p in piles:
        for i, x in enumerate(p):
            rank = x % 13
            if rank == 12 or not any(d // 13 == x // 13 and d < x for d in p[:i]):
                continue
            higher = [s * 13 + rank + 1 for s in range(4)]
            if all(found[c // 13] > rank + 1 or c in p[:i] for c in higher):
                return True
    return False


def mask(*codes: str) -> int:
    return sum(1 << parse(c) for c in codes)


def board(game: Game) -> SinglePosition:
    pos = position_for(game)
    pos.start()  # the safe foundation moves, as the search plays them first
    assert isinstance(pos, SinglePosition)
    return pos


def test_a_cycle_of_two_cards_is_found() -> None:
    # Spades A-7, diamonds A-J, all hearts and clubs are up. TS covers 9S and needs a
    # Jack: the only one left, JS, lies under QS. QS covers JS and needs a King: KS and
    # KD lie under TS. (QD goes up first.) Neither card alone has every destination
    # under itself, so the single-card rule misses it; the brute force agrees it is lost.
    game = Game.from_layout(layout("portuguese", ["8S JS QS QD", "KS KD 9S TS"]))
    pos = board(game)
    assert not single_card_rule(pos.piles, pos.found)
    assert stuck_cards(pos.piles, pos.found) == mask("TS", "QS")
    assert brute_force(game) is False
    result = solve(game)
    assert result.verdict == "unwinnable"
    assert result.nodes <= 2  # told at once, not by searching every position


def test_a_free_destination_breaks_the_cycle() -> None:
    # The same with the clubs from the Jack up still down: TS can go onto JC, then 9S
    # onto TS, QS onto KD, JS onto QS, and every card goes up.
    game = Game.from_layout(layout("portuguese", ["8S JS QS QD", "KS KD 9S TS", "KC QC JC"]))
    pos = board(game)
    assert stuck_cards(pos.piles, pos.found) == 0
    assert brute_force(game) is True
    assert solve(game).verdict == "won"


def test_a_king_with_an_empty_pile_to_go_to_is_not_stuck() -> None:
    # KS covers QS, but may go to an empty pile: a King is never counted stuck (it
    # would take every pile holding a stuck card, which random positions never showed)
    game = Game.from_layout(layout("portuguese", ["QS KS"]))
    pos = board(game)
    assert stuck_cards(pos.piles, pos.found) == 0
    assert solve(game).verdict == "won"


@pytest.mark.parametrize("block", range(3))
def test_positions_told_stuck_are_lost_for_the_brute_force(block: int) -> None:
    told = beyond_single = 0
    for seed in range(block * 300, block * 300 + 300):
        game = tall_position(seed, 8 + seed % 9)
        pos = board(game)
        stuck = stuck_cards(pos.piles, pos.found)
        single = single_card_rule(pos.piles, pos.found)
        if single:  # the older rule implies the new one
            assert stuck, game.to_layout()
        if stuck:
            expected = brute_force(game, max_states=30_000)
            assert expected is not True, game.to_layout()
            told += expected is False  # None: too large for the brute force
            beyond_single += expected is False and not single
    assert told >= 20 and beyond_single >= 10  # measured: 43-56 and 23-30 per block


@pytest.mark.parametrize("block", range(2))
def test_verdicts_on_tall_positions_match_the_brute_force(block: int) -> None:
    for seed in range(block * 150, block * 150 + 150):
        game = tall_position(10_000 + seed, 8 + seed % 9)
        expected = brute_force(game, max_states=30_000)
        result = solve(game, max_seconds=20)
        assert result.verdict != "unknown"
        if expected is not None:
            assert result.winnable is expected, game.to_layout()
        if result.verdict == "won":
            g = game.copy()
            for mv in result.moves:
                g.play(mv)
            assert g.won


def test_the_shortcut_after_a_tableau_move_agrees_with_the_full_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # SinglePosition._is_dead skips the full fixed point after a tableau move (with or
    # without safe foundation moves after it) unless the card moved could be stuck,
    # and stops the fixed point once it drops that card; after a foundation move,
    # unless a card one rank below a card that went up could be stuck, and stops once
    # it drops them all. On every position the searches below expand, it must say
    # what the full check says.
    original = SinglePosition._is_dead
    seen = {"checked": 0, "after a move": 0, "lost": 0, "tableau move with autos": 0,
            "lost after a tableau move": 0, "foundation move": 0,
            "lost after a foundation move": 0}

    def both(self: SinglePosition) -> bool:
        last = self._last
        quick = original(self)
        assert quick == bool(stuck_cards(self.piles, self.found)), (self.piles, self.found)
        seen["checked"] += 1
        seen["after a move"] += last is not None
        seen["lost"] += quick
        if last is not None and last[1][0] == TABLEAU:
            seen["tableau move with autos"] += bool(last[2])
            seen["lost after a tableau move"] += quick
        if last is not None and last[1][0] == TO_FOUNDATION:
            seen["foundation move"] += 1
            seen["lost after a foundation move"] += quick
        return quick

    monkeypatch.setattr(SinglePosition, "_is_dead", both)
    for seed in (18, 34, 42, 619, 1651):
        solve(new_game("portuguese", seed), max_nodes=1500)
    assert seen["after a move"] > 3000 and seen["lost"] > 100  # measured: 5,166 and 1,022
    # both new paths were taken (measured: 96 and 1,017)
    assert seen["tableau move with autos"] > 50 and seen["lost after a tableau move"] > 50
    assert seen["foundation move"] > 50


def test_the_shortcut_after_a_foundation_move_agrees_with_the_full_check() -> None:
    # After a foundation move (and the safe ones after it) from a position not lost,
    # a stuck set must hold a card one rank below a card that went up. Every
    # foundation move of random tall positions and of random walks through deals
    # (the position before it not lost, as in the search) must get the full answer.
    counts = {"moves": 0, "lost": 0}
    rng = random.Random(11)
    games = [tall_position(seed, rng.randint(8, 20)) for seed in range(400)]
    games += [new_game("portuguese", seed) for seed in range(40)]
    for game in games:
        pos = board(game)
        for _ in range(60):
            if stuck_cards(pos.piles, pos.found):
                break
            moves = pos.moves()
            for mv, _k in moves:
                if mv[0] == TO_FOUNDATION:
                    u = pos.play(mv)
                    full = bool(stuck_cards(pos.piles, pos.found))
                    assert pos._is_dead() == full, (pos.piles, pos.found)
                    counts["moves"] += 1
                    counts["lost"] += full
                    pos.undo(u)
            if not moves:
                break
            pos.play(rng.choice(moves)[0])
    assert counts["moves"] > 500 and counts["lost"] > 20
