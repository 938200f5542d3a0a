"""The race: readiness, start, moves, resignation and the finish, on top of the store.

Any node may attempt a phase change; ``Store.set_phase`` is a compare-and-set, so exactly
one attempt wins and only the winner publishes the change (and, at the finish, computes
and stores the results). Moves are fenced by the seat's epoch: the finish bumps every
seat's epoch before reading the logs, so no move can be acknowledged after the results
were computed without being in them.
"""

from __future__ import annotations

import asyncio
import logging

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
from protocol.ranking import rank

from . import events as ev
from . import views
from .core.standing import opening
from .room import Member, Room
from .store import LogEntry, SeqConflict, StaleEpoch, StoreUnavailable

log = logging.getLogger(__name__)

_DONE = frozenset({"won", "stuck", "resigned", "timeout"})


# ---------------------------------------------------------------------------- lobby → start
async def set_ready(room: Room, member: Member, ready: bool) -> None:
    """Mark the seat (not) ready; when every connected player is ready, start."""
    _need_player(member)
    if room.phase != "lobby":
        raise ProtocolError(Code.ROOM_CLOSED, "the race has already started")
    await room.store.update_seat(room.code, member.seat, ready=ready)
    await room.publish_seats()
    if ready:
        seats = await room.store.get_seats(room.code)
        present = [s for s in seats if s.connected]
        if present and all(s.ready for s in present):
            await begin_countdown(room)


async def start_now(room: Room, member: Member) -> None:
    """The creator starts the countdown without waiting for readiness."""
    if member.seat == 0 or member.seat != room.record.creator:
        raise ProtocolError(Code.NOT_CREATOR)
    if room.phase != "lobby":
        raise ProtocolError(Code.ROOM_CLOSED, "the race has already started")
    await begin_countdown(room)


async def begin_countdown(room: Room) -> None:
    """lobby → countdown (CAS); the winner tells every node when the race starts."""
    settings, config = room.settings, room.config
    start_ms = room.now_ms() + settings.countdown_s * 1000
    if await room.store.set_phase(room.code, "lobby", "countdown", start_ms=start_ms):
        # The room must outlive the race: countdown + limit (or a day) + results.
        ttl = settings.countdown_s + (settings.time_limit_s or 24 * 3600) + config.results_ttl_s
        await room.store.expire_room(room.code, ttl)
        await room.publish(ev.Countdown(start_ms))


async def try_start(room: Room) -> None:
    """countdown → running at ``start_ms`` (CAS). The winner sets every seat playing
    before anyone is told, so no move can race the status change."""
    store, code = room.store, room.code
    if not await store.set_phase(code, "countdown", "running"):
        await room.refresh()
        return
    seats = await store.get_seats(code)
    # Every seat starts with the deal's own standing: its foundation cards count as
    # progress, and a deal with no legal move leaves every seat stuck at once.
    start = opening(views.new_board(room.record, room.settings))
    for seat in seats:
        await store.update_seat(code, seat.seat, status=start.status, progress=start.progress)
    start_ms = room.record.start_ms if room.record.start_ms is not None else room.now_ms()
    await room.publish(ev.Started(start_ms, [s.seat for s in seats]))
    if start.status != "playing":
        await publish_ranking(room)
        await maybe_finish(room)
        return
    grace_ms = int(room.config.abandon_after_s * 1000)
    for seat in seats:
        # Left in the lobby: an untimed race gives them the grace period to return.
        if not seat.connected and not room.settings.time_limit_s:
            room.arm(f"abandon:{seat.seat}", room.now_ms() + grace_ms,
                     lambda s=seat.seat, e=seat.epoch: abandon(room, s, e))


# ---------------------------------------------------------------------------- moves
async def play(room: Room, member: Member, msg: Move) -> Accepted | Rejected:
    """Judge and store one move; the reply for the player. The seat is the connection's
    own (bound at join/resume): a client cannot name another seat. Publishes the move to
    the room only after it is stored."""
    metrics = room.server.metrics
    expected = member.seq + 1

    def reject(code: Code, reason: str, retryable: bool = False, exp: int = expected) -> Rejected:
        metrics.moves_rejected.labels(code.value).inc()
        return Rejected(seq=msg.seq, code=code, reason=reason, expected=exp, retryable=retryable)

    if not member.is_player:
        return reject(Code.NOT_A_PLAYER, "spectators cannot move")
    phase = room.phase
    if phase in ("lobby", "countdown"):
        return reject(Code.NOT_RUNNING, "the race has not started yet")
    if phase == "finished" or member.status != "playing" or member.game is None:
        return reject(Code.FINISHED, f"your race is over ({member.status})")
    clock = room.clock_ms()
    limit = room.settings.time_limit_s * 1000
    if limit and clock >= limit:
        room.spawn(try_finish(room, "time"))
        return reject(Code.FINISHED, "time is up")
    if msg.seq != expected:
        return reject(Code.OUT_OF_ORDER, f"this move would be number {expected}, not {msg.seq}")
    try:
        mv = engine.parse_move(msg.move)
    except engine.BadNotation as exc:
        return reject(Code.BAD_NOTATION, str(exc))
    game = member.game
    after = game.copy()  # the cached game only advances once the store has the move
    try:
        diff = after.play(mv)
    except engine.IllegalMove as exc:
        return reject(Code.ILLEGAL_MOVE, str(exc))
    status: SeatStatus = "won" if after.won else "stuck" if after.stuck else "playing"
    # progress_ms: when the seat *first* reached its current progress (a card taken back
    # and played again does not make the seat later than it was).
    progress_ms = member.progress_ms
    if after.progress != game.progress:
        progress_ms = member.reached.get(after.progress, clock)
    fields: dict[str, object] = {
        "progress": after.progress, "moves": msg.seq, "status": status,
        "progress_ms": progress_ms,
    }
    if status == "won":
        fields["finish_ms"] = clock
    try:
        await room.store.append_move(
            room.code, member.seat, member.epoch, msg.seq, LogEntry(diff.move, clock), **fields
        )
    except StoreUnavailable:
        return reject(Code.STORE_UNAVAILABLE, "storage is unreachable; retry", retryable=True)
    except SeqConflict as exc:  # only one writer holds the epoch: a bug if it happens
        log.error("room %s seat %s: %s", room.code, member.seat, exc)
        return reject(Code.OUT_OF_ORDER, str(exc), exp=exc.expected)
    except StaleEpoch:
        record = await room.store.get_room(room.code)
        if record is None or record.phase == "finished":
            member.status = "finished"
            return reject(Code.FINISHED, "the race is over")
        member.conn.close_with(Code.TAKEN_OVER, "another connection resumed this seat")
        return reject(Code.TAKEN_OVER, "another connection resumed this seat")
    member.game, member.seq, member.status, member.progress_ms = after, msg.seq, status, progress_ms
    if progress_ms is not None:
        member.reached.setdefault(after.progress, progress_ms)
    state_hash = after.state_hash()
    revealed = [(p, c) for p, c in diff.revealed]
    ack = Accepted(seq=msg.seq, hash=state_hash, clock_ms=clock, revealed=revealed)
    metrics.moves_accepted.inc()
    member.conn.send(ack)
    try:
        await room.publish(ev.Moved(member.seat, msg.seq, diff.move, state_hash, clock,
                                    revealed, after.progress, status))
        if after.progress != game.progress or status != "playing":
            await publish_ranking(room)
    except StoreUnavailable:  # stored and acknowledged; rivals catch up on the next event
        log.warning("room %s: move %s of seat %s not published", room.code, msg.seq, member.seat)
    if status != "playing":
        await maybe_finish(room)
    return ack


async def publish_ranking(room: Room) -> None:
    """Send everyone the live ranking (after a change of progress or status)."""
    seats = await room.store.get_seats(room.code)
    ranking = Ranking(ranking=rank(seats, room.settings.rank_by))
    await room.publish(ev.Broadcast(encode(ranking)))


async def resign(room: Room, member: Member) -> None:
    """Give up: the seat is ranked by its progress."""
    _need_player(member)
    if room.phase in ("lobby", "countdown"):
        raise ProtocolError(Code.NOT_RUNNING)
    if room.phase == "finished" or member.status != "playing":
        raise ProtocolError(Code.FINISHED, f"your race is over ({member.status})")
    seat = await room.store.get_seat(room.code, member.seat)
    if seat is None or seat.epoch != member.epoch:
        member.conn.close_with(Code.TAKEN_OVER, "another connection resumed this seat")
        return
    await room.store.update_seat(room.code, member.seat, status="resigned")
    member.status = "resigned"
    game = member.game
    await room.publish(ev.SeatStatus(member.seat, "resigned", game.progress if game else 0,
                                     member.seq, room.clock_ms()))
    await publish_ranking(room)
    await maybe_finish(room)


async def abandon(room: Room, seat_no: int, epoch: int) -> None:
    """A seat offline for the whole grace period counts as resigned."""
    seat = await room.store.get_seat(room.code, seat_no)
    if (seat is None or seat.connected or seat.epoch != epoch or room.phase != "running"
            or seat.status not in ("playing", "lobby")):
        return
    await room.store.update_seat(room.code, seat_no, status="resigned")
    await room.publish(ev.SeatStatus(seat_no, "resigned", seat.progress, seat.moves,
                                     room.clock_ms()))
    await publish_ranking(room)
    await maybe_finish(room)


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
async def maybe_finish(room: Room) -> None:
    """Finish the race if no player is still playing."""
    seats = await room.store.get_seats(room.code)
    if seats and all(s.status in _DONE for s in seats):
        await try_finish(room, "all_done")


async def try_finish(room: Room, reason: str) -> None:
    """running → finished (CAS). The winner fences every seat (epoch + 1), marks the
    seats still playing (``timeout`` on time, else ``resigned``), computes the ranking
    from the seat records, stores and publishes the results. ``reason``: ``all_done``
    or ``time``."""
    store, code = room.store, room.code
    if not await store.set_phase(code, "running", "finished", end_ms=room.now_ms(),
                                 end_reason=reason):
        return
    for seat in await store.get_seats(code):
        await store.take_seat(code, seat.seat)  # no append can succeed after this
    seats = await store.get_seats(code)
    for seat in seats:
        if seat.status not in _DONE:
            seat.status = "timeout" if reason == "time" else "resigned"
            await store.update_seat(code, seat.seat, status=seat.status)
    logs = []
    for s in seats:
        entries = await store.read_log(code, s.seat)
        logs.append(SeatLog(seat=s.seat, moves=[e.move for e in entries],
                            clocks=[e.clock_ms for e in entries]))
    record = room.record
    winnable, par = record.winnable, record.par
    if winnable is None:
        winnable, par = await _judge_deal(room)
    results = Results(
        code=code,
        variant=room.settings.variant,
        options=dict(room.settings.options),
        rank_by=room.settings.rank_by,
        seed=record.seed,
        salt=record.salt,
        commitment=record.commitment,
        ranking=rank(seats, room.settings.rank_by),
        logs=logs,
        reason=reason,
        winnable=winnable,
        par=par,
    )
    frame = encode(results)
    await store.put_results(code, frame)
    await room.publish(ev.Finished(frame))
    await store.expire_room(code, room.config.results_ttl_s)
    room.server.metrics.races_finished.labels(reason).inc()


async def _judge_deal(room: Room) -> tuple[bool | None, int | None]:
    """Was the race's deal winnable, and its par (the length of the solver's solution)?
    For deals not chosen by the solver, asked at the finish: in a thread, one search at a
    time per node, within ``results_solver_s`` (None, None when undecided by then)."""
    try:
        from engine.solver import solve
    except ImportError:  # pragma: no cover - the solver ships with the engine
        return None, None
    settings = room.settings
    fresh = engine.new_game(settings.variant, seed=room.record.seed, **settings.options)
    async with room.server.solver_slot:
        result = await asyncio.to_thread(
            solve, fresh, max_nodes=50_000, max_seconds=room.config.results_solver_s
        )
    if result.winnable:
        return True, len(result.moves)
    return result.winnable, None


def _need_player(member: Member) -> None:
    if not member.is_player:
        raise ProtocolError(Code.NOT_A_PLAYER)
