"""Every string, list, map and integer a client sends is bounded, and the largest valid
client message still fits in a frame."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from msgspec import inspect as mi

from protocol import decode_client, encode
from protocol import limits as L
from protocol import messages as M

from .strategies import CLIENT_CLASSES


def _unbounded(t: mi.Type, where: str) -> Iterator[str]:
    """Every place under ``t`` that accepts values without a bound."""
    if isinstance(t, mi.Metadata):
        yield from _unbounded(t.type, where)
    elif isinstance(t, mi.IntType):
        if (t.ge is None and t.gt is None) or (t.le is None and t.lt is None):
            yield f"{where}: int without both bounds"
    elif isinstance(t, mi.StrType):
        if t.max_length is None:
            yield f"{where}: str without max_length"
    elif isinstance(t, mi.ListType | mi.DictType):
        if t.max_length is None:
            yield f"{where}: container without max_length"
        if isinstance(t, mi.DictType):
            yield from _unbounded(t.key_type, f"{where}[key]")
            yield from _unbounded(t.value_type, f"{where}[...]")
        else:
            yield from _unbounded(t.item_type, f"{where}[...]")
    elif isinstance(t, mi.UnionType):
        for member in t.types:
            yield from _unbounded(member, where)
    elif isinstance(t, mi.StructType):
        for f in t.fields:
            yield from _unbounded(f.type, f"{where}.{f.encode_name}")
    elif not isinstance(t, mi.BoolType | mi.NoneType | mi.LiteralType):
        yield f"{where}: {type(t).__name__} is not allowed in a client message"


@pytest.mark.parametrize("cls", CLIENT_CLASSES, ids=lambda c: c.__name__)
def test_every_client_field_is_bounded(cls: type[msgspec.Struct]) -> None:
    assert list(_unbounded(mi.type_info(cls), cls.__name__)) == []


def _widest(t: mi.Type) -> Any:
    """The value of type ``t`` that encodes to the most bytes (4-byte UTF-8 characters)."""
    if isinstance(t, mi.Metadata):
        return _widest(t.type)
    if isinstance(t, mi.IntType):
        return t.ge if t.ge is not None and t.ge < 0 else t.le
    if isinstance(t, mi.StrType):
        if t.pattern in (M.CODE_PATTERN, M.TOKEN_PATTERN):
            return "A" * (t.max_length or 0)
        if t.pattern == M.IDENT_PATTERN:
            return "a" * (t.max_length or 0)
        if t.pattern == M.CURSOR_PATTERN:  # the longest cursor the pattern allows
            return "9" * 16 + "." + "A" * 16
        return "\U0001f0a1" * (t.max_length or 0)  # a playing card: 4 bytes in UTF-8
    if isinstance(t, mi.LiteralType):
        return max(t.values, key=lambda v: len(str(v)))
    if isinstance(t, mi.BoolType):
        return True
    if isinstance(t, mi.NoneType):
        return None
    if isinstance(t, mi.UnionType):
        return max((_widest(x) for x in t.types), key=lambda v: len(msgspec.msgpack.encode(v)))
    if isinstance(t, mi.DictType):
        key = _widest(t.key_type)
        return {key[:-2] + f"{i:02d}": _widest(t.value_type) for i in range(t.max_length or 0)}
    if isinstance(t, mi.StructType):
        return t.cls(**{f.name: _widest(f.type) for f in t.fields})
    raise TypeError(t)


@pytest.mark.parametrize("cls", CLIENT_CLASSES, ids=lambda c: c.__name__)
def test_the_largest_valid_client_message_fits_in_a_frame(cls: type[msgspec.Struct]) -> None:
    widest = _widest(mi.type_info(cls))
    if isinstance(widest, M.Hello):
        widest = msgspec.structs.replace(widest, version=L.PROTOCOL_VERSION)
    frame = encode(widest)
    assert len(frame) <= L.MAX_FRAME
    assert decode_client(frame) == widest  # and it is valid


def test_a_token_fits_a_maximal_room_code_seat_and_secret() -> None:
    assert L.MAX_CODE + 1 + 2 + 1 + L.MAX_SECRET <= L.MAX_TOKEN
