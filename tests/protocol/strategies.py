"""Hypothesis strategies for every protocol message, derived from the struct definitions
(msgspec.inspect), so a new message or field is covered without touching this file.

Every generated instance is valid: ints within their bounds, strings of the allowed
length and pattern, lists and maps within their sizes. ``object`` fields (a board's
view) get JSON-like data. Floats are finite (NaN is not equal to itself)."""

from __future__ import annotations

import re
import string
from functools import cache
from typing import Any, get_args

import msgspec
from hypothesis import strategies as st
from msgspec import inspect as mi

from protocol import messages as M
from protocol.limits import PROTOCOL_VERSION

CLIENT_CLASSES: list[type[msgspec.Struct]] = list(get_args(M.ClientMessage))
SERVER_CLASSES: list[type[msgspec.Struct]] = list(get_args(M.ServerMessage))

# Fields whose valid values are narrower than their type says.
_OVERRIDES: dict[tuple[type, str], st.SearchStrategy[Any]] = {
    (M.Hello, "version"): st.just(PROTOCOL_VERSION),
}

_json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1), st.text(max_size=8)
)
_json = st.recursive(
    _json_leaf,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


def _int(t: mi.IntType) -> st.SearchStrategy[int]:
    low = t.ge if t.ge is not None else (t.gt + 1 if t.gt is not None else -(2**63))
    high = t.le if t.le is not None else (t.lt - 1 if t.lt is not None else 2**64 - 1)
    return st.integers(low, high)


_VISIBLE = st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Cf", "Cn", "Zl", "Zp"))
_ALPHABETS: dict[str, st.SearchStrategy[str]] = {
    M.PLAIN_PATTERN: _VISIBLE,
    M.DISPLAY_PATTERN: _VISIBLE,
    M.CODE_PATTERN: st.sampled_from(string.ascii_letters + string.digits + "_-"),
    M.TOKEN_PATTERN: st.characters(min_codepoint=0x21, max_codepoint=0x7E),
}


def _str(t: mi.StrType) -> st.SearchStrategy[str]:
    low, high = t.min_length or 0, t.max_length if t.max_length is not None else 40
    if t.pattern is None:
        return st.text(max_size=high, min_size=low)
    pattern = re.compile(t.pattern)
    if t.pattern == M.IDENT_PATTERN:
        head = st.sampled_from("abcdefghijklmnopqrstuvwxyz")
        tail = st.text("abcdefghijklmnopqrstuvwxyz0123456789_", max_size=max(high - 1, 0))
        return st.builds(lambda h, r: (h + r)[:high], head, tail)
    alphabet = _ALPHABETS.get(t.pattern)
    if alphabet is not None:
        text = st.text(alphabet, min_size=max(low, 1) if t.pattern == M.DISPLAY_PATTERN else low,
                       max_size=high)
    else:
        text = st.from_regex(pattern, fullmatch=True).filter(lambda s: low <= len(s) <= high)
    return text.filter(lambda s: pattern.search(s) is not None)


def for_type(t: mi.Type) -> st.SearchStrategy[Any]:
    """A strategy for values of the msgspec type ``t``."""
    if isinstance(t, mi.Metadata):
        return for_type(t.type)
    if isinstance(t, mi.IntType):
        return _int(t)
    if isinstance(t, mi.StrType):
        return _str(t)
    if isinstance(t, mi.BoolType):
        return st.booleans()
    if isinstance(t, mi.NoneType):
        return st.none()
    if isinstance(t, mi.FloatType):
        return st.floats(allow_nan=False, allow_infinity=False)
    if isinstance(t, mi.LiteralType):
        return st.sampled_from(t.values)
    if isinstance(t, mi.UnionType):
        return st.one_of([for_type(x) for x in t.types])
    if isinstance(t, mi.ListType):
        high = t.max_length if t.max_length is not None else 4
        return st.lists(for_type(t.item_type), min_size=t.min_length or 0, max_size=high)
    if isinstance(t, mi.DictType):
        high = t.max_length if t.max_length is not None else 4
        return st.dictionaries(
            for_type(t.key_type), for_type(t.value_type), min_size=t.min_length or 0, max_size=high
        )
    if isinstance(t, mi.TupleType):
        return st.tuples(*[for_type(x) for x in t.item_types])
    if isinstance(t, mi.StructType):
        return message(t.cls)
    if isinstance(t, mi.AnyType) or (isinstance(t, mi.CustomType) and t.cls is object):
        return _json
    raise TypeError(f"no strategy for {t!r}: teach tests/protocol/strategies.py")


@cache
def message(cls: type[msgspec.Struct]) -> st.SearchStrategy[Any]:
    """Valid instances of the struct ``cls`` (a message or a nested struct)."""
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    fields = {f.name: _OVERRIDES.get((cls, f.name)) for f in info.fields}
    for f in info.fields:
        if fields[f.name] is None:
            fields[f.name] = for_type(f.type)
    return st.builds(cls, **fields)


def any_client_message() -> st.SearchStrategy[Any]:
    """Any valid client → server message."""
    return st.one_of([message(c) for c in CLIENT_CLASSES])


def any_server_message() -> st.SearchStrategy[Any]:
    """Any valid server → client message."""
    return st.one_of([message(c) for c in SERVER_CLASSES])
