"""Limits checked on decode. Every string, list and integer a client sends is bounded
here, so a hostile peer cannot make the server allocate or compute without bound."""

from __future__ import annotations

PROTOCOL_VERSION = 1

MAX_FRAME = 4096  # bytes a client frame may have (a move is ~12; a create ~200)
MAX_NAME = 32  # player name, characters
MAX_CODE = 16  # room code
MAX_TOKEN = 64  # resume token
MAX_NOTATION = 16  # a move
MAX_OPTIONS = 8  # options in a create
MAX_OPTION_KEY = 32
MAX_OPTION_STR = 32
MAX_SEQ = 1_000_000  # moves in one seat's log
MAX_SEATS = 16
MAX_TIME_LIMIT_S = 24 * 3600
MAX_SPECTATOR_DELAY_S = 600
MAX_COUNTDOWN_S = 60
MAX_CLIENT_STR = 64  # client software name
MAX_SEED = (1 << 64) - 1
