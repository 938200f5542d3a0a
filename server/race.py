"""The race's shell: it feeds the core (``core.machine``) and carries out its effects.

``run(room, event)`` reads the room and its seats from the store, asks the core what
``event`` means now, and carries the effects out in order: compare-and-set phase changes
(a lost one stops the rest: another node acted), seat writes, deadlines in the store,
announcements to every node, and the finish. The move itself (``play``) stays a short
path of its own: judge, append, acknowledge; the core hears of it only when the seat's
status changed.

The finish (``finish``) is idempotent: any node may run it for a finished room, and the
first results stored win (``Store.put_results``), so a node that dies between the
finish and the results leaves a ``results`` deadline that another node fires.
Moves are fenced by the seat's epoch: the finish bumps every seat's epoch before reading
the logs, so no move can be acknowledged after the results without being in them.
"""

from __future__ import annotations

import asyncio
import logging
import operator
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import msgspec

import engine
from protocol import Code, ProtocolError, encode
from protocol.messages import (
    Accepted,
    Hint,
    Move,
    Ranking,
    Rejected,
    Results,
    SeatLog,
    SeatStatus,
)
from protocol.ranking import BOT_LIKE_MOVES, BOT_LIKE_SPAN_MS, is_deliberate, rank

from . import events as ev
from . import views
from .core import machine as core
from .core.standing import opening
from .metrics import error_kind
from .room import Member, Room
from .seeds import choose_seed
from .store import (
    LogEntry,
    RoomRecord,
    SeatRecord,
    SeqConflict,
    StaleEpoch,
    StoreError,
    StoreUnavailable,
)

log = logging.getLogger(__name__)


# ---------------------------------------------------------------------------- the shell
def room_state(record: RoomRecord, seats: list[SeatRecord], room: Room,
               has_results: bool = False) -> core.RoomState:
    """What the core reads of a room: the store's records, the room's settings and the
    node's config."""
    settings, config = room.settings, room.config
    opening_status: SeatStatus = "playing"
    opening_progress = 0
    starting = record.phase == "countdown" or (
        record.phase == "running" and any(s.status == "lobby" for s in seats))
    if starting:  # only the start (or a start to complete) needs the deal's standing
        start = opening(views.new_board(record, settings))
        opening_status, opening_progress = start.status, start.progress
    return core.RoomState(
        phase=record.phase, creator=record.creator, created_ms=record.created_ms,
        start_ms=record.start_ms, countdown_s=settings.countdown_s,
        time_limit_s=settings.time_limit_s, lobby_ttl_s=config.lobby_ttl_s,
        abandon_after_ms=int(config.abandon_after_s * 1000), has_results=has_results,
        seats=tuple(core.SeatState(s.seat, s.connected, s.ready, s.status, s.epoch)
                    for s in seats),
        opening_status=opening_status, opening_progress=opening_progress,
    )


async def run(room: Room, event: core.Event) -> None:
    """Feed ``event`` to the core with the room as the store has it now, and carry out
    the effects (raises ``ProtocolError`` for a ``Refuse``)."""
    store, code = room.store, room.code
    record = await store.get_room(code)
    if record is None:
        return
    seats = await store.get_seats(code)
    has_results = record.phase == "finished" and await store.get_results(code) is not None
    effects = core.step(room_state(record, seats, room, has_results), event, room.now_ms())
    await carry_out(room, effects)


async def carry_out(room: Room, effects: list[core.Effect]) -> None:
    """Carry out ``effects`` in order (see the module docstring)."""
    store, code = room.store, room.code
    # Deadlines armed before a compare-and-set wake this node's sweeper only once it is
    # won (woken at once, a start due now would find the room still a lobby).
    deferred: list[int] = []
    transitions = sum(isinstance(e, core.Transition) for e in effects)
    for effect in effects:
        if isinstance(effect, core.Refuse):
            raise ProtocolError(effect.code, effect.message)
        if isinstance(effect, core.Transition):
            transitions -= 1
            if not await store.set_phase(code, effect.expect, effect.phase, **effect.fields):
                await room.refresh()
                return
            for at_ms in deferred:
                room.server.wake_at(at_ms)
            deferred.clear()
            room.record = msgspec.structs.replace(room.record, phase=effect.phase,
                                                  **effect.fields)
            if effect.phase == "countdown":
                # The room must outlive the race: countdown + limit (or a day) + results.
                settings = room.settings
                ttl = (settings.countdown_s + (settings.time_limit_s or 24 * 3600)
                       + room.config.results_ttl_s)
                await store.expire_room(code, ttl)
        elif isinstance(effect, core.SetSeat):
            await store.update_seat(code, effect.seat, **effect.fields)
        elif isinstance(effect, core.Arm):
            await store.set_deadline(code, effect.kind, effect.at_ms)
            if transitions:
                deferred.append(effect.at_ms)
            else:
                room.server.wake_at(effect.at_ms)
        elif isinstance(effect, core.Disarm):
            try:
                await store.clear_deadline(code, effect.kind)
            except StoreUnavailable as exc:
                # harmless left over: the core ignores a deadline its phase has passed
                log.info("room %s: deadline %s not cleared (%s)", code, effect.kind, exc)
        elif isinstance(effect, core.Announce):
            await _announce(room, effect)
        elif isinstance(effect, core.Finish):
            await finish(room)
        elif isinstance(effect, core.Recheck):
            await run(room, core.Check())
        elif isinstance(effect, core.NewRound):
            await new_round(room, effect.keep)
        else:  # core.Expire: the lobby ran out; its keys go with their TTL
            await store.unlist_room(code)  # the index has no TTL: unlist it now
            await store.expire_room(code, 1)


async def _announce(room: Room, what: core.Announce) -> None:
    if what.what == "countdown" and what.start_ms is not None:
        await room.publish(ev.Countdown(what.start_ms))
    elif what.what == "started":
        seats = await room.store.get_seats(room.code)
        start_ms = room.record.start_ms if room.record.start_ms is not None else room.now_ms()
        await room.publish(ev.Started(start_ms, [s.seat for s in seats]))
    elif what.what == "seats":
        await room.publish_seats()
    elif what.what == "seat":
        seat = await room.store.get_seat(room.code, what.seat)
        if seat is not None:
            await room.publish(ev.SeatStatus(seat.seat, seat.status, seat.progress,
                                             seat.moves, room.clock_ms()))
    else:
        await publish_ranking(room)


# ---------------------------------------------------------------------------- lobby → start
async def set_ready(room: Room, member: Member, ready: bool) -> None:
    """Mark the seat (not) ready; when every connected player is ready, start."""
    _need_player(member)
    await run(room, core.ReadySet(member.seat, ready))


async def start_now(room: Room, member: Member) -> None:
    """The creator (the connection that created the room, seated or watching) starts
    the countdown without waiting for readiness."""
    await run(room, core.StartAsked(member.seat, watching_creator=member.created))


# ---------------------------------------------------------------------------- rematch
async def new_round(room: Room, keep: tuple[int, ...]) -> None:
    """A rematch (``core.NewRound``): a new secret deal, then finished → lobby in one
    step of the store; the lobby deadline and the deal's verdict search as for a new
    room; every node then sends its members ``Joined`` (``Room.new_round``)."""
    store, code, server, config = room.store, room.code, room.server, room.config
    record = await store.get_room(code)
    if record is None or record.phase != "finished":
        return
    seed, winnable, par = await choose_seed(server, room.settings)
    salt = engine.new_salt()
    now = config.clock()
    fields: dict[str, object] = {
        "seed": seed, "salt": salt, "commitment": engine.commitment(seed, salt),
        "round": record.round + 1, "start_ms": None, "end_ms": None, "end_reason": "",
        "winnable": winnable, "par": par, "created_ms": now,
        # a seated creator who did not come along is no longer the creator
        "creator": record.creator if record.creator in keep else 0,
    }
    if not await store.new_round(code, list(keep), **fields):
        return  # another node did it (or the room went)
    await store.expire_room(code, config.lobby_ttl_s)
    await carry_out(room, [core.Arm("lobby", now + config.lobby_ttl_s * 1000)])
    if winnable is None:
        server.verdicts.request(msgspec.structs.replace(record, **fields), room.settings.variant,
                                dict(room.settings.options), client=f"rematch/{code}")
    await room.publish(ev.NewRound(record.round + 1))


# ---------------------------------------------------------------------------- moves
class _Judged(msgspec.Struct, gc=False):
    """A judged move, between ``_judge`` and the store: what the store is given and
    what the seat becomes once it has it. (A Struct: built in C, ~0.1 µs a move.)"""

    after: engine.Game  # the seat's game after the move (a copy: the seat's own waits)
    move: str  # its canonical text
    clock: int
    status: SeatStatus
    progress: int
    progress_ms: int | None
    deliberate: bool
    state_hash: int
    revealed: list[Any]
    bot_marked: bool
    fields: dict[str, object]  # the seat record's fields stored with the move
    event: bytes  # the ``Moved`` event, published by the same store step


async def play(room: Room, member: Member, msg: Move) -> Accepted | Rejected:
    """Judge and store one move; the reply for the player. The seat is the connection's
    own (bound at join/resume): a client cannot name another seat. One store call stores
    the move and publishes its ``Moved`` event (docs/SERVER.md "One move"); the ack is
    queued as soon as it returns, and nothing else waits on the connection's path but
    the core's finish check after a move that ended the seat's race."""
    judged = _judge(room, member, msg)
    if isinstance(judged, Rejected):
        return judged
    try:
        await room.store.append_move(
            room.code, member.seat, member.epoch, msg.seq,
            LogEntry(judged.move, judged.clock), event=judged.event, **judged.fields)
    except StoreError as exc:
        refused = _not_stored(room, member, msg, exc)
        return refused if isinstance(refused, Rejected) else await refused
    ack = _stored(room, member, msg, judged)
    # Only a move that ended the seat's race (won, stuck) concerns the core — the seat
    # has no next move to delay.
    if judged.status != "playing":
        await run(room, core.MoveStored(member.seat, judged.status))
    return ack


def play_now(room: Room, member: Member, msg: Move,
             append: Callable[..., None]) -> Accepted | Rejected | Coroutine[Any, Any, Any]:
    """``play`` for a store that appends synchronously (``append``: its
    ``append_move_now``, the same step as ``append_move``), without a coroutine: the
    reply — or, when what follows must wait (the core's finish check after a move that
    ended the seat's race, or the room read after a stale epoch), a coroutine to await
    for the rest (its result: the reply; the ack, if any, is sent already)."""
    judged = _judge(room, member, msg)
    if isinstance(judged, Rejected):
        return judged
    try:  # (the fields as a dict: a call with ``**`` would copy it)
        append(room.code, member.seat, member.epoch, msg.seq,
               LogEntry(judged.move, judged.clock), judged.event, judged.fields)
    except StoreError as exc:  # counted as metrics.InstrumentedStore counts append_move's
        room.server.metrics.store_errors.labels("append_move", error_kind(exc)).inc()
        return _not_stored(room, member, msg, exc)
    ack = _stored(room, member, msg, judged)
    if judged.status != "playing":
        return _finish_check(room, member.seat, judged.status, ack)
    return ack


Outcome = Accepted | Rejected | Coroutine[Any, Any, Any] | Exception


def play_later(room: Room, member: Member, msg: Move, append: Callable[..., None],
               done: Callable[[Exception | None], None]) -> _Judged | Rejected:
    """``play`` in two steps, for a store that answers an append by callback
    (``append``: its ``append_move_later``, the same step as ``append_move``: the Redis
    group commit), without a coroutine or a task. This step judges the move: its
    ``Rejected``, or the judged move, handed to the store, which calls ``done`` (None:
    stored, else the exception) once it answered; then ``appended`` is the rest."""
    judged = _judge(room, member, msg)
    if isinstance(judged, Rejected):
        return judged
    append(room.code, member.seat, member.epoch, msg.seq, LogEntry(judged.move, judged.clock),
           done, event=judged.event, **judged.fields)
    return judged


def appended(room: Room, member: Member, msg: Move, judged: _Judged,
             exc: Exception | None) -> Outcome:
    """The rest of ``play_later`` once the store answered (``exc``: None when the move
    is stored): what ``play_now`` would return — the ``Accepted`` (sent already; the
    seat's state advances only now), a ``Rejected`` (nothing changed), or a coroutine
    for what must wait — or the exception ``play`` would raise."""
    try:
        if exc is None:
            ack = _stored(room, member, msg, judged)
            if judged.status == "playing":
                return ack
            return _finish_check(room, member.seat, judged.status, ack)
        # counted as metrics.InstrumentedStore counts append_move's
        room.server.metrics.store_errors.labels("append_move", error_kind(exc)).inc()
        if not isinstance(exc, StoreError):
            return exc
        return _not_stored(room, member, msg, exc)
    except Exception as failed:
        return failed


async def _finish_check(room: Room, seat: int, status: SeatStatus, ack: Accepted) -> Accepted:
    await run(room, core.MoveStored(seat, status))
    return ack


def _judge(room: Room, member: Member, msg: Move) -> _Judged | Rejected:
    """Everything before the store: the move judged on a copy of the seat's game, and
    what to store with it (or its ``Rejected``)."""
    expected = member.seq + 1
    # (Per move, each property or method call saved counts: ``member.is_player``,
    # ``room.phase`` and ``room.clock_ms()`` are read here from what they read.)
    if member.seat <= 0:  # not a player: a spectator
        return _reject(room, msg, expected, Code.NOT_A_PLAYER, "spectators cannot move")
    record = room.record
    phase = record.phase
    if phase in ("lobby", "countdown"):
        return _reject(room, msg, expected, Code.NOT_RUNNING, "the race has not started yet")
    if phase == "finished" or member.status != "playing" or member.game is None:
        return _reject(room, msg, expected, Code.FINISHED,
                       f"your race is over ({member.status})")
    start = record.start_ms
    clock = max(0, room.now_ms() - start) if start is not None else 0  # room.clock_ms()
    limit = room.settings.time_limit_s * 1000
    if limit and clock >= limit:
        room.spawn(run(room, core.Due("end")))
        return _reject(room, msg, expected, Code.FINISHED, "time is up")
    if msg.seq != expected:
        return _reject(room, msg, expected, Code.OUT_OF_ORDER,
                       f"this move would be number {expected}, not {msg.seq}")
    game = member.game
    after = game.copy()  # the cached game only advances once the store has the move
    try:
        diff = after.play(msg.move)  # the text: the diff keeps it (canonical notation only)
    except engine.BadNotation as exc:
        return _reject(room, msg, expected, Code.BAD_NOTATION, str(exc))
    except engine.IllegalMove as exc:
        return _reject(room, msg, expected, Code.ILLEGAL_MOVE, str(exc))
    progress = sum(after.found)  # ``Game.progress``, each once per move
    moved_on = progress != sum(game.found)
    status: SeatStatus = "won" if progress == 52 else "stuck" if after.stuck else "playing"
    # progress_ms: when the seat *first* reached its current progress (a card taken back
    # and played again does not make the seat later than it was).
    progress_ms = member.progress_ms
    if moved_on:
        progress_ms = member.reached.get(progress, clock)
    fields: dict[str, object] = {
        "progress": progress, "moves": msg.seq, "status": status, "progress_ms": progress_ms,
    }
    if status == "won":
        fields["finish_ms"] = clock
    # Bot-like play (protocol.ranking): the last deliberate moves' clocks, this one
    # included; the mark is stored with the move, so every node's live ranking has it.
    # The window is the last BOT_LIKE_MOVES - 1 clocks kept (at most BOT_LIKE_MOVES: a
    # bounded deque) and this one; its first clock is read in place, not copied out.
    deliberate = is_deliberate(diff.move)
    recent = member.recent_clocks
    kept = len(recent)
    flag = (deliberate and not member.bot_like and kept >= BOT_LIKE_MOVES - 1
            and clock - recent[kept - BOT_LIKE_MOVES + 1] < BOT_LIKE_SPAN_MS)
    if flag:
        fields["bot_like"] = True
    # The ack's and the event's contents are known before the store is asked: the
    # event is published by the same store step that stores the move (one round trip).
    state_hash = after.state_hash()
    revealed = list(diff.revealed)
    bot_marked = member.bot_like or flag
    ranked = moved_on or status != "playing" or flag
    event = room.encode_own(ev.Moved(
        member.seat, msg.seq, diff.move, state_hash, clock, revealed, progress, status,
        sum(after.down), progress_ms, clock if status == "won" else None, bot_marked,
        ranked))  # (sum(after.down): ``views.face_down`` without its call)
    return _Judged(after, diff.move, clock, status, progress, progress_ms, deliberate,
                   state_hash, revealed, bot_marked, fields, event)


def _stored(room: Room, member: Member, msg: Move, judged: _Judged) -> Accepted:
    """The store has the move: the seat's state advances, and the ack goes out."""
    clock, progress_ms = judged.clock, judged.progress_ms
    member.game, member.seq, member.status = judged.after, msg.seq, judged.status
    member.progress_ms = progress_ms
    if judged.deliberate:
        member.recent_clocks.append(clock)
    member.bot_like = judged.bot_marked
    if progress_ms is not None:
        member.reached.setdefault(judged.progress, progress_ms)
    # Ack first: stored (and published) — the player hears it before anything else runs
    # (the seat's state above first: the legal-moves opt-in reads it when sending).
    ack = Accepted(seq=msg.seq, hash=judged.state_hash, clock_ms=clock,
                   revealed=judged.revealed)
    member.conn.send(ack)
    room.server.metrics.moves_accepted.value += 1  # (a HotCounter: its inc() without the call)
    every = room.config.checkpoint_every
    if every > 0 and not msg.seq % every:  # (checkpoint's own test: no call per move)
        room.checkpoint(member.seat, msg.seq, clock)  # every checkpoint_every moves, after the ack
    # The live ranking follows from the event on every node (``standings``).
    return ack


def _not_stored(room: Room, member: Member, msg: Move,
                exc: StoreError) -> Rejected | Coroutine[Any, Any, Rejected]:
    """The reply to a move the store refused (``exc``): a ``Rejected``, or for a stale
    epoch a coroutine that reads the room first (``_stale``). Any other store error is
    re-raised (the connection answers ``internal``)."""
    expected = member.seq + 1
    if isinstance(exc, StoreUnavailable):
        return _reject(room, msg, expected, Code.STORE_UNAVAILABLE,
                       "storage is unreachable; retry", retryable=True)
    if isinstance(exc, SeqConflict):  # only one writer holds the epoch: a bug if it happens
        log.error("room %s seat %s: %s", room.code, member.seat, exc)
        return _reject(room, msg, expected, Code.OUT_OF_ORDER, str(exc), exp=exc.expected)
    if isinstance(exc, StaleEpoch):
        return _stale(room, member, msg)
    raise exc


async def _stale(room: Room, member: Member, msg: Move) -> Rejected:
    """The seat's epoch moved on: the race finished, or another connection resumed it."""
    expected = member.seq + 1
    record = await room.store.get_room(room.code)
    if record is None or record.phase == "finished":
        member.status = "finished"
        return _reject(room, msg, expected, Code.FINISHED, "the race is over")
    member.conn.close_with(Code.TAKEN_OVER, "another connection resumed this seat")
    return _reject(room, msg, expected, Code.TAKEN_OVER,
                   "another connection resumed this seat")


def _reject(room: Room, msg: Move, expected: int, code: Code, reason: str,
            retryable: bool = False, exp: int | None = None) -> Rejected:
    """The ``Rejected`` for move ``msg`` (counted by code); ``expected``: the seat's next
    sequence number, unless ``exp`` says otherwise. (Module-level: ``play`` makes no
    closure per move.)"""
    room.server.metrics.moves_rejected.labels(code.value).inc()
    return Rejected(seq=msg.seq, code=code, reason=reason,
                    expected=expected if exp is None else exp, retryable=retryable)


async def publish_ranking(room: Room) -> None:
    """Send everyone the live ranking (after a change of progress or status)."""
    seats = await room.store.get_seats(room.code)
    flagged = {s.seat for s in seats if s.bot_like}
    ranking = Ranking(ranking=rank(seats, room.settings.rank_by, flagged))
    await room.publish(ev.Broadcast(encode(ranking)))


async def resign(room: Room, member: Member) -> None:
    """Give up: the seat is ranked by its progress."""
    _need_player(member)
    try:
        await run(room, core.Resigned(member.seat, member.epoch))
    except ProtocolError as exc:
        if exc.code == Code.TAKEN_OVER:
            member.conn.close_with(Code.TAKEN_OVER, "another connection resumed this seat")
            return
        raise
    member.status = "resigned"


async def hint(room: Room, member: Member) -> Hint:
    """A suggested move: the solver's, searched on the player's *view*.

    The server's game knows the face-down cards; a search on it would leak them. The
    search runs on ``engine.game_from_view(view)`` instead, whose face-down slots hold the
    unseen cards in a fixed order that says nothing about the real ones: its legal moves
    are the real game's, and in the four variants without face-down cards it is the real
    game, so the hint is as good as the solver can find within ``hint_budget_s``."""
    _need_player(member)
    if not room.settings.hints:
        raise ProtocolError(Code.HINTS_OFF)
    if room.phase != "running" or member.game is None:
        raise ProtocolError(Code.NOT_RUNNING)
    from engine.solver import Budget
    from engine.solver import hint as solver_hint

    visible = engine.game_from_view(member.game.view())
    budget = Budget(max_nodes=20_000, max_seconds=room.config.hint_budget_s)
    async with room.server.solver_slot:
        move = await asyncio.to_thread(solver_hint, visible, budget)
    return Hint(move=str(move) if move is not None else None)


# ---------------------------------------------------------------------------- finish
async def finish(room: Room) -> None:
    """Make sure the finished room has results, and announce them. Idempotent: the
    first node to store results wins, every node publishes what is stored. Seats still
    playing are marked ``timeout`` (time limit) or ``resigned`` (everyone else done).
    The results never wait for the solver: a deal's verdict not known from the start
    follows in a ``Verdict`` message (``verdicts``)."""
    store, code = room.store, room.code
    record = await store.get_room(code)
    if record is None or record.phase != "finished":
        return
    frame = await store.get_results(code)
    if frame is None:
        frame = await store.put_results(code, encode(await _build_results(room, record)))
        room.server.metrics.races_finished.labels(record.end_reason or "all_done").inc()
    await room.publish(ev.Finished(frame))
    # The outbox retries a publish the store refused; only once the results are out is
    # the results deadline done (else another node announces them when it falls due).
    await room.flush()
    await store.clear_deadline(code, "results")
    await store.expire_room(code, room.config.results_ttl_s)


async def _build_results(room: Room, record: RoomRecord) -> Results:
    """The results from the seat records and the logs, after fencing every seat.

    The results carry every seat's whole log (``SeatLog``), so the logs are read: all of
    them in one store round trip (``Store.read_logs``), decoded and checked for bot-like
    play ``results_slice`` entries at a time with the event loop free between slices. The
    other store round trips depend on the number of seats, never on the logs' length."""
    store, code, settings = room.store, room.code, room.settings
    step = room.config.results_slice
    for seat in await store.get_seats(code):
        await store.take_seat(code, seat.seat)  # no append can succeed after this
    seats = await store.get_seats(code)
    reason = record.end_reason or "all_done"
    for seat in seats:
        if seat.status not in core.DONE:
            seat.status = "timeout" if reason == "time" else "resigned"
            await store.update_seat(code, seat.seat, status=seat.status)
        if seat.ready:  # after the results, ready means "I want a rematch": nobody yet
            await store.update_seat(code, seat.seat, ready=False)
    columns = await store.read_logs(code, [s.seat for s in seats], step)
    logs = [SeatLog(seat=s.seat, moves=columns[s.seat].moves, clocks=columns[s.seat].clocks)
            for s in seats]
    # From the whole logs, as ``solrace verify`` computes it (the live mark may have
    # missed a window that straddled a resume).
    flagged = {log.seat for log in logs if await bot_like_sliced(log.moves, log.clocks, step)}
    return Results(
        code=code, variant=settings.variant, options=dict(settings.options),
        rank_by=settings.rank_by, seed=record.seed, salt=record.salt,
        commitment=record.commitment, ranking=rank(seats, settings.rank_by, flagged), logs=logs,
        reason=reason, winnable=record.winnable, par=record.par, round=record.round,
    )


async def bot_like_sliced(moves: Sequence[str], clocks: Sequence[int], step: int) -> bool:
    """``protocol.ranking.bot_like(moves, clocks)``, computed ``step`` entries at a time
    with the event loop free between slices (a whole log at the results: 160,000 moves
    are ~15 ms of Python in one go)."""
    step = max(step, 1)
    picked: list[int] = []
    for start in range(0, min(len(moves), len(clocks)), step):
        if start:
            await asyncio.sleep(0)
        picked.extend([clock for move, clock in zip(moves[start : start + step],
                                                    clocks[start : start + step], strict=False)
                       if is_deliberate(move)])
    n = BOT_LIKE_MOVES
    windows = len(picked) - n + 1  # window i: deliberate moves i .. i + n - 1
    for start in range(0, max(windows, 0), step):
        await asyncio.sleep(0)
        stop = min(start + step, windows)
        if min(map(operator.sub, picked[start + n - 1 : stop + n - 1],
                   picked[start:stop])) < BOT_LIKE_SPAN_MS:
            return True
    return False


def _need_player(member: Member) -> None:
    if not member.is_player:
        raise ProtocolError(Code.NOT_A_PLAYER)
