"""solrace's wire protocol: message types, codec, limits and error codes. Pure: no I/O.
The specification is PROTOCOL.md beside this file."""

from . import messages
from .codec import decode_client, decode_server, encode
from .errors import DESCRIPTIONS, RETRYABLE, Code, DecodeError, ProtocolError
from .limits import PROTOCOL_VERSION

__all__ = [
    "DESCRIPTIONS",
    "PROTOCOL_VERSION",
    "RETRYABLE",
    "Code",
    "DecodeError",
    "ProtocolError",
    "decode_client",
    "decode_server",
    "encode",
    "messages",
]
