"""Bad frames: whatever arrives, decoding raises only DecodeError, with the right code and
a message that names what is wrong."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol import DECODE_CODES, Code, DecodeError, decode_client, decode_server, encode
from protocol import limits as L
from protocol import messages as M

from .strategies import any_client_message, any_server_message


def decode_error(frame: Any, **kw: Any) -> DecodeError:
    with pytest.raises(DecodeError) as info:
        decode_client(frame, **kw)
    assert info.value.code in DECODE_CODES
    return info.value


def pack(obj: Any) -> bytes:
    return msgpack.packb(obj, use_bin_type=True)


def move(**fields: Any) -> bytes:
    return pack({"t": "M", "s": 1, "m": "3>7", **fields})


# ------------------------------------------------------------------ frames that are not maps


@pytest.mark.parametrize(
    ("value", "kind"),
    [(5, "an integer"), (-3, "an integer"), ([1, 2], "an array"), ("M", "a string"),
     (None, "nil"), (True, "a boolean"), (1.5, "a float"), (b"\x81", "binary data")],
)
def test_valid_msgpack_that_is_not_a_map_is_bad_frame(value: object, kind: str) -> None:
    err = decode_error(pack(value))
    assert err.code == Code.BAD_FRAME
    assert err.message == f"a message must be a MessagePack map, not {kind}"


def test_text_frames_are_rejected() -> None:
    err = decode_error('{"t": "ping"}')
    assert err.code == Code.BAD_FRAME and "binary" in err.message and "text" in err.message


@pytest.mark.parametrize(
    ("frame", "words"),
    [
        (b"", "empty frame"),
        (pack({"t": "ping"}) + b"\x00", "trailing"),  # one message per frame
        (pack({"t": "M", "s": 1, "m": "3>7"})[:-1], "truncated"),
        (b"\x82\xa1t\xa4ping\xa1q\xc1", "invalid opcode"),  # the never-used byte
        (b"\x81\xa1t\xa2\xff\xfe", "UTF-8"),  # invalid UTF-8 in the tag
        (b"\x82\xa1t\xa4ping\x01\x02", "string keys"),  # an integer key
        (b"\x82\xa1t\xa4ping\xa1q" + b"\x91" * 4000 + b"\xc0", "nested too deeply"),
        (b"\x82\xa1t\xa4ping\xa1q" + b"\x81\xa1a" * 1300 + b"\xc0", "nested too deeply"),
        (b"\x82\xa1t\xa4ping\xa1q\xdd\xff\xff\xff\xff", "truncated"),  # claims 4G items
        (b"\xdf\xff\xff\xff\xff\xa1t\xa4ping", "truncated"),
    ],
)
def test_malformed_frames_are_bad_frame(frame: bytes, words: str) -> None:
    err = decode_error(frame)
    assert err.code == Code.BAD_FRAME
    assert words in err.message


def test_frames_over_the_limit_are_frame_too_large() -> None:
    frame = pack({"t": "ping", "pad": "x" * L.MAX_FRAME})
    err = decode_error(frame)
    assert err.code == Code.FRAME_TOO_LARGE
    assert str(len(frame)) in err.message and str(L.MAX_FRAME) in err.message
    assert decode_client(frame, max_frame=len(frame)) == M.Ping()  # the limit is a parameter


def test_a_frame_of_exactly_the_limit_is_accepted() -> None:
    base = pack({"t": "ping", "pad": ""})
    frame = pack({"t": "ping", "pad": "x" * (L.MAX_FRAME - len(base) - 2)})  # str16 header
    assert len(frame) == L.MAX_FRAME
    assert decode_client(frame) == M.Ping()


def test_bytearray_and_memoryview_frames_decode() -> None:
    frame = encode(M.Move(seq=4, move="1>f"))
    assert decode_client(bytearray(frame)) == decode_client(memoryview(frame)) == M.Move(
        seq=4, move="1>f"
    )


# ------------------------------------------------------------------ message types


@pytest.mark.parametrize(
    ("obj", "words"),
    [({"s": 1}, "no `t` key"), ({"t": 5}, "`t` = 5"), ({"t": "A", "s": 1}, "`t` = 'A'"),
     ({"t": "HELLO"}, "`t` = 'HELLO'"), ({"t": b"ping"}, "`t` = b'ping'")],
)
def test_unknown_or_missing_type_is_unknown_type(obj: dict[str, Any], words: str) -> None:
    err = decode_error(pack(obj))
    assert err.code == Code.UNKNOWN_TYPE
    assert words in err.message and "hello" in err.message  # lists the known types


def test_server_tags_are_unknown_to_the_client_decoder_and_back() -> None:
    assert decode_error(encode(M.Accepted(seq=1, hash=2, clock_ms=3))).code == Code.UNKNOWN_TYPE
    with pytest.raises(DecodeError) as info:
        decode_server(encode(M.Move(seq=1, move="1>2")))
    assert info.value.code == Code.UNKNOWN_TYPE


def test_unknown_keys_are_ignored() -> None:
    frame = pack({"t": "M", "s": 3, "m": "2>f", "future": {"x": [1, 2.5, None]}, "zz": b"\x00"})
    assert decode_client(frame) == M.Move(seq=3, move="2>f")


# ------------------------------------------------------------------ fields


@pytest.mark.parametrize(
    ("obj", "field", "words"),
    [
        ({"t": "M", "s": L.MAX_SEQ + 1, "m": "3>7"}, "s", "<= 1000000"),
        ({"t": "M", "s": 0, "m": "3>7"}, "s", ">= 1"),
        ({"t": "M", "s": 2**64 - 1, "m": "3>7"}, "s", "<= 1000000"),
        ({"t": "M", "s": -(2**63), "m": "3>7"}, "s", ">= 1"),
        ({"t": "M", "s": 1.0, "m": "3>7"}, "s", "got `float`"),
        ({"t": "M", "s": float("nan"), "m": "3>7"}, "s", "got `float`"),
        ({"t": "M", "s": True, "m": "3>7"}, "s", "got `bool`"),
        ({"t": "M", "s": "1", "m": "3>7"}, "s", "got `str`"),
        ({"t": "M", "s": 1, "m": "1" * 17}, "m", "length <= 16"),
        ({"t": "M", "s": 1, "m": ""}, "m", "length >= 1"),
        ({"t": "M", "s": 1}, "m", "missing required field"),
        ({"t": "hello", "v": 1, "n": "x" * 33}, "n", "length <= 32"),
        ({"t": "hello", "v": 1, "n": "\x1b[2J"}, "n", "no control"),
        ({"t": "hello", "v": 1, "n": "   "}, "n", "not only spaces"),
        ({"t": "hello", "v": 1, "n": "a\u202eb"}, "n", "no control"),  # right-to-left override
        ({"t": "hello", "v": 1, "n": "ok", "c": "x" * 65}, "c", "length <= 64"),
        ({"t": "hello", "v": 1, "n": "ok", "k": "a b"}, "k", "printable ASCII"),
        ({"t": "hello", "v": 1, "n": "ok", "k": "x" * 65}, "k", "length <= 64"),
        ({"t": "hello", "v": 1, "n": "ok", "s": L.MAX_SEQ + 1}, "s", "<= 1000000"),
        ({"t": "hello", "v": 1}, "n", "missing required field"),
        ({"t": "join", "c": "AB.CD"}, "c", "letters, digits"),
        ({"t": "join", "c": "A" * 17}, "c", "length <= 16"),
        ({"t": "join", "c": "ABCD", "r": "referee"}, "r", "invalid enum value 'referee'"),
        ({"t": "ping", "x": 2**32}, "x", "<= 4294967295"),
        ({"t": "ready", "r": 1}, "r", "got `int`"),
        ({"t": "create", "r": {"v": "spanish", "m": 17}}, "r.m", "<= 16"),
        ({"t": "create", "r": {"v": "spanish", "m": 0}}, "r.m", ">= 1"),
        ({"t": "create", "r": {"v": "spanish", "tl": 86401}}, "r.tl", "<= 86400"),
        ({"t": "create", "r": {"v": "spanish", "sd": 601}}, "r.sd", "<= 600"),
        ({"t": "create", "r": {"v": "spanish", "cd": 61}}, "r.cd", "<= 60"),
        ({"t": "create", "r": {"v": "spanish", "r": "speed"}}, "r.r", "'speed'"),
        ({"t": "create", "r": {"v": "spanish", "d": "easy"}}, "r.d", "'easy'"),
        ({"t": "create", "r": {"v": "Spanish"}}, "r.v", "lower-case name"),
        ({"t": "create", "r": {"v": "x" * 17}}, "r.v", "length <= 16"),
        ({"t": "create", "r": {}}, "r.v", "missing required field"),
        ({"t": "create"}, "r", "missing required field"),
        ({"t": "create", "r": {"v": "spanish", "o": {f"o{i}": 1 for i in range(9)}}},
         "r.o", "length <= 8"),
        ({"t": "create", "r": {"v": "spanish", "o": {"redeals": 2**31}}},
         "r.o[...]", "<= 2147483647"),
        ({"t": "create", "r": {"v": "spanish", "o": {"redeals": -(2**31) - 1}}},
         "r.o[...]", ">= -2147483648"),
        ({"t": "create", "r": {"v": "spanish", "o": {"x": "y" * 33}}}, "r.o[...]", "<= 32"),
        ({"t": "create", "r": {"v": "spanish", "o": {"x": [1]}}}, "r.o[...]", "got `array`"),
        ({"t": "create", "r": {"v": "spanish", "o": {"x": 0.5}}}, "r.o[...]", "got `float`"),
        ({"t": "create", "r": {"v": "spanish", "o": {"Bad": 1}}}, "r.o", "a key"),
        ({"t": "create", "r": {"v": "spanish", "o": {"k" * 33: 1}}}, "r.o", "a key"),
    ],
)
def test_bad_fields_name_the_key(obj: dict[str, Any], field: str, words: str) -> None:
    err = decode_error(pack(obj))
    assert err.code == Code.BAD_FIELD
    assert err.field == field
    assert f"`{field}`" in err.message
    assert f"`{obj['t']}`" in err.message  # and the message type
    assert words in err.message, err.message


def test_bad_field_messages_say_what_the_field_means() -> None:
    err = decode_error(pack({"t": "create", "r": {"v": "spanish", "m": 40}}))
    assert err.message == (
        "bad field `r.m` (CreateRoom.settings.max_players) in `create`: expected `int` <= 16"
    )
    err = decode_error(pack({"t": "M", "s": 1}))
    assert err.message == "missing required field `m` (Move.move) in `M`"


# ------------------------------------------------------------------ the version


@pytest.mark.parametrize("version", [0, 2, 99, L.MAX_VERSION + 1, 2**64 - 1, -1])
def test_another_protocol_version_is_version_mismatch(version: int) -> None:
    err = decode_error(pack({"t": "hello", "v": version, "n": "ann"}))
    assert err.code == Code.VERSION_MISMATCH and err.fatal
    assert f"version {L.PROTOCOL_VERSION}" in err.message and f"version {version}" in err.message
    assert "upgrade" in err.message or "use a client" in err.message


def test_the_version_is_judged_before_the_rest_of_a_hello() -> None:
    # A future client's hello may be shaped differently: it must still learn the version.
    err = decode_error(pack({"t": "hello", "v": 2, "n": 7, "new": {"x": 1}}))
    assert err.code == Code.VERSION_MISMATCH
    err = decode_error(pack({"t": "hello", "v": 2}))
    assert err.code == Code.VERSION_MISMATCH
    assert "upgrade your client" in decode_error(pack({"t": "hello", "v": 0, "n": "a"})).message


def test_a_version_of_the_wrong_type_is_bad_field() -> None:
    err = decode_error(pack({"t": "hello", "v": "1", "n": "ann"}))
    assert err.code == Code.BAD_FIELD and err.field == "v"


# ------------------------------------------------------------------ fuzzing


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=64))
def test_random_bytes_raise_only_decode_errors(frame: bytes) -> None:
    for decode in (decode_client, decode_server):
        try:
            decode(frame)
        except DecodeError as exc:
            assert exc.code in DECODE_CODES
            assert exc.message


def _mutations(frame: bytes) -> st.SearchStrategy[bytes]:
    n = len(frame)
    flip = st.tuples(st.integers(0, n - 1), st.integers(0, 255)).map(
        lambda p: frame[: p[0]] + bytes([p[1]]) + frame[p[0] + 1 :]
    )
    cut = st.integers(0, n).map(lambda i: frame[:i])
    insert = st.tuples(st.integers(0, n), st.binary(min_size=1, max_size=4)).map(
        lambda p: frame[: p[0]] + p[1] + frame[p[0] :]
    )
    delete = st.integers(0, n - 1).map(lambda i: frame[:i] + frame[i + 1 :])
    return st.one_of(flip, cut, insert, delete)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(any_client_message(), any_server_message()).map(encode).flatmap(_mutations))
def test_mutated_frames_raise_only_decode_errors(frame: bytes) -> None:
    for decode in (decode_client, decode_server):
        try:
            decode(frame)
        except DecodeError as exc:
            assert exc.code in DECODE_CODES
            assert exc.code != Code.BAD_FIELD or exc.field is not None


_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats()
    | st.text(max_size=6) | st.binary(max_size=4),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8,
)
_tags = st.sampled_from(["hello", "create", "list", "join", "ready", "start", "M", "resign",
                         "leave", "hint", "ping", "A", "zz"])
_keys = st.sampled_from(["v", "n", "b", "c", "k", "s", "m", "r", "p", "x", "o", "q"])


@settings(max_examples=400, deadline=None)
@given(_tags, st.dictionaries(_keys, _values, max_size=5))
def test_well_formed_maps_with_any_values_decode_or_name_a_field(tag: str, body: dict) -> None:
    frame = pack({"t": tag, **body})
    try:
        decode_client(frame)
    except DecodeError as exc:
        assert exc.code in DECODE_CODES
        if exc.code == Code.BAD_FIELD:
            assert exc.field is not None and f"`{exc.field}`" in exc.message
