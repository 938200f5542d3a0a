"""The life of one room as a pure state machine: ``step(room, event, now_ms) → effects``.

Phases: ``lobby`` → ``countdown`` → ``running`` → ``finished``; a finished room then gets
its results (``has_results``), which is the end. The machine never reads a clock, a
socket or the store: the shell reads the room (``RoomState``) from the store, feeds the
machine one ``Event`` with the current time, and carries out the returned effects in
order. Several nodes may feed the same room at once: every phase change is a
compare-and-set in the store (``Transition``), and the shell stops carrying out a list of
effects at the first ``Transition`` it loses, so exactly one node acts on each change.

Deadlines (``Arm``/``Disarm``) are records in the store, swept by every node; the machine
arms each one in the step that makes it due, and handles ``Due`` for it idempotently:
a deadline that fires twice, late or in a phase it no longer applies to does nothing.

- ``start``  (countdown): the race starts at ``start_ms``.
- ``end``    (countdown, running; timed races): the time limit.
- ``abandon:N`` (running, untimed): seat N offline for the whole grace period resigns.
- ``results`` (finished): the results are due. Armed *before* the finish's
  compare-and-set and cleared only once the results are stored *and* published, so a
  node that dies (or a store that fails) anywhere in between leaves a deadline that any
  node fires, rebuilding the results from the logs or announcing the stored ones.
- ``lobby``  (lobby): a room that never starts expires.

Rematch: once a finished room has its results, ``ready`` from a seat means "I want a
rematch" (``ReadySet``); when every connected seat asked, or the creator sends
``start``, ``NewRound`` takes the room back to ``lobby`` on a new deal with the seats
that asked (the creator's own seat included when it forces it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from protocol import Code
from protocol.messages import RoomPhase, SeatStatus

DONE: frozenset[str] = frozenset({"won", "stuck", "resigned", "timeout"})
START_RETRY_MS = 1_000  # a start found in the lobby looks again this much later
RESULTS_GRACE_MS = 1_000  # the finishing node has this long to store the results itself


# ------------------------------------------------------------------------------ state
@dataclass(frozen=True)
class SeatState:
    """What the machine reads of a seat (from the store's seat record)."""

    seat: int
    connected: bool = True
    ready: bool = False
    status: SeatStatus = "lobby"
    epoch: int = 1


@dataclass(frozen=True)
class RoomState:
    """What the machine reads of a room (from the store's room record and seats)."""

    phase: RoomPhase
    creator: int = 0
    created_ms: int = 0
    start_ms: int | None = None
    countdown_s: int = 0
    time_limit_s: int = 0
    lobby_ttl_s: int = 6 * 3600
    abandon_after_ms: int = 300_000
    has_results: bool = False
    seats: tuple[SeatState, ...] = ()
    # the deal's standing before any move (core.standing.opening): every seat's status
    # at the start ("stuck" when the deal has no legal move)
    opening_status: SeatStatus = "playing"
    opening_progress: int = 0  # the deal's foundation cards (4 in Perseverance)

    def seat(self, number: int) -> SeatState | None:
        """The seat ``number``, or None."""
        return next((s for s in self.seats if s.seat == number), None)


# ------------------------------------------------------------------------------ events
@dataclass(frozen=True)
class Joined:
    """A player took seat ``seat`` (lobby) — already stored by the shell."""

    seat: int


@dataclass(frozen=True)
class ReadySet:
    """Seat ``seat`` says it is (not) ready."""

    seat: int
    ready: bool


@dataclass(frozen=True)
class StartAsked:
    """Seat ``seat`` (the creator, or not) asks to start now. ``watching_creator``: the
    sender is the connection that created the room without a seat (seat 0)."""

    seat: int
    watching_creator: bool = False


@dataclass(frozen=True)
class MoveStored:
    """Seat ``seat``'s move was stored; its status is now ``status``."""

    seat: int
    status: SeatStatus


@dataclass(frozen=True)
class Left:
    """Seat ``seat``'s connection left (leave or disconnect); ``epoch`` was its hold."""

    seat: int
    epoch: int


@dataclass(frozen=True)
class Resumed:
    """Seat ``seat`` was taken by a new connection (resume)."""

    seat: int


@dataclass(frozen=True)
class Resigned:
    """Seat ``seat`` gives up."""

    seat: int
    epoch: int


@dataclass(frozen=True)
class Check:
    """Seats changed (the shell wrote them, or a ``Recheck`` asked): move the phase on if
    the seats say so (everyone ready: countdown; nobody playing: finish)."""


@dataclass(frozen=True)
class Due:
    """The deadline ``kind`` fell due (see the module docstring)."""

    kind: str


Event = Joined | ReadySet | StartAsked | MoveStored | Left | Resumed | Resigned | Check | Due


# ------------------------------------------------------------------------------ effects
@dataclass(frozen=True)
class Refuse:
    """Answer the sender with an error; nothing else happens (always alone)."""

    code: Code
    message: str = ""


@dataclass(frozen=True)
class Transition:
    """Compare-and-set the room's phase ``expect`` → ``phase`` with ``fields``. If the
    store says no (another node was first), carry out none of the effects after it."""

    expect: RoomPhase
    phase: RoomPhase
    fields: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class SetSeat:
    """Set some fields of seat ``seat``'s record."""

    seat: int
    fields: dict[str, object]


@dataclass(frozen=True)
class Arm:
    """Store the deadline ``kind`` at ``at_ms`` (replacing an earlier one)."""

    kind: str
    at_ms: int


@dataclass(frozen=True)
class Disarm:
    """Remove the deadline ``kind``."""

    kind: str


@dataclass(frozen=True)
class Announce:
    """Tell every node of the room: ``what`` is ``countdown`` (with ``start_ms``),
    ``started``, ``seats`` (the seat list changed), ``seat`` (seat ``seat``'s status
    changed without a move) or ``ranking``."""

    what: str
    seat: int = 0
    start_ms: int | None = None


@dataclass(frozen=True)
class Finish:
    """Fence every seat, mark the seats still playing (``timeout`` when ``reason`` is
    ``time``, else ``resigned``), build the results from the logs, store them (if no node
    did yet) and announce them; then the ``results`` deadline is done. Idempotent."""

    reason: str


@dataclass(frozen=True)
class Recheck:
    """Read the room again and feed it ``Check``. A decision that depends on every seat
    (all ready, all done) is taken from a read made *after* this step's seat write, so
    two nodes writing two seats at once cannot both miss the last change."""


@dataclass(frozen=True)
class Expire:
    """The lobby expired: the room and everything in it may go now."""


@dataclass(frozen=True)
class NewRound:
    """A rematch: deal a new secret seed (new salt, new commitment), then, in one
    compare-and-set on ``finished``, take the room back to ``lobby`` for its next round
    with the seats ``keep`` (reset: not ready, no moves; the others are removed), arm
    the lobby deadline, and tell every node (each sends its members ``Joined``)."""

    keep: tuple[int, ...]


Effect = (
    Refuse | Transition | SetSeat | Arm | Disarm | Announce | Finish | Recheck | Expire
    | NewRound
)


# ------------------------------------------------------------------------------ step
def step(room: RoomState, event: Event, now_ms: int) -> list[Effect]:
    """The effects of ``event`` on ``room`` at ``now_ms`` (see the module docstring)."""
    if isinstance(event, Joined):
        return [Announce("seats")]
    if isinstance(event, ReadySet):
        return _ready(room, event, now_ms)
    if isinstance(event, StartAsked):
        return _start(room, event, now_ms)
    if isinstance(event, MoveStored):
        return _moved(room, event, now_ms)
    if isinstance(event, Left):
        return _left(room, event, now_ms)
    if isinstance(event, Resumed):
        return _resumed(room, event, now_ms)
    if isinstance(event, Resigned):
        return _resigned(room, event, now_ms)
    if isinstance(event, Check):
        return _check(room, now_ms)
    return _due(room, event, now_ms)


def deadlines(room: RoomState) -> list[Arm]:
    """Every deadline the room's phase needs (a shell that lost its deadlines, or that
    creates a room, arms these)."""
    out: list[Arm] = []
    if room.phase == "lobby":
        out.append(Arm("lobby", room.created_ms + room.lobby_ttl_s * 1000))
    if room.phase == "countdown" and room.start_ms is not None:
        out.append(Arm("start", room.start_ms))
    if room.phase in ("countdown", "running") and room.time_limit_s and room.start_ms is not None:
        out.append(Arm("end", room.start_ms + room.time_limit_s * 1000))
    if room.phase == "finished" and not room.has_results:
        out.append(Arm("results", 0))
    return out


def _ready(room: RoomState, event: ReadySet, now_ms: int) -> list[Effect]:
    if room.phase == "finished" and room.has_results:  # (not) asking for a rematch
        return [SetSeat(event.seat, {"ready": event.ready}), Announce("seats"), Recheck()]
    if room.phase != "lobby":
        return [Refuse(Code.ROOM_CLOSED, "the race has already started")]
    return [SetSeat(event.seat, {"ready": event.ready}), Announce("seats"), Recheck()]


def _check(room: RoomState, now_ms: int) -> list[Effect]:
    if room.phase == "lobby" and _all_ready(room):
        return _countdown(room, now_ms)
    if room.phase == "running" and _all_done(room):
        return _finish(room, "all_done", now_ms)
    if room.phase == "finished" and room.has_results and _all_ready(room):
        return [NewRound(_asked(room))]
    return []


def _start(room: RoomState, event: StartAsked, now_ms: int) -> list[Effect]:
    if not (event.watching_creator or (event.seat != 0 and event.seat == room.creator)):
        return [Refuse(Code.NOT_CREATOR)]
    if room.phase == "finished" and room.has_results:  # the creator forces the rematch
        return [NewRound(tuple(sorted({*_asked(room), *([event.seat] if event.seat else [])})))]
    if room.phase != "lobby":
        return [Refuse(Code.ROOM_CLOSED, "the race has already started")]
    return _countdown(room, now_ms)


def _countdown(room: RoomState, now_ms: int) -> list[Effect]:
    start_ms = now_ms + room.countdown_s * 1000
    # The deadlines go first: a node that dies, or a store that fails, right after the
    # compare-and-set must not leave a countdown nobody ends. A start that falls due
    # before the compare-and-set is stored finds a lobby and comes back a little later
    # (see _due); the shell wakes its own sweeper only after the compare-and-set.
    effects: list[Effect] = [Arm("start", start_ms)]
    if room.time_limit_s:
        effects.append(Arm("end", start_ms + room.time_limit_s * 1000))
    effects += [
        Transition("lobby", "countdown", {"start_ms": start_ms}),
        Announce("countdown", start_ms=start_ms),
        Disarm("lobby"),
    ]
    return effects


def _begin(room: RoomState, now_ms: int, transition: bool = True) -> list[Effect]:
    """countdown → running: every seat gets the deal's standing before anyone is told.
    Without ``transition``: the rest of a start whose node died after the change."""
    effects: list[Effect] = [Transition("countdown", "running")] if transition else []
    status = room.opening_status
    effects += [SetSeat(s.seat, {"status": status, "progress": room.opening_progress})
                for s in room.seats]
    effects.append(Announce("started"))
    if not room.time_limit_s:
        # Left in the lobby: an untimed race gives them the grace period to return.
        effects += [Arm(f"abandon:{s.seat}", now_ms + room.abandon_after_ms)
                    for s in room.seats if not s.connected]
    if status != "playing" or not room.seats:
        effects.append(Announce("ranking"))
        effects += _finish(room, "all_done", now_ms)
    return effects


def _finish(room: RoomState, reason: str, now_ms: int) -> list[Effect]:
    # The results deadline goes first: if this node dies after the phase change, another
    # node finds the deadline and builds the results.
    return [
        Arm("results", now_ms + RESULTS_GRACE_MS),
        Transition("running", "finished", {"end_ms": now_ms, "end_reason": reason}),
        Disarm("end"),
        Finish(reason),
    ]


def _moved(room: RoomState, event: MoveStored, now_ms: int) -> list[Effect]:
    # the move's append wrote the seat's status before this read: the room is fresh
    return [] if event.status == "playing" else _check(room, now_ms)


def _left(room: RoomState, event: Left, now_ms: int) -> list[Effect]:
    seat = room.seat(event.seat)
    if seat is None:
        return []
    if room.phase == "finished":
        # No resume after the results (so no epoch to check: the finish bumped them all);
        # a player who leaves cannot ask for a rematch, nor hold it up.
        if not room.has_results or not seat.connected:
            return []
        return [SetSeat(event.seat, {"connected": False, "ready": False}), Announce("seats"),
                Recheck()]
    if seat.epoch != event.epoch:
        return []
    if room.phase == "lobby":
        return [SetSeat(event.seat, {"connected": False, "ready": False}), Announce("seats"),
                Recheck()]
    effects: list[Effect] = [SetSeat(event.seat, {"connected": False}), Announce("seats")]
    if room.phase == "running" and seat.status == "playing" and not room.time_limit_s:
        # A timed race ends anyway; an untimed one must not wait for ever.
        effects.append(Arm(f"abandon:{event.seat}", now_ms + room.abandon_after_ms))
    return effects


def _resumed(room: RoomState, event: Resumed, now_ms: int) -> list[Effect]:
    if room.phase == "finished":
        return []
    return [SetSeat(event.seat, {"connected": True}), Disarm(f"abandon:{event.seat}"),
            Announce("seats")]


def _resigned(room: RoomState, event: Resigned, now_ms: int) -> list[Effect]:
    if room.phase in ("lobby", "countdown"):
        return [Refuse(Code.NOT_RUNNING)]
    seat = room.seat(event.seat)
    if room.phase == "finished" or seat is None or seat.status != "playing":
        status = seat.status if seat else "finished"
        refuse = Refuse(Code.FINISHED, f"your race is over ({status})")
        # running: a node may have died between this seat's last write and its Check
        return [Recheck(), refuse] if room.phase == "running" else [refuse]
    if seat.epoch != event.epoch:
        return [Refuse(Code.TAKEN_OVER, "another connection resumed this seat")]
    return _give_up(room, event.seat, now_ms)


def _give_up(room: RoomState, seat: int, now_ms: int) -> list[Effect]:
    # the abandon deadline is done last: a node dying before it leaves it to fire again
    return [SetSeat(seat, {"status": "resigned"}), Announce("seat", seat=seat),
            Announce("ranking"), Recheck(), Disarm(f"abandon:{seat}")]


def _due(room: RoomState, event: Due, now_ms: int) -> list[Effect]:
    kind = event.kind
    if kind == "start":
        if room.phase == "running" and any(s.status == "lobby" for s in room.seats):
            # the node that started the race died before its seats were set: finish it
            return _begin(room, now_ms, transition=False)
        if room.phase == "lobby":  # armed just before the countdown's compare-and-set
            return [Arm("start", now_ms + START_RETRY_MS)]
        if room.phase != "countdown":
            return []
        if room.start_ms is not None and now_ms < room.start_ms:
            return [Arm("start", room.start_ms)]  # early (clock skew): not yet
        return _begin(room, now_ms)
    if kind == "end":
        if room.phase == "countdown":  # the start was missed (outage): start, then end
            return [*_begin(room, now_ms), *_due(_started(room), event, now_ms)]
        if room.phase != "running" or room.start_ms is None:
            return []
        end = room.start_ms + room.time_limit_s * 1000
        if now_ms < end:
            return [Arm("end", end)]
        return _finish(room, "time", now_ms)
    if kind.startswith("abandon:"):
        number = int(kind.partition(":")[2])
        seat = room.seat(number)
        if room.phase != "running" or seat is None or seat.connected:
            return []
        if seat.status not in ("playing", "lobby"):
            return _check(room, now_ms)  # given up already: the finish may be owed
        return _give_up(room, number, now_ms)
    if kind == "results":
        if room.phase == "running":  # a Due on a finish that never happened: finish now
            return _finish(room, "all_done" if _all_done(room) else "time", now_ms)
        if room.phase == "finished":
            # stored results may not have been announced yet (the store failed, or the
            # node died, between storing and publishing): Finish announces them again
            return [Finish("")]
        return []
    if kind == "lobby":
        return [Expire()] if room.phase == "lobby" else []
    return []


# ------------------------------------------------------------------------------ helpers
def _started(room: RoomState) -> RoomState:
    status = room.opening_status
    return replace(room, phase="running",
                   seats=tuple(replace(s, status=status) for s in room.seats))


def _all_ready(room: RoomState) -> bool:
    present = [s for s in room.seats if s.connected]
    return bool(present) and all(s.ready for s in present)


def _asked(room: RoomState) -> tuple[int, ...]:
    """The connected seats that asked for a rematch."""
    return tuple(s.seat for s in room.seats if s.connected and s.ready)


def _all_done(room: RoomState) -> bool:
    return bool(room.seats) and all(s.status in DONE for s in room.seats)


def transitions(effects: Sequence[Effect]) -> list[Transition]:
    """The phase changes among ``effects`` (for logs and tests)."""
    return [e for e in effects if isinstance(e, Transition)]
