"""Interop: a client written in another language, with a plain MessagePack library, speaks
the protocol. Here the plain library is `msgpack` (not msgspec): maps it packs decode with
our codec, and our frames unpack to plain maps with exactly the documented keys."""

from __future__ import annotations

from typing import Any

import msgpack
import msgspec
from hypothesis import given, settings
from msgspec import inspect as mi

from protocol import decode_client, decode_server, encode
from protocol import messages as M

from .strategies import any_client_message, any_server_message


def wire_keys(cls: type[msgspec.Struct]) -> set[str]:
    """The keys PROTOCOL.md documents for a struct: ``t`` (for messages) and its fields'."""
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    keys = {f.encode_name for f in info.fields}
    return keys | ({info.tag_field} if info.tag_field else set())


def _lists(value: Any) -> Any:
    """A builtin value as a plain MessagePack library returns it: tuples become lists."""
    if isinstance(value, list | tuple):
        return [_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    return value


def check_plain(value: Any, struct: msgspec.Struct) -> None:
    """``value`` (from msgpack.unpackb) is a plain map with only ``struct``'s documented
    keys, holding the same values; nested structs are checked the same way."""
    assert isinstance(value, dict)
    cls = type(struct)
    assert set(value) <= wire_keys(cls), set(value) - wire_keys(cls)
    for f in mi.type_info(cls).fields:  # type: ignore[attr-defined]
        inner = getattr(struct, f.name)
        if f.encode_name not in value:
            assert not f.required and inner == (
                f.default if f.default is not msgspec.NODEFAULT else f.default_factory()
            ), f"{cls.__name__}.{f.name} left out but not at its default"
            continue
        got = value[f.encode_name]
        if isinstance(inner, msgspec.Struct):
            check_plain(got, inner)
        elif isinstance(inner, list) and inner and isinstance(inner[0], msgspec.Struct):
            assert len(got) == len(inner)
            for g, s in zip(got, inner, strict=True):
                check_plain(g, s)
        else:
            assert got == _lists(msgspec.to_builtins(inner))


@settings(max_examples=300, deadline=None)
@given(any_client_message())
def test_client_frames_unpack_to_documented_plain_maps_and_back(message: msgspec.Struct) -> None:
    plain = msgpack.unpackb(encode(message), raw=False, strict_map_key=False)
    assert plain["t"] == message.__struct_config__.tag
    check_plain(plain, message)
    # ... and what a plain library packs from those maps decodes to the same message.
    assert decode_client(msgpack.packb(plain, use_bin_type=True)) == message


@settings(max_examples=300, deadline=None)
@given(any_server_message())
def test_server_frames_unpack_to_documented_plain_maps_and_back(message: msgspec.Struct) -> None:
    plain = msgpack.unpackb(encode(message), raw=False, strict_map_key=False)
    check_plain(plain, message)
    assert decode_server(msgpack.packb(plain, use_bin_type=True)) == message


def test_hand_written_client_maps_decode() -> None:
    p = msgpack.packb
    assert decode_client(p({"t": "hello", "v": 1, "n": "Ann", "b": True})) == M.Hello(
        version=1, name="Ann", bot=True
    )
    assert decode_client(p({"t": "M", "m": "3:2>7", "s": 12})) == M.Move(seq=12, move="3:2>7")
    assert decode_client(p({"t": "create", "r": {"v": "perseverance", "o": {"redeals": 1}}})) == (
        M.CreateRoom(settings=M.RoomSettings(variant="perseverance", options={"redeals": 1}))
    )
    assert decode_client(p({"t": "join", "c": "QX7KD", "r": "spectator"})) == M.Join(
        code="QX7KD", role="spectator"
    )


def test_other_encoders_choices_of_width_decode_the_same() -> None:
    # Another library may use wider encodings than needed: a map16 header, str8 keys,
    # uint32 for a small integer, a float-free int64 for a negative option. All are valid.
    frame = (
        b"\xde\x00\x03"  # map16 with 3 entries
        + b"\xd9\x01t" + b"\xd9\x01M"  # str8 "t": str8 "M"
        + b"\xd9\x01s" + b"\xce\x00\x00\x00\x07"  # "s": uint32 7
        + b"\xda\x00\x01m" + b"\xda\x00\x03" + b"2>f"  # str16 "m": str16 "2>f"
    )
    assert decode_client(frame) == M.Move(seq=7, move="2>f")
    frame = b"\x82\xa1t\xa6create\xa1r\x82\xa1v\xa7spanish\xa1o\x81\xa1x\xd3" + (
        (-5).to_bytes(8, "big", signed=True)
    )
    assert decode_client(frame).settings.options == {"x": -5}  # type: ignore[union-attr]


def test_a_revealed_card_is_a_two_element_array() -> None:
    plain = msgpack.unpackb(encode(M.Accepted(seq=9, hash=1, clock_ms=2, revealed=[(4, "QS")])))
    assert plain == {"t": "A", "s": 9, "h": 1, "c": 2, "r": [[4, "QS"]]}
