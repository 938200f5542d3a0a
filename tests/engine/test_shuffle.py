"""The seeded shuffle, the deals, the commitment and the state hash against the test
vectors of docs/DEALS.md -- read out of the document itself, so doc and code cannot
drift -- and against a reference re-implementation written here from the document's
words alone (it imports nothing from the engine)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.cards import CODES
from engine.shuffle import COMMIT_PREFIX, SplitMix64, shuffled_deck
from engine.statehash import hash_text

from .reference_deal import M, ref_deal, ref_deck, ref_hash, ref_outputs

DOC = Path(__file__).resolve().parents[2] / "docs" / "DEALS.md"
VECTORS = DOC.read_text(encoding="utf-8").split("## Test vectors", 1)[1]


# ------------------------------------------------------------------ the vectors
SHUFFLE = re.findall(r"^seed (\d+)\nsplitmix64 ((?:[0-9a-f]{16} ?)+)\n"
                     r"deck ((?:[2-9TJQKA][SHDC] ?)+)$", VECTORS, re.M)
DEALS = re.findall(r"^deal (\w+) seed (\d+)\noptions (.*)\n((?:pile \d+: .*\n)+)foundations (.*)$",
                   VECTORS, re.M)
HASHES = re.findall(r"^view (\w+) seed (\d+)(?: after (\S+) revealed (\d+):(\w\w))?\n"
                    r"hash-text (\S+)\nhash 0x([0-9a-f]{8})$", VECTORS, re.M)
COMMITS = re.findall(r"^commit seed (\d+) salt ([0-9a-f]+)\nbytes ([0-9a-f]+)\n"
                     r"commitment ([0-9a-f]{64})$", VECTORS, re.M)


def test_the_document_has_all_the_vectors() -> None:
    seeds = {int(s) for s, _, _ in SHUFFLE}
    assert {0, 1, 42, 2**64 - 1} <= seeds
    assert len(SHUFFLE) == VECTORS.count("\nseed ")
    assert sorted(v for v, *_ in DEALS) == sorted(engine.VARIANTS)
    assert len(HASHES) == VECTORS.count("\nview ") >= 2
    assert len(COMMITS) == 1


@pytest.mark.parametrize(("seed", "outputs", "deck"), SHUFFLE, ids=[s for s, _, _ in SHUFFLE])
def test_shuffle_vectors(seed: str, outputs: str, deck: str) -> None:
    expected_outputs = [int(x, 16) for x in outputs.split()]
    rng = SplitMix64(int(seed))
    assert [rng.next() for _ in expected_outputs] == expected_outputs
    assert ref_outputs(int(seed), len(expected_outputs)) == expected_outputs
    codes = deck.split()
    assert len(codes) == 52 and sorted(codes) == sorted(CODES)
    assert [CODES[c] for c in shuffled_deck(int(seed))] == codes
    assert ref_deck(int(seed)) == codes


def test_splitmix64_matches_the_published_reference() -> None:
    # Vigna's splitmix64.c seeded with 0 (an anchor outside this project's documents).
    rng = SplitMix64(0)
    assert [rng.next() for _ in range(3)] == [
        0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F,
    ]


def test_a_rejected_draw_is_skipped() -> None:
    seed = 3558559446808474027
    first, second = ref_outputs(seed, 2)
    assert first == M - 1 >= M - M % 52  # the first draw is rejected for n = 52
    rng = SplitMix64(seed)
    assert rng.below(52) == second % 52
    # Without the rejection the first swap would differ.
    assert first % 52 != second % 52
    deck = list(CODES)
    j = second % 52
    deck[51], deck[j] = deck[j], deck[51]
    assert [CODES[c] for c in shuffled_deck(seed)][51] == deck[51]


def parse_value(text: str) -> bool | int | str:
    if text in ("true", "false"):
        return text == "true"
    return int(text) if text.isdigit() else text


@pytest.mark.parametrize(("variant", "seed", "options", "piles", "found"), DEALS,
                         ids=[d[0] for d in DEALS])
def test_deal_vectors(variant: str, seed: str, options: str, piles: str, found: str) -> None:
    opts = {k: parse_value(v) for k, v in (kv.split("=") for kv in options.split())}
    expected = []
    for number, line in enumerate(piles.strip().split("\n"), 1):
        label, cards = line.split(": ")
        assert label == f"pile {number}"
        down, _, up = cards.rpartition("|")
        expected.append((down.split(), up.split()))
    layout = engine.new_game(variant, seed=int(seed), **opts).to_layout()
    assert layout["options"] == opts  # the vector lists every option
    assert [(p["down"], p["up"]) for p in layout["tableau"]] == expected
    assert ref_deal(variant, int(seed), opts) == expected
    fields = dict(kv.split("=") for kv in found.split())
    assert {s: int(fields[s]) for s in "SHDC"} == layout["foundations"]
    assert int(fields["redeals_left"]) == layout["redeals_left"]


@pytest.mark.parametrize(("variant", "seed", "move", "pile", "card", "text", "value"), HASHES)
def test_state_hash_vectors(
    variant: str, seed: str, move: str, pile: str, card: str, text: str, value: str
) -> None:
    g = engine.new_game(variant, seed=int(seed))
    if move:
        diff = g.play(move)
        assert diff.revealed == ((int(pile), card),)
    view = g.view()
    found = [view["foundations"][s] for s in "SHDC"]
    ours = hash_text([(p["down"], p["up"]) for p in view["tableau"]], found, view["redeals_left"])
    assert ours == text
    assert g.state_hash() == engine.view_hash(view) == ref_hash(text) == int(value, 16)


@pytest.mark.parametrize(("seed", "salt", "data", "digest"), COMMITS)
def test_commitment_vector(seed: str, salt: str, data: str, digest: str) -> None:
    ref_data = b"solrace-commit-v1" + int(seed).to_bytes(8, "big") + bytes.fromhex(salt)
    assert ref_data.hex() == data
    assert COMMIT_PREFIX + int(seed).to_bytes(8, "big") + bytes.fromhex(salt) == ref_data
    assert hashlib.sha256(ref_data).hexdigest() == digest
    assert engine.commitment(int(seed), salt) == digest
    assert engine.verify_commitment(int(seed), salt, digest)
    assert engine.verify_commitment(int(seed), salt, digest.upper())
    assert not engine.verify_commitment(int(seed) + 1, salt, digest)
    assert not engine.verify_commitment(int(seed), salt[:-2] + "ff", digest)
    assert not engine.verify_commitment(int(seed), salt, "é" * 64)


@pytest.mark.parametrize("salt", ["", "abc", "00 11", "zz", "0x00"])
def test_bad_salts(salt: str) -> None:
    with pytest.raises(engine.BadSeed, match="a salt must be an even number of hex digits"):
        engine.commitment(1, salt)


def test_new_salt_is_16_random_bytes() -> None:
    salts = {engine.new_salt() for _ in range(20)}
    assert len(salts) == 20
    assert all(re.fullmatch(r"[0-9a-f]{32}", s) for s in salts)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**64 - 1))
def test_any_seed_matches_the_reference(seed: int) -> None:
    deck = [CODES[c] for c in shuffled_deck(seed)]
    assert deck == ref_deck(seed)
    assert sorted(deck) == sorted(CODES)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**64 - 1),
       variant=st.sampled_from(engine.VARIANTS))
def test_any_deal_matches_the_reference(seed: int, variant: str) -> None:
    layout = engine.new_game(variant, seed=seed).to_layout()
    got = [(p["down"], p["up"]) for p in layout["tableau"]]
    assert got == ref_deal(variant, seed, layout["options"])


def test_below_is_in_range_for_every_n() -> None:
    rng = SplitMix64(7)
    for n in range(1, 53):
        draws = {rng.below(n) for _ in range(200)}
        assert draws <= set(range(n))
        if n <= 20:  # with a fixed seed, 200 draws cover every value of a small range
            assert draws == set(range(n))


def test_the_python_in_the_document_gives_the_vectors() -> None:
    code = re.search(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert code is not None
    namespace: dict[str, Any] = {}
    exec(code[1], namespace)  # the doc's own listing, run as written
    for seed, _, deck in SHUFFLE:
        assert namespace["deck_order"](int(seed)) == deck.split()
