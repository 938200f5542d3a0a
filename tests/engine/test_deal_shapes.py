"""The initial deal of each variant (RULES.md): pile sizes, face-down counts, the row by
row order, Aces out in Perseverance, and Kings to bottom as a stable partition."""

from __future__ import annotations

import pytest

import engine
from engine.cards import ACE, CODES, KING, rank
from engine.shuffle import shuffled_deck

SEEDS = [0, 1, 42, 2**63, 2**64 - 1]


def deal_row_by_row(deck: list[int], counts: list[int]) -> list[list[int]]:
    """Written from RULES.md's words, independently of engine.variants.base.deal_rows."""
    piles: list[list[int]] = [[] for _ in counts]
    it = iter(deck)
    row = 0
    while any(len(p) < c for p, c in zip(piles, counts, strict=True)):
        for i, c in enumerate(counts):
            if row < c:
                piles[i].append(next(it))
        row += 1
    return piles


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(
    ("variant", "options", "sizes"),
    [
        ("portuguese", {}, [4] * 13),
        ("spanish", {"kings_to_bottom": False}, [4] * 13),
        ("fortress", {}, [6, 6] + [5] * 8),
    ],
)
def test_face_up_deals_row_by_row(
    variant: str, options: dict[str, bool], sizes: list[int], seed: int
) -> None:
    g = engine.new_game(variant, seed=seed, **options)
    assert [len(p) for p in g.piles] == sizes
    assert g.down == [0] * len(sizes)
    assert g.found == [0, 0, 0, 0] and g.progress == 0
    assert g.piles == deal_row_by_row(shuffled_deck(seed), sizes)
    # Spot-check the words "first card to the bottom of pile 1, the next to pile 2".
    deck = shuffled_deck(seed)
    assert g.piles[0][0] == deck[0] and g.piles[1][0] == deck[1]
    assert g.piles[0][1] == deck[len(sizes)]


@pytest.mark.parametrize("seed", SEEDS)
def test_brisbane_deals_down_rows_then_up_rows(seed: int) -> None:
    g = engine.new_game("brisbane", seed=seed)
    deck = shuffled_deck(seed)
    assert g.down == [0, 1, 2, 3, 4, 5, 6]
    assert [len(p) - d for p, d in zip(g.piles, g.down, strict=True)] == [5, 5, 5, 4, 4, 4, 4]
    assert sum(g.down) == 21 and sum(len(p) for p in g.piles) == 52
    down = deal_row_by_row(deck[:21], [0, 1, 2, 3, 4, 5, 6])
    up = deal_row_by_row(deck[21:], [5, 5, 5, 4, 4, 4, 4])
    assert g.piles == [d + u for d, u in zip(down, up, strict=True)]
    # The first face-down row starts at pile 2; the first face-up row at pile 1.
    assert g.piles[1][0] == deck[0] and g.piles[0][0] == deck[21]
    view = g.view()
    assert [p["down"] for p in view["tableau"]] == [0, 1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize("seed", SEEDS)
def test_perseverance_takes_the_aces_out_and_deals_the_rest(seed: int) -> None:
    g = engine.new_game("perseverance", seed=seed, kings_to_bottom=False)
    assert g.found == [1, 1, 1, 1] and g.progress == 4
    assert g.redeals_left == 2
    rest = [c for c in shuffled_deck(seed) if rank(c) != ACE]
    assert g.piles == deal_row_by_row(rest, [4] * 12)
    assert not any(rank(c) == ACE for p in g.piles for c in p)
    assert g.view()["foundations"] == {"S": 1, "H": 1, "D": 1, "C": 1}


def kings_first(pile: list[int]) -> list[int]:
    return [c for c in pile if rank(c) == KING] + [c for c in pile if rank(c) != KING]


def interesting_seed(variant: str) -> int:
    """A seed whose deal (without Kings to bottom) has a pile with two Kings and a
    non-King under a King, so stability and movement are both exercised."""
    for seed in range(5000):
        g = engine.new_game(variant, seed=seed, kings_to_bottom=False)
        for p in g.piles:
            ks = [i for i, c in enumerate(p) if rank(c) == KING]
            if len(ks) >= 2 and ks[-1] > len(ks) - 1:
                return seed
    raise AssertionError("no seed with two Kings in one pile among 5000")


@pytest.mark.parametrize(
    ("variant", "default"), [("portuguese", False), ("spanish", True), ("perseverance", True)]
)
def test_kings_to_bottom_is_a_stable_partition(variant: str, default: bool) -> None:
    seed = interesting_seed(variant)
    off = engine.new_game(variant, seed=seed, kings_to_bottom=False)
    on = engine.new_game(variant, seed=seed, kings_to_bottom=True)
    assert on.piles == [kings_first(p) for p in off.piles]
    assert on.piles != off.piles
    assert engine.new_game(variant, seed=seed).piles == (on if default else off).piles
    assert engine.new_game(variant, seed=seed).options["kings_to_bottom"] is default
    # Kings keep their order among themselves: compare the King sequences pile by pile.
    for p_on, p_off in zip(on.piles, off.piles, strict=True):
        assert [c for c in p_on if rank(c) == KING] == [c for c in p_off if rank(c) == KING]


@pytest.mark.parametrize("variant", ["brisbane", "fortress"])
def test_variants_without_kings_to_bottom_refuse_the_option(variant: str) -> None:
    with pytest.raises(engine.BadOption, match="kings_to_bottom"):
        engine.new_game(variant, seed=1, kings_to_bottom=True)


@pytest.mark.parametrize("variant", engine.VARIANTS)
def test_every_deal_holds_each_card_once(variant: str) -> None:
    for seed in range(20):
        layout = engine.new_game(variant, seed=seed).to_layout()
        cards = [c for p in layout["tableau"] for c in p["down"] + p["up"]]
        on_found = sum(layout["foundations"].values())
        assert len(cards) + on_found == 52
        assert len(set(cards)) == len(cards)
        assert set(cards) <= set(CODES)


def test_seed_gives_same_deal_and_different_seeds_differ() -> None:
    for variant in engine.VARIANTS:
        a = engine.new_game(variant, seed=7).to_layout()
        assert a == engine.new_game(variant, seed=7).to_layout()
        assert a != engine.new_game(variant, seed=8).to_layout()


def test_to_layout_lists_every_option() -> None:
    assert engine.new_game("perseverance", seed=1).to_layout()["options"] == {
        "kings_to_bottom": True,
        "redeals": 2,
        "redeal_when": "stuck",
    }
    assert engine.new_game("portuguese", seed=1).to_layout()["options"] == {
        "kings_to_bottom": False
    }
    assert engine.new_game("spanish", seed=1).to_layout()["options"] == {
        "kings_to_bottom": True,
        "foundation_takeback": False,
    }
    assert engine.new_game("brisbane", seed=1).to_layout()["options"] == {"empty_pile": "king"}
    assert engine.new_game("fortress", seed=1).to_layout()["options"] == {
        "foundation_takeback": False
    }
