"""The page's own hashing, checked inside chromium against values computed elsewhere:
the commitment example of PROTOCOL.md (generated from protocol/ by Python) and, for the
plain-JS SHA-256 used outside secure contexts, WebCrypto and Python's hashlib."""

from __future__ import annotations

import hashlib
import re

import pytest

import engine

from .conftest import Pages

pytestmark = pytest.mark.slow

_CHECK = """async ([build, inputs, view]) => {
  const c = await import(`/s/${build}/crypto.js`);
  const cards = await import(`/s/${build}/cards.js`);
  const enc = new TextEncoder();
  const out = {js: [], subtle: []};
  for (const text of inputs) {
    out.js.push(c.toHex(c.sha256Js(enc.encode(text))));
    const digest = await crypto.subtle.digest('SHA-256', enc.encode(text));
    out.subtle.push(c.toHex(new Uint8Array(digest)));
  }
  out.commitment = await c.commitment(7, '000102030405060708090a0b0c0d0e0f');
  out.bigSeed = await c.commitment(18446744073709551615n, '000102030405060708090a0b0c0d0e0f');
  out.hash = await cards.stateHash(view);
  return out;
}"""


def test_sha256_commitment_and_state_hash_in_the_page(pages: Pages) -> None:
    page = pages.open("/")
    page.wait_for_selector("form.create")
    build = re.search(r"/s/([0-9a-f]+)/app\.js", page.content())
    assert build is not None
    inputs = ["", "abc", "x" * 55, "y" * 56, "z" * 64, "solrace" * 150]
    view = engine.new_game("brisbane", seed=7).view()
    got = page.evaluate(_CHECK, [build.group(1), inputs, view])
    expected = [hashlib.sha256(text.encode()).hexdigest() for text in inputs]
    assert got["js"] == expected and got["subtle"] == expected
    salt = "000102030405060708090a0b0c0d0e0f"
    # PROTOCOL.md's worked commitment (seed 7), and the largest seed (a BigInt in JS).
    assert got["commitment"] == "b4337fa10dbe6742a3a11e2daecc535b141187f14f655823dcc811e8f52cad94"
    assert got["bigSeed"] == hashlib.sha256(
        b"solrace-commit-v1" + (2**64 - 1).to_bytes(8, "big") + bytes.fromhex(salt)).hexdigest()
    # PROTOCOL.md's state-hash example: a fresh Brisbane deal, seed 7.
    assert got["hash"] == 631588648
