"""Encoding and decoding frames.

Promises: ``encode`` turns a message struct into one MessagePack map. ``decode_client`` and
``decode_server`` never raise anything but ``DecodeError``, whose code says what was wrong
(``errors.DECODE_CODES``) and whose message names the offending field by its wire key and
its meaning (``bad field `r.m` (CreateRoom.settings.max_players): expected `int` <= 16``).
A frame that fails to decode has no effect: nothing was built from it.

The hot path (a well-formed ``bytes`` frame) is one type check, one length check and
msgspec's decoder; everything else runs only when a frame is bad or not ``bytes``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, cast, get_args

import msgspec
from msgspec import inspect as mi

from .errors import Code, DecodeError
from .limits import MAX_FRAME, MAX_SERVER_FRAME, PROTOCOL_VERSION
from .messages import (
    CODE_PATTERN,
    DISPLAY_PATTERN,
    IDENT_PATTERN,
    PLAIN_PATTERN,
    TOKEN_PATTERN,
    ClientMessage,
    Hello,
    ServerMessage,
)

_encoder = msgspec.msgpack.Encoder()
_client_decoder = msgspec.msgpack.Decoder(ClientMessage)
_server_decoder = msgspec.msgpack.Decoder(ServerMessage)


def _by_tag(union: Any) -> dict[str, type[msgspec.Struct]]:
    return {cls.__struct_config__.tag: cls for cls in get_args(union)}


CLIENT_TYPES: dict[str, type[msgspec.Struct]] = _by_tag(ClientMessage)
"""Every client → server message class by its tag ``t``."""
SERVER_TYPES: dict[str, type[msgspec.Struct]] = _by_tag(ServerMessage)
"""Every server → client message class by its tag ``t``."""


class _Probe(msgspec.Struct):
    """Reads only the tag and the version of a frame that failed to decode."""

    t: object = None
    v: object = None


_probe_decoder = msgspec.msgpack.Decoder(_Probe)

# What a pattern asks for, in words (msgspec's message quotes the regex itself).
_PATTERN_WORDS = {
    DISPLAY_PATTERN: "visible characters (no control or formatting characters), not only spaces",
    PLAIN_PATTERN: "visible characters (no control or formatting characters)",
    CODE_PATTERN: "letters, digits, '_' or '-'",
    TOKEN_PATTERN: "printable ASCII without spaces",
    IDENT_PATTERN: "a lower-case name (a-z, then a-z, 0-9 or '_')",
}
_DETAIL = re.compile(r"(?s)(?P<detail>.*?)(?: - at (?P<key>`key` in )?`\$(?P<path>[^`]*)`)?")
_MISSING = re.compile(r"Object missing required field `(?P<name>[^`]*)`")
_STEP = re.compile(r"\.([^.\[]+)|\[([^\]]*)\]")


encode: Callable[[msgspec.Struct], bytes] = _encoder.encode
"""``encode(message)``: the MessagePack bytes of a message struct: one map, ``t`` first,
wire keys, fields equal to their default left out. (The encoder's own method, not a
function calling it: every ack is encoded here, and a Python call costs ~70 ns.)"""


def decode_client(data: Any, max_frame: int = MAX_FRAME) -> ClientMessage:
    """The client message in one frame, or ``DecodeError`` with code bad_frame (text,
    not MessagePack, not a map, trailing bytes, nested too deeply), frame_too_large,
    unknown_type, bad_field, or version_mismatch (a hello whose ``v`` is not
    ``PROTOCOL_VERSION``: checked before anything else in the hello, so a client of
    another version always learns that, whatever else its hello holds)."""
    if type(data) is bytes and len(data) <= max_frame:  # the hot path: no extra call
        try:
            message = _client_decoder.decode(data)
        except Exception as exc:
            raise _failure(exc, data, CLIENT_TYPES, True) from None
    else:
        message = _decode_other(_client_decoder, CLIENT_TYPES, data, max_frame, True)
    if type(message) is Hello and message.version != PROTOCOL_VERSION:
        raise DecodeError(Code.VERSION_MISMATCH, version_mismatch_text(message.version))
    decoded: ClientMessage = message  # (an annotation, not typing.cast: no call per move)
    return decoded


def decode_server(data: Any, max_frame: int = MAX_SERVER_FRAME) -> ServerMessage:
    """The server message in one frame (for clients and tests), or ``DecodeError`` with
    code bad_frame, frame_too_large, unknown_type or bad_field."""
    if type(data) is bytes and len(data) <= max_frame:
        try:
            return cast(ServerMessage, _server_decoder.decode(data))
        except Exception as exc:
            raise _failure(exc, data, SERVER_TYPES, False) from None
    return cast(ServerMessage,
                _decode_other(_server_decoder, SERVER_TYPES, data, max_frame, False))


def version_mismatch_text(client_version: object) -> str:
    """What to tell a client whose hello says protocol version ``client_version``."""
    advice = (
        "upgrade your client"
        if isinstance(client_version, int) and client_version < PROTOCOL_VERSION
        else "use a client for this server's version, or a server that speaks yours"
    )
    return (
        f"this server speaks protocol version {PROTOCOL_VERSION}; your client sent "
        f"version {client_version!r}: {advice}"
    )


# ------------------------------------------------------------------------ internals


def _decode_other(
    decoder: msgspec.msgpack.Decoder[Any],
    types: dict[str, type[msgspec.Struct]],
    data: Any,
    max_frame: int,
    check_version: bool,
) -> Any:
    """Decode what the hot path did not take: other buffer types, text, large frames."""
    if not isinstance(data, bytes | bytearray | memoryview):
        kind = "text" if isinstance(data, str) else type(data).__name__
        raise DecodeError(Code.BAD_FRAME, f"frames must be binary (MessagePack), not {kind}")
    size = len(data)
    if size > max_frame:
        raise DecodeError(Code.FRAME_TOO_LARGE, f"frame of {size} bytes; the limit is {max_frame}")
    try:
        return decoder.decode(data)
    except Exception as exc:
        raise _failure(exc, data, types, check_version) from None


def _failure(
    exc: Exception, data: Any, types: dict[str, type[msgspec.Struct]], check_version: bool
) -> DecodeError:
    """The DecodeError for a frame the decoder refused with ``exc``."""
    first = data[0] if len(data) else -1
    if not (0x80 <= first <= 0x8F or first in (0xDE, 0xDF)):
        return DecodeError(
            Code.BAD_FRAME, f"a message must be a MessagePack map, not {_kind_of(first)}"
        )
    if isinstance(exc, msgspec.ValidationError):
        return _explain(str(exc), data, types, check_version)
    if isinstance(exc, msgspec.DecodeError):
        return DecodeError(Code.BAD_FRAME, f"not valid MessagePack: {exc}")
    if isinstance(exc, RecursionError):
        return DecodeError(Code.BAD_FRAME, "containers are nested too deeply")
    if isinstance(exc, UnicodeDecodeError):
        return DecodeError(Code.BAD_FRAME, "a string is not valid UTF-8")
    # The promise: nothing but DecodeError leaves this module.
    return DecodeError(Code.BAD_FRAME, f"undecodable frame ({type(exc).__name__})")


def _kind_of(first: int) -> str:
    """The MessagePack type a frame's first byte announces."""
    if first < 0:
        return "an empty frame"
    if first <= 0x7F or first >= 0xE0 or 0xCC <= first <= 0xD3:
        return "an integer"
    if 0x90 <= first <= 0x9F or first in (0xDC, 0xDD):
        return "an array"
    if 0xA0 <= first <= 0xBF or 0xD9 <= first <= 0xDB:
        return "a string"
    names = {0xC0: "nil", 0xC2: "a boolean", 0xC3: "a boolean", 0xCA: "a float", 0xCB: "a float"}
    if first in names:
        return names[first]
    if 0xC4 <= first <= 0xC6:
        return "binary data"
    if first == 0xC1:
        return "the never-used byte 0xc1"
    return "an extension type"


def _explain(
    text: str, data: Any, types: dict[str, type[msgspec.Struct]], check_version: bool
) -> DecodeError:
    """The DecodeError for a frame msgspec parsed but found invalid (``text`` is its
    message): unknown_type, version_mismatch or bad_field naming the field."""
    try:
        probe = _probe_decoder.decode(data)
    except msgspec.ValidationError:  # the only way a map fails the probe: a key not a string
        return DecodeError(Code.BAD_FRAME, "a message must be a map with string keys")
    except Exception as exc:  # the rest of the frame is not even MessagePack
        return DecodeError(Code.BAD_FRAME, f"not valid MessagePack: {exc}")
    tag = probe.t
    if not isinstance(tag, str) or tag not in types:
        known = ", ".join(sorted(types))
        what = "no `t` key" if tag is None else f"`t` = {tag!r}"
        return DecodeError(Code.UNKNOWN_TYPE, f"unknown message type ({what}); known: {known}")
    version = probe.v
    if (
        check_version
        and tag == "hello"
        and isinstance(version, int)
        and not isinstance(version, bool)
        and version != PROTOCOL_VERSION
    ):
        return DecodeError(Code.VERSION_MISMATCH, version_mismatch_text(version))
    match = _DETAIL.fullmatch(text)
    detail, path = (match["detail"], match["path"] or "") if match else (text, "")
    missing = _MISSING.fullmatch(detail)
    if missing:
        path = f"{path}.{missing['name']}"
    wire = path.lstrip(".") or "(the message)"
    meaning = _meaning(types[tag], path)
    if missing:
        return DecodeError(
            Code.BAD_FIELD, f"missing required field `{wire}` ({meaning}) in `{tag}`", wire
        )
    for pattern, words in _PATTERN_WORDS.items():
        detail = detail.replace(f"matching regex {pattern!r}", f"of {words}")
    detail = detail[:1].lower() + detail[1:]
    if match and match["key"]:
        detail = f"a key: {detail}"
    return DecodeError(Code.BAD_FIELD, f"bad field `{wire}` ({meaning}) in `{tag}`: {detail}", wire)


@functools.lru_cache(maxsize=256)
def _meaning(cls: type[msgspec.Struct], path: str) -> str:
    """``Class.attribute.path`` for a wire path such as ``.r.o[...]`` in ``cls``."""
    names = [cls.__name__]
    node: mi.Type | None = mi.type_info(cls)
    for key, index in _STEP.findall(path):
        node = _unwrap(node)
        if key:
            fields = node.fields if isinstance(node, mi.StructType) else ()
            found = next((f for f in fields if f.encode_name == key), None)
            names.append(f".{found.name}" if found else f".{key}")
            node = found.type if found else None
        else:
            names.append(f"[{index}]")
            if isinstance(node, mi.ListType | mi.SetType | mi.FrozenSetType | mi.VarTupleType):
                node = node.item_type
            elif isinstance(node, mi.DictType):
                node = node.value_type
            elif isinstance(node, mi.TupleType) and index.isdigit():
                items = node.item_types
                node = items[int(index)] if int(index) < len(items) else None
            else:
                node = None
    return "".join(names)


def _unwrap(node: mi.Type | None) -> mi.Type | None:
    """The struct, list or dict inside metadata and ``X | None`` unions."""
    while True:
        if isinstance(node, mi.Metadata):
            node = node.type
        elif isinstance(node, mi.UnionType):
            inner = [t for t in node.types if not isinstance(t, mi.NoneType)]
            node = inner[0] if len(inner) == 1 else None
        else:
            return node
