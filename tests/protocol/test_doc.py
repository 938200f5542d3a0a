"""PROTOCOL.md and the code cannot drift: the generated blocks equal what the code renders
now, and the page names every message, key, error code and limit."""

from __future__ import annotations

import json
import re

import msgpack
import msgspec
import pytest
from msgspec import inspect as mi

from protocol import Code, decode_client, decode_server
from protocol.fielddocs import FIELD_DOCS, LIMIT_DOCS
from protocol.schema import CLIENT, DOC_PATH, NESTED, SERVER, anchor, limit_names, splice

DOC = DOC_PATH.read_text(encoding="utf-8")
ALL = CLIENT + SERVER + NESTED


def test_the_generated_blocks_are_current() -> None:
    assert splice(DOC) == DOC, "PROTOCOL.md is stale: run .venv/bin/python -m protocol.schema"


def test_every_struct_is_documented_field_by_field() -> None:
    documented = {c.__name__ for c in ALL}
    assert set(FIELD_DOCS) == documented
    for cls in ALL:
        fields = {f.name for f in mi.type_info(cls).fields}  # type: ignore[attr-defined]
        assert set(FIELD_DOCS[cls.__name__]) == fields, cls.__name__


def _section(cls: type) -> str:
    start = DOC.index(f'<a id="{anchor(cls)}"></a>')
    end = DOC.find("<a id=", start + 1)
    return DOC[start:end]


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_the_page_lists_every_message_and_every_key(cls: type[msgspec.Struct]) -> None:
    section = _section(cls)
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    if info.tag:
        assert f"#### `{info.tag}` — {cls.__name__}" in section
    rows = re.findall(r"^\| `([^`]+)` \| (\w+) \|", section, re.M)
    assert rows == [(f.encode_name, f.name) for f in info.fields]


def test_the_page_lists_every_error_code_and_limit() -> None:
    for code in Code:
        assert f"| `{code.value}` |" in DOC, code
    assert set(LIMIT_DOCS) == set(limit_names())
    for name in limit_names():
        assert f"| `{name}` |" in DOC, name


def _slug(heading: str) -> str:
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_every_link_inside_the_page_has_a_target() -> None:
    targets = set(re.findall(r'<a id="([^"]+)"></a>', DOC))
    targets |= {_slug(h) for h in re.findall(r"^#{1,4} (.+)$", DOC, re.M)}
    links = set(re.findall(r"\]\(#([^)]+)\)", DOC))
    assert links - targets == set()


def test_the_example_frames_decode_to_the_maps_shown() -> None:
    examples = re.findall(r"\*\*([^*]+)\*\* \((\d+) bytes\)\n\n```\n(.+)\n([0-9a-f ]+)\n```", DOC)
    assert len(examples) >= 10
    titles = " ".join(t for t, *_ in examples)
    for word in ("hello", "create", "join", "move", "accepted", "rejected", "diff", "progress"):
        assert word in titles
    for title, size, shown, hexed in examples:
        frame = bytes.fromhex(hexed.replace(" ", ""))
        assert len(frame) == int(size), title
        assert msgpack.unpackb(frame) == json.loads(shown), title
        decode = decode_client if msgpack.unpackb(frame)["t"] in ("hello", "create", "join", "M") \
            else decode_server
        decode(frame)  # and it is a valid message
