"""Resume tokens: made, parsed, hashed."""

from __future__ import annotations

import pytest

from protocol import Code, ProtocolError, decode_client, encode
from protocol import messages as M
from protocol.tokens import make_token, new_secret, parse_token, secret_hash, secret_matches


def test_a_token_round_trips_and_passes_the_hello_field() -> None:
    secret = new_secret()
    assert len(secret) == 43
    token = make_token("QX7KD", 3, secret)
    assert token == f"QX7KD.3.{secret}"
    assert parse_token(token) == ("QX7KD", 3, secret)
    hello = M.Hello(version=1, name="ann", token=token, seen=12)
    assert decode_client(encode(hello)) == hello


@pytest.mark.parametrize(
    "token",
    ["", "QX7KD", "QX7KD.3", "QX7KD.0.abcdefghijklmnop", "QX7KD.17.abcdefghijklmnop",
     "QX7KD.03.abcdefghijklmnop", "QX.7KD.3.abcdefghijklmnop", "QX7KD.3.short",
     "QX7KD.3.abcdefghijklmnop!", "QX7KD.3." + "a" * 44],
)
def test_malformed_tokens_are_bad_token_without_echoing_them(token: str) -> None:
    with pytest.raises(ProtocolError) as info:
        parse_token(token)
    assert info.value.code == Code.BAD_TOKEN
    assert "<room code>.<seat>.<secret>" in info.value.message
    assert not token or token not in info.value.message


def test_make_token_refuses_what_parse_token_would_refuse() -> None:
    with pytest.raises(ValueError):
        make_token("A.B", 1, new_secret())
    with pytest.raises(ValueError):
        make_token("ROOM", 17, new_secret())
    with pytest.raises(ValueError):
        make_token("ROOM", 1, "tooshort")


def test_the_secret_hash_is_sha256_hex_and_matches_only_its_secret() -> None:
    assert secret_hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert secret_matches("abc", secret_hash("abc"))
    assert not secret_matches("abd", secret_hash("abc"))
