"""Encoding and decoding frames. Decoding never raises anything but ``DecodeError``
(with the protocol's error code and a message naming the bad field)."""

from __future__ import annotations

import re
from typing import Any

import msgspec

from .errors import Code, DecodeError
from .limits import MAX_FRAME
from .messages import ClientMessage, ServerMessage

_encoder = msgspec.msgpack.Encoder()
_client_decoder = msgspec.msgpack.Decoder(ClientMessage)
_server_decoder = msgspec.msgpack.Decoder(ServerMessage)
_TAG_PATH = re.compile(r"at `\$\.t`$")


def encode(message: Any) -> bytes:
    """The MessagePack bytes of a message struct."""
    return _encoder.encode(message)


def _decode(decoder: msgspec.msgpack.Decoder[Any], data: bytes, max_frame: int) -> Any:
    if not isinstance(data, bytes | bytearray | memoryview):
        raise DecodeError(Code.BAD_FRAME, "frames must be binary (MessagePack), not text")
    if len(data) > max_frame:
        raise DecodeError(
            Code.FRAME_TOO_LARGE, f"frame of {len(data)} bytes; the limit is {max_frame}"
        )
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as exc:
        text = str(exc)
        if _TAG_PATH.search(text) or "missing required field `t`" in text:
            message = f"unknown or missing message type: {text}"
            raise DecodeError(Code.UNKNOWN_TYPE, message) from None
        raise DecodeError(Code.BAD_FIELD, text) from None
    except msgspec.DecodeError as exc:
        raise DecodeError(Code.BAD_FRAME, f"not a MessagePack message: {exc}") from None


def decode_client(data: bytes, max_frame: int = MAX_FRAME) -> ClientMessage:
    """A client message from a frame, or ``DecodeError`` (bad_frame, frame_too_large,
    unknown_type or bad_field)."""
    result: ClientMessage = _decode(_client_decoder, data, max_frame)
    return result


def decode_server(data: bytes, max_frame: int = 1 << 24) -> ServerMessage:
    """A server message from a frame (for clients and tests), or ``DecodeError``."""
    result: ServerMessage = _decode(_server_decoder, data, max_frame)
    return result
