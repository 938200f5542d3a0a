"""Every message type survives encode → decode unchanged, in both directions."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import decode_client, decode_server, encode
from protocol.codec import CLIENT_TYPES, SERVER_TYPES

from .strategies import CLIENT_CLASSES, SERVER_CLASSES, message


@pytest.mark.parametrize("cls", CLIENT_CLASSES, ids=lambda c: c.__name__)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_client_messages_round_trip(cls: type[msgspec.Struct], data: st.DataObject) -> None:
    original = data.draw(message(cls))
    frame = encode(original)
    assert decode_client(frame) == original
    assert encode(decode_client(frame)) == frame  # canonical: one encoding per message


@pytest.mark.parametrize("cls", SERVER_CLASSES, ids=lambda c: c.__name__)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_server_messages_round_trip(cls: type[msgspec.Struct], data: st.DataObject) -> None:
    original = data.draw(message(cls))
    frame = encode(original)
    assert decode_server(frame) == original
    assert encode(decode_server(frame)) == frame


def test_tags_are_unique_within_each_direction() -> None:
    assert len(CLIENT_TYPES) == len(CLIENT_CLASSES)
    assert len(SERVER_TYPES) == len(SERVER_CLASSES)


def test_the_type_key_comes_first_and_defaults_are_left_out() -> None:
    from protocol.messages import Accepted, Move

    assert encode(Move(seq=1, move="3>7")) == b"\x83\xa1t\xa1M\xa1s\x01\xa1m\xa33>7"
    frame = encode(Accepted(seq=1, hash=5, clock_ms=9))
    assert frame[:4] == b"\x84\xa1t\xa1" and b"\xa1r" not in frame  # no empty `revealed`
