"""Every error code the protocol uses, with its meaning. Codes are stable strings: clients
branch on the code, people read the message. PROTOCOL.md's error table is generated from
this module (a test fails if the two differ).

A code is never renamed or given a new meaning within a protocol version; new codes may
be added, so a client must treat an unknown code as a failure of the request it sent
(and, if ``Error.f`` is set, of the connection)."""

from __future__ import annotations

from enum import StrEnum


class Code(StrEnum):
    """Stable error codes (``Error.code`` and ``Rejected.code`` on the wire)."""

    # -- decoding: the frame itself is wrong
    BAD_FRAME = "bad_frame"
    FRAME_TOO_LARGE = "frame_too_large"
    UNKNOWN_TYPE = "unknown_type"
    BAD_FIELD = "bad_field"
    # -- session
    VERSION_MISMATCH = "version_mismatch"
    HELLO_FIRST = "hello_first"
    ALREADY_HELLO = "already_hello"
    RATE_LIMITED = "rate_limited"
    BAD_TOKEN = "bad_token"
    # -- rooms
    NO_SUCH_ROOM = "no_such_room"
    ROOM_FULL = "room_full"
    ROOM_CLOSED = "room_closed"
    NAME_TAKEN = "name_taken"
    SPECTATORS_OFF = "spectators_off"
    TOO_MANY_ROOMS = "too_many_rooms"
    ALREADY_IN_ROOM = "already_in_room"
    NOT_IN_ROOM = "not_in_room"
    NOT_A_PLAYER = "not_a_player"
    NOT_CREATOR = "not_creator"
    BAD_SETTINGS = "bad_settings"
    ADDRESS_LIMIT = "address_limit"
    SAME_ADDRESS = "same_address"
    # -- moves
    NOT_RUNNING = "not_running"
    FINISHED = "finished"
    OUT_OF_ORDER = "out_of_order"
    ILLEGAL_MOVE = "illegal_move"
    BAD_NOTATION = "bad_notation"
    HINTS_OFF = "hints_off"
    # -- the service
    STORE_UNAVAILABLE = "store_unavailable"
    SHUTTING_DOWN = "shutting_down"
    NODE_FULL = "node_full"
    SLOW_CONSUMER = "slow_consumer"
    CONTROL_FLOOD = "control_flood"
    IDLE_TIMEOUT = "idle_timeout"
    TAKEN_OVER = "taken_over"
    INTERNAL = "internal"


# What each code means, for PROTOCOL.md and for messages that have nothing more specific.
DESCRIPTIONS: dict[Code, str] = {
    Code.BAD_FRAME: "the frame is not a MessagePack map (or not a binary frame)",
    Code.FRAME_TOO_LARGE: "the frame is larger than the server accepts (see limits)",
    Code.UNKNOWN_TYPE: "the message type `t` is missing or not one the server knows",
    Code.BAD_FIELD: "a field is missing, of the wrong type or out of range; the message names it",
    Code.VERSION_MISMATCH: "the client's protocol version is not the server's: upgrade one",
    Code.HELLO_FIRST: "the first message on a connection must be hello",
    Code.ALREADY_HELLO: "hello was already sent on this connection",
    Code.RATE_LIMITED: "too many messages: wait for credits to refill",
    Code.BAD_TOKEN: "the resume token is unknown, expired or for a finished seat",
    Code.NO_SUCH_ROOM: "no room has that code (or it has expired)",
    Code.ROOM_FULL: "every seat of the room is taken",
    Code.ROOM_CLOSED: "the race has started or finished: no new players",
    Code.NAME_TAKEN: "another seat in the room has this name: pick another",
    Code.SPECTATORS_OFF: "the room does not allow spectators",
    Code.TOO_MANY_ROOMS: "this connection has created or joined too many rooms",
    Code.ALREADY_IN_ROOM: "this connection is already in a room: leave it first",
    Code.NOT_IN_ROOM: "the message needs a room and this connection is in none",
    Code.NOT_A_PLAYER: "spectators cannot do that",
    Code.NOT_CREATOR: "only the room's creator can do that",
    Code.BAD_SETTINGS: "a room setting (variant, option, limit) is not allowed",
    Code.ADDRESS_LIMIT: "your client address reached a cap (connections, room creations or "
    "failed joins per minute, seats held); the message says which; wait or close some",
    Code.SAME_ADDRESS: "your client address already holds a seat in this hidden-information "
    "room (one seat per address)",
    Code.NOT_RUNNING: "the race has not started yet",
    Code.FINISHED: "your race is over (won, stuck, resigned, or time is up)",
    Code.OUT_OF_ORDER: "the move's sequence number is not the next one expected",
    Code.ILLEGAL_MOVE: "the rules do not allow that move; the reason says why",
    Code.BAD_NOTATION: "the move is not in the notation of the rules",
    Code.HINTS_OFF: "the room does not give hints",
    Code.STORE_UNAVAILABLE: "storage is unreachable: nothing changed, retry shortly",
    Code.SHUTTING_DOWN: "the server is shutting down: reconnect (to another node) and resume",
    Code.NODE_FULL: "this node holds as many rooms as it may (max_live_rooms): retry later or "
    "on another node",
    Code.SLOW_CONSUMER: "the client did not read fast enough (its unread bytes passed the "
    "server's cap); reconnect and resume",
    Code.CONTROL_FLOOD: "the client sent websocket pings faster than the server answers "
    "them (websocket close 1008)",
    Code.IDLE_TIMEOUT: "nothing was received for too long",
    Code.TAKEN_OVER: "another connection resumed this seat with its token",
    Code.INTERNAL: "an unexpected server error; nothing changed; it has been logged",
}

# Codes after which the same request may succeed if simply sent again later.
RETRYABLE: frozenset[Code] = frozenset(
    {Code.RATE_LIMITED, Code.STORE_UNAVAILABLE, Code.SHUTTING_DOWN, Code.INTERNAL,
     Code.ADDRESS_LIMIT, Code.NODE_FULL}
)


# Codes after which the server closes the connection (``Error.f`` is set, or the reason
# comes in ``Closing``). All other errors leave the connection open.
FATAL: frozenset[Code] = frozenset(
    {
        Code.VERSION_MISMATCH,
        Code.SHUTTING_DOWN,
        Code.SLOW_CONSUMER,
        Code.CONTROL_FLOOD,
        Code.IDLE_TIMEOUT,
        Code.TAKEN_OVER,
    }
)

# The codes ``codec.decode_client`` / ``decode_server`` raise.
DECODE_CODES: frozenset[Code] = frozenset(
    {Code.BAD_FRAME, Code.FRAME_TOO_LARGE, Code.UNKNOWN_TYPE, Code.BAD_FIELD, Code.VERSION_MISMATCH}
)


class ProtocolError(Exception):
    """A failure to report to the peer as an ``Error`` (or ``Rejected``) message.
    ``message`` is for people (the code's description when none is given)."""

    def __init__(self, code: Code, message: str | None = None) -> None:
        self.code = code
        self.message = message or DESCRIPTIONS[code]
        super().__init__(f"{code}: {self.message}")

    @property
    def retryable(self) -> bool:
        """True when sending the same thing again later may succeed."""
        return self.code in RETRYABLE

    @property
    def fatal(self) -> bool:
        """True when the server closes the connection after reporting this error."""
        return self.code in FATAL


class DecodeError(ProtocolError):
    """A frame that could not be decoded into a message; nothing was done with it.

    ``code`` is one of ``DECODE_CODES``. ``field`` is the wire path of the offending
    field for ``bad_field`` (e.g. ``"r.o"`` for a create's options), else None."""

    def __init__(self, code: Code, message: str | None = None, field: str | None = None) -> None:
        super().__init__(code, message)
        self.field = field
