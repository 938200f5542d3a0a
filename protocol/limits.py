"""Limits checked on decode.

Every string, list, map and integer a client sends is bounded here (the test
tests/protocol/test_limits.py walks every client message type and fails on any field
without a bound), so a hostile peer cannot make the server allocate or compute without
bound. String lengths count characters (Unicode code points), not bytes; the frame limit
bounds the bytes. PROTOCOL.md's limits table is generated from this module.
"""

from __future__ import annotations

PROTOCOL_VERSION = 1  # the major version: `v` in hello must equal it
MAX_VERSION = 65_535  # `v` in hello is an integer in 0 .. MAX_VERSION

MAX_FRAME = 4096  # bytes a client frame may have (a move is ~10; a create ~60)
MAX_SERVER_FRAME = 1 << 24  # bytes a client should accept from a server (results of a long race)

MAX_NAME = 32  # player name, characters
MAX_CODE = 16  # room code
MAX_TOKEN = 64  # resume token: "<room code>.<seat>.<secret>"
MAX_SECRET = 43  # the secret part of a token (32 random bytes, base64url)
MAX_NOTATION = 16  # a move
MAX_VARIANT = 16  # a variant name
MAX_OPTIONS = 8  # options in a create
MAX_OPTION_KEY = 32
MAX_OPTION_STR = 32
MIN_OPTION_INT = -(2**31)  # an integer option value is a signed 32-bit integer
MAX_OPTION_INT = 2**31 - 1
MAX_SEQ = 1_000_000  # moves in one seat's log
MAX_SEATS = 16
MAX_TIME_LIMIT_S = 24 * 3600
MAX_SPECTATOR_DELAY_S = 600
MAX_COUNTDOWN_S = 60
MAX_CLIENT_STR = 64  # client software name
MAX_NONCE = 2**32 - 1  # ping nonce
MAX_SEED = (1 << 64) - 1
