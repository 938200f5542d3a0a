"""Every message between server and client, as typed structs that validate on decode.

On the wire each message is a plain MessagePack map. The key ``t`` names the type; the
other keys are short (one or two letters) because some messages are sent for every move.
Python attribute names are long and say what a field is; ``name=`` gives the wire key.
Unknown keys are ignored (forward compatibility); missing required keys, wrong types and
out-of-range values are ``bad_field`` errors naming the key. Fields equal to their
default are left out of the frame (``omit_defaults``).

Every string, list, map and integer a client sends is bounded (``limits.py``); strings a
client sends that other people will see (names, client software) may not contain control
or invisible formatting characters, so no one can paint over another player's terminal.

Time: ``server_ms`` is the server's wall clock in Unix milliseconds; ``clock_ms`` is
milliseconds since the race started (the race clock: the only clock that ranks).
The field-by-field reference is PROTOCOL.md, generated from these definitions.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta, field

from . import limits as L
from .errors import FATAL, ProtocolError

# Characters no displayed string may contain: C0 and C1 controls (terminal escapes), zero
# width and bidirectional formatting (names that hide or reorder text), BOM.
_INVISIBLE = r"\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff"
# A displayed text: visible characters and spaces, at least one not a space.
DISPLAY_PATTERN = rf"^[^{_INVISIBLE}]*[^\s{_INVISIBLE}][^{_INVISIBLE}]*$"
PLAIN_PATTERN = rf"^[^{_INVISIBLE}]*$"  # the same, possibly empty or only spaces
CODE_PATTERN = r"^[A-Za-z0-9_-]+$"  # a room code: never a "." (tokens are split on ".")
TOKEN_PATTERN = r"^[!-~]+$"  # printable ASCII, no spaces (its parts: tokens.py)
IDENT_PATTERN = r"^[a-z][a-z0-9_]*$"  # variant and option names

Name = Annotated[str, Meta(min_length=1, max_length=L.MAX_NAME, pattern=DISPLAY_PATTERN)]
RoomCode = Annotated[str, Meta(min_length=1, max_length=L.MAX_CODE, pattern=CODE_PATTERN)]
# A page cursor of `list`: opaque to clients ("<created ms>.<room code>").
CURSOR_PATTERN = r"^[0-9]{1,16}\.[A-Za-z0-9]{1,16}$"
ListCursor = Annotated[str, Meta(max_length=40, pattern=CURSOR_PATTERN)]
Token = Annotated[str, Meta(min_length=1, max_length=L.MAX_TOKEN, pattern=TOKEN_PATTERN)]
Notation = Annotated[str, Meta(min_length=1, max_length=L.MAX_NOTATION)]
Seq = Annotated[int, Meta(ge=0, le=L.MAX_SEQ)]
SeatNo = Annotated[int, Meta(ge=0, le=L.MAX_SEATS)]  # 0 = spectator
OptionValue = (
    bool
    | Annotated[int, Meta(ge=L.MIN_OPTION_INT, le=L.MAX_OPTION_INT)]
    | Annotated[str, Meta(max_length=L.MAX_OPTION_STR, pattern=PLAIN_PATTERN)]
)
OptionName = Annotated[str, Meta(min_length=1, max_length=L.MAX_OPTION_KEY, pattern=IDENT_PATTERN)]
Options = Annotated[dict[OptionName, OptionValue], Meta(max_length=L.MAX_OPTIONS)]
VariantName = Annotated[str, Meta(min_length=1, max_length=L.MAX_VARIANT, pattern=IDENT_PATTERN)]
RankBy = Literal["time", "progress"]
DealChoice = Literal["random", "winnable"]
Role = Literal["player", "spectator"]
RoomPhase = Literal["lobby", "countdown", "running", "finished"]
# A seat's state in the race.
SeatStatus = Literal["lobby", "playing", "won", "stuck", "resigned", "timeout"]
# A card turned face up by a move: (pile number from 1, card code such as "QS").
Reveal = tuple[int, str]


class _Msg(msgspec.Struct, tag_field="t", omit_defaults=True, kw_only=True):
    """Base of every message: tagged by ``t``; fields equal to their default are omitted."""


# =========================================================================== client → server


class Hello(_Msg, tag="hello"):
    """First message on every connection (answered by ``Welcome``, or by ``Error``
    version_mismatch when ``version`` is not the server's). With ``token`` it resumes
    that seat instead (answered by ``Joined``): ``seen`` is the last move sequence the
    client applied to its own board, and the server replays the moves after it."""

    version: Annotated[int, Meta(ge=0, le=L.MAX_VERSION)] = field(name="v")
    name: Name = field(name="n")
    bot: bool = field(default=False, name="b")
    client: Annotated[str, Meta(max_length=L.MAX_CLIENT_STR, pattern=PLAIN_PATTERN)] = field(
        default="", name="c"
    )
    token: Token | None = field(default=None, name="k")
    seen: Seq = field(default=0, name="s")
    legal_moves: bool = field(default=False, name="lm")
    # A client that applies ``DS`` (``Diffs``) frames says so; an older one keeps getting a
    # ``P`` and a ``D`` per move as a spectator (a frame type it does not know would be
    # skipped, and its boards would stop).
    batched: bool = field(default=False, name="ds")


class RoomSettings(msgspec.Struct, omit_defaults=True, kw_only=True):
    """How a room races. Omitted fields take the defaults shown."""

    variant: VariantName = field(name="v")
    options: Options = field(default_factory=dict, name="o")
    rank_by: RankBy = field(default="time", name="r")
    max_players: Annotated[int, Meta(ge=1, le=L.MAX_SEATS)] = field(default=4, name="m")
    time_limit_s: Annotated[int, Meta(ge=0, le=L.MAX_TIME_LIMIT_S)] = field(default=0, name="tl")
    spectators: bool = field(default=True, name="sp")
    spectator_delay_s: Annotated[int, Meta(ge=0, le=L.MAX_SPECTATOR_DELAY_S)] = field(
        default=0, name="sd"
    )
    deal: DealChoice = field(default="random", name="d")
    hints: bool = field(default=False, name="h")
    countdown_s: Annotated[int, Meta(ge=0, le=L.MAX_COUNTDOWN_S)] = field(default=3, name="cd")
    public: bool = field(default=True, name="pu")


class CreateRoom(_Msg, tag="create"):
    """Create a room and take its first seat (``as_player``) or watch it."""

    settings: RoomSettings = field(name="r")
    as_player: bool = field(default=True, name="p")


class ListRooms(_Msg, tag="list"):
    """Ask for one page of the open public rooms, newest first (answered by
    ``RoomList``): the first page without ``before``, the next with the ``next`` of the
    page before."""

    before: ListCursor | None = field(default=None, name="b")


class Join(_Msg, tag="join"):
    """Join a room by its code, as a player or a spectator."""

    code: RoomCode = field(name="c")
    role: Role = field(default="player", name="r")


class Ready(_Msg, tag="ready"):
    """Say you are (or are no longer) ready; the race starts when every player is. After
    the results: ask for (or withdraw from) a rematch, the next deal in this room."""

    ready: bool = field(default=True, name="r")


class StartNow(_Msg, tag="start"):
    """The creator starts the countdown without waiting for everyone to be ready; after
    the results, it starts the rematch with the players who asked."""


class Move(_Msg, tag="M"):
    """Play a move. ``seq`` is the number this move will have in your log: one more than
    the last sequence acknowledged to you. Answered by exactly one ``Accepted`` or
    ``Rejected``, in order; a wrong ``seq`` (a resent move included) is ``out_of_order``
    with the expected one."""

    seq: Annotated[int, Meta(ge=1, le=L.MAX_SEQ)] = field(name="s")
    move: Notation = field(name="m")


class Resign(_Msg, tag="resign"):
    """Give up the race; your rank is then decided by your progress."""


class Leave(_Msg, tag="leave"):
    """Leave the room; the connection stays open. A player's seat is kept (it can be
    resumed with its token); in a running race it counts as resigned if nobody resumes
    it within the server's grace period."""


class HintRequest(_Msg, tag="hint"):
    """Ask for a hint (only in rooms with ``hints`` on)."""


class Ping(_Msg, tag="ping"):
    """Liveness check, answered by ``Pong`` with the same nonce."""

    nonce: Annotated[int, Meta(ge=0, le=L.MAX_NONCE)] = field(default=0, name="x")


ClientMessage = (
    Hello | CreateRoom | ListRooms | Join | Ready | StartNow | Move | Resign | Leave
    | HintRequest | Ping
)

# =========================================================================== server → client


class Welcome(_Msg, tag="welcome"):
    """Answer to a hello without a token: the session is open."""

    version: int = field(name="v")
    server: str = field(name="sv")
    node: str = field(name="nd")
    server_ms: int = field(name="ts")
    max_frame: int = field(name="mf")
    rate_per_s: float = field(name="rl")


class Error(_Msg, tag="err"):
    """Something the client sent failed. Nothing changed. ``retryable`` says whether
    sending it again later may succeed; ``fatal`` that the server closes the connection."""

    code: str = field(name="c")
    message: str = field(name="m")
    retryable: bool = field(default=False, name="r")
    fatal: bool = field(default=False, name="f")


class RoomSummary(msgspec.Struct, omit_defaults=True, kw_only=True):
    """One line of the room list."""

    code: str = field(name="c")
    variant: str = field(name="v")
    options: dict[str, bool | int | str] = field(default_factory=dict, name="o")
    rank_by: RankBy = field(name="r")
    phase: RoomPhase = field(name="ph")
    players: int = field(name="n")
    max_players: int = field(name="m")
    bots: int = field(default=0, name="b")
    spectators: bool = field(default=True, name="sp")


class RoomList(_Msg, tag="rooms"):
    """One page of the open public rooms, newest first; ``next`` asks for the page after
    it (absent: this is the last page)."""

    rooms: list[RoomSummary] = field(name="r")
    next: ListCursor | None = field(default=None, name="n")


class SeatInfo(msgspec.Struct, omit_defaults=True, kw_only=True):
    """What everyone may know of one seat: never its board while the race runs."""

    seat: int = field(name="p")
    name: str = field(name="n")
    bot: bool = field(default=False, name="b")
    ready: bool = field(default=False, name="r")
    connected: bool = field(default=True, name="on")
    status: SeatStatus = field(default="lobby", name="st")
    progress: int = field(default=0, name="g")
    moves: int = field(default=0, name="mv")
    finish_ms: int | None = field(default=None, name="fm")


class Board(msgspec.Struct, omit_defaults=True, kw_only=True):
    """One seat's board as a view (face-down cards as counts: RULES.md layout format)
    after ``seq`` moves, with its state hash."""

    seat: int = field(name="p")
    seq: int = field(name="s")
    view: dict[str, object] = field(name="w")
    hash: int = field(name="h")
    legal: list[str] | None = field(default=None, name="lm")


class Joined(_Msg, tag="joined"):
    """You are in a room (after create, join or resume): everything to draw it.

    ``seat`` is 0 for a spectator. ``token`` (players only) resumes the seat later; keep
    it secret. ``boards`` holds your own board while racing, every board (masked, and
    delayed for spectators if the room says so) for spectators and after the finish.
    ``hidden`` (spectators of a running race): boards are withheld while any racing seat
    still has a face-down card; they arrive as ``Snapshot`` messages once none has."""

    code: str = field(name="c")
    settings: RoomSettings = field(name="r")
    phase: RoomPhase = field(name="ph")
    seat: int = field(name="p")
    commitment: str = field(name="cm")
    seats: list[SeatInfo] = field(name="ss")
    token: str | None = field(default=None, name="k")
    creator: int = field(default=0, name="cr")
    start_ms: int | None = field(default=None, name="st")
    clock_ms: int | None = field(default=None, name="ck")
    boards: list[Board] = field(default_factory=list, name="bd")
    round: int = field(default=1, name="rd")
    hidden: bool = field(default=False, name="hd")


class Seats(_Msg, tag="seats"):
    """The seats changed (someone joined, left, got ready, connected or dropped)."""

    seats: list[SeatInfo] = field(name="ss")


class Countdown(_Msg, tag="countdown"):
    """The race starts at ``start_ms`` (server wall clock, Unix ms)."""

    start_ms: int = field(name="st")
    server_ms: int = field(name="ts")


class Started(_Msg, tag="started"):
    """The race is on: your initial board (spectators get every board, unless ``hidden``:
    the deal has face-down cards, so spectators get no board until no racing seat has
    one; see ``Joined``)."""

    start_ms: int = field(name="st")
    boards: list[Board] = field(name="bd")
    hidden: bool = field(default=False, name="hd")


class Accepted(_Msg, tag="A"):
    """Your move ``seq`` is accepted and stored: apply it to your view. ``revealed`` lists
    the cards it turned face up as [pile, code] (omitted when none); ``hash`` is the state
    hash after it; ``clock_ms`` the race clock when it was accepted."""

    seq: int = field(name="s")
    hash: int = field(name="h")
    clock_ms: int = field(name="c")
    revealed: list[Reveal] = field(default_factory=list, name="r")
    legal: list[str] | None = field(default=None, name="lm")


class Rejected(_Msg, tag="R"):
    """Your move ``seq`` was not played; nothing changed. ``expected`` is the sequence the
    server expects next (so a client that lost track can resynchronise)."""

    seq: int = field(name="s")
    code: str = field(name="c")
    reason: str = field(name="m")
    expected: int = field(name="e")
    retryable: bool = field(default=False, name="rt")


class Diff(_Msg, tag="D"):
    """A move on ``seat``'s board, for whoever may see that board (spectators; the seat
    itself when replaying on resume; everyone after the finish)."""

    seat: int = field(name="p")
    seq: int = field(name="s")
    move: str = field(name="m")
    hash: int = field(name="h")
    clock_ms: int = field(name="c")
    revealed: list[Reveal] = field(default_factory=list, name="r")
    legal: list[str] | None = field(default=None, name="lm")


class Diffs(_Msg, tag="DS"):
    """Everything a spectator may see of the moves of one tick of the room (sent to a
    client whose hello set ``batched``, instead of a ``P`` and a ``D`` per move): apply
    ``diffs`` in order exactly as that run of ``D`` frames, then ``progress`` as ``P``
    frames (the latest per seat)."""

    diffs: list[Diff] = field(default_factory=list, name="d")
    progress: list[Progress] = field(default_factory=list, name="ps")


class Progress(_Msg, tag="P"):
    """A seat's progress changed: what rivals may see while the race runs."""

    seat: int = field(name="p")
    progress: int = field(name="g")
    moves: int = field(name="mv")
    status: SeatStatus = field(name="st")
    clock_ms: int = field(name="c")


class RankEntry(msgspec.Struct, omit_defaults=True, kw_only=True):
    """One line of a ranking (see PROTOCOL.md for the order and tie-breaks)."""

    rank: int = field(name="k")
    seat: int = field(name="p")
    name: str = field(name="n")
    bot: bool = field(default=False, name="b")
    status: SeatStatus = field(name="st")
    progress: int = field(name="g")
    moves: int = field(name="mv")
    finish_ms: int | None = field(default=None, name="fm")
    progress_ms: int | None = field(default=None, name="gm")
    bot_like: bool = field(default=False, name="bl")


class Ranking(_Msg, tag="rank"):
    """The live ranking, sent whenever it changes."""

    ranking: list[RankEntry] = field(name="k")


class Snapshot(_Msg, tag="snap"):
    """A whole board, replacing the receiver's. This server sends none today (a resume
    too far behind gets the board in ``joined``), but a client must accept it."""

    board: Board = field(name="bd")


class SeatLog(msgspec.Struct, omit_defaults=True, kw_only=True):
    """One seat's complete move log, in order, with the race clock (ms) at which each
    move was accepted (``clocks``, same length), so anyone can recompute finish and
    progress times from the results."""

    seat: int = field(name="p")
    moves: list[str] = field(name="ml")
    clocks: list[int] = field(default_factory=list, name="cl")


class Results(_Msg, tag="results"):
    """The race is over. Everything is public now: the seed and salt (check them against
    the commitment), every move log, the final ranking. ``par`` is a solver's solution
    length when known; ``winnable`` whether the deal was proven winnable (None: unknown)."""

    code: str = field(name="c")
    variant: str = field(name="v")
    options: dict[str, bool | int | str] = field(name="o")
    rank_by: RankBy = field(name="r")
    seed: int = field(name="sd")
    salt: str = field(name="sl")
    commitment: str = field(name="cm")
    ranking: list[RankEntry] = field(name="k")
    logs: list[SeatLog] = field(name="lg")
    reason: str = field(name="why")
    winnable: bool | None = field(default=None, name="wn")
    par: int | None = field(default=None, name="par")
    round: int = field(default=1, name="rd")


class Verdict(_Msg, tag="verdict"):
    """Whether the race's deal was winnable, and its par, when the server learned it
    after the results went out (the results never wait for the solver). Refers to the
    room by code; may reach a client just before that room's ``results``."""

    code: str = field(name="c")
    winnable: bool | None = field(default=None, name="wn")
    par: int | None = field(default=None, name="par")


class Hint(_Msg, tag="hint"):
    """A suggested move (``None`` when none is known)."""

    move: str | None = field(name="m")


class Pong(_Msg, tag="pong"):
    """Answer to ``Ping``."""

    server_ms: int = field(name="ts")
    nonce: int = field(default=0, name="x")


class Closing(_Msg, tag="bye"):
    """The server is about to close this connection, and why (an error code)."""

    code: str = field(name="c")
    message: str = field(name="m")


ServerMessage = (
    Welcome | Error | RoomList | Joined | Seats | Countdown | Started | Accepted | Rejected
    | Diff | Diffs | Progress | Ranking | Snapshot | Results | Verdict | Hint | Pong | Closing
)


def error_reply(error: ProtocolError) -> Error:
    """The ``Error`` message that reports ``error``: its code and message, ``retryable``
    and ``fatal`` as the code's class says (``errors.RETRYABLE``, ``errors.FATAL``)."""
    return Error(
        code=error.code.value,
        message=error.message,
        retryable=error.retryable,
        fatal=error.code in FATAL,
    )
