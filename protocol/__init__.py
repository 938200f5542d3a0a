"""solrace's wire protocol: message types, codec, limits and error codes. Pure: no I/O.
The specification is PROTOCOL.md beside this file."""

from . import messages
from .codec import CLIENT_TYPES, SERVER_TYPES, decode_client, decode_server, encode
from .errors import DECODE_CODES, DESCRIPTIONS, FATAL, RETRYABLE, Code, DecodeError, ProtocolError
from .limits import PROTOCOL_VERSION
from .messages import error_reply

__all__ = [
    "CLIENT_TYPES",
    "DECODE_CODES",
    "DESCRIPTIONS",
    "FATAL",
    "PROTOCOL_VERSION",
    "RETRYABLE",
    "SERVER_TYPES",
    "Code",
    "DecodeError",
    "ProtocolError",
    "decode_client",
    "decode_server",
    "encode",
    "error_reply",
    "messages",
]
