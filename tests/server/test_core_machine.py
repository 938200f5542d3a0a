"""The race core (server/core/machine.py) on its own: every transition, driven by a fake
clock (plain integers), including leave and resign in every phase. Expected effects are
written out by hand from the rules in the module docstring and PROTOCOL.md."""

from __future__ import annotations

from dataclasses import replace

import pytest

from protocol import Code
from server.core import machine as core
from server.core.machine import (
    Announce,
    Arm,
    Check,
    Disarm,
    Due,
    Expire,
    Finish,
    Joined,
    Left,
    MoveStored,
    NewRound,
    ReadySet,
    Recheck,
    Refuse,
    Resigned,
    Resumed,
    RoomState,
    SeatState,
    SetSeat,
    StartAsked,
    Transition,
)

T0 = 1_000_000  # the fake clock's "now" at the start of each test (Unix ms)
GRACE = 300_000


def room(phase: str = "lobby", *seats: SeatState, **kw: object) -> RoomState:
    """A room with two connected seats (1 is the creator) unless told otherwise."""
    defaults: dict[str, object] = dict(
        creator=1, created_ms=T0 - 5_000, countdown_s=3, time_limit_s=0, lobby_ttl_s=60,
        abandon_after_ms=GRACE,
        seats=seats or (SeatState(1), SeatState(2)),
    )
    defaults.update(kw)
    return RoomState(phase=phase, **defaults)  # type: ignore[arg-type]


def playing(*numbers: int) -> tuple[SeatState, ...]:
    return tuple(SeatState(n, status="playing") for n in numbers)


# ------------------------------------------------------------------------------ lobby
def test_ready_writes_the_seat_and_rechecks_from_a_fresh_read() -> None:
    assert core.step(room(), ReadySet(2, True), T0) == [
        SetSeat(2, {"ready": True}), Announce("seats"), Recheck()]


def test_check_in_the_lobby_starts_the_countdown_when_every_present_seat_is_ready() -> None:
    ready = room("lobby", SeatState(1, ready=True), SeatState(2, ready=True),
                 SeatState(3, connected=False), time_limit_s=60)
    start = T0 + 3_000
    assert core.step(ready, Check(), T0) == [
        Arm("start", start),  # before the compare-and-set: a dying winner leaves them
        Arm("end", start + 60_000),
        Transition("lobby", "countdown", {"start_ms": start}),
        Announce("countdown", start_ms=start),
        Disarm("lobby"),
    ]
    # a start that fires before the compare-and-set is stored looks again later
    assert core.step(room(), Due("start"), T0) == [Arm("start", T0 + core.START_RETRY_MS)]
    # one present seat not ready: nothing happens
    assert core.step(room("lobby", SeatState(1, ready=True), SeatState(2)), Check(), T0) == []
    # nobody present: nothing either (an empty room does not start itself)
    assert core.step(room("lobby", SeatState(1, connected=False)), Check(), T0) == []


def test_start_now_is_the_creators_alone() -> None:
    untimed = T0 + 3_000
    assert core.step(room(), StartAsked(1), T0) == [
        Arm("start", untimed), Transition("lobby", "countdown", {"start_ms": untimed}),
        Announce("countdown", start_ms=untimed), Disarm("lobby")]
    assert core.step(room(), StartAsked(2), T0) == [Refuse(Code.NOT_CREATOR)]
    assert core.step(room(), StartAsked(0), T0) == [Refuse(Code.NOT_CREATOR)]
    # the connection that created the room without a seat (seat 0, like any spectator)
    watching = core.step(replace(room(), creator=0), StartAsked(0, watching_creator=True), T0)
    assert core.transitions(watching) == [Transition("lobby", "countdown", {"start_ms": untimed})]
    assert core.step(replace(room(), creator=0), StartAsked(0), T0) == [
        Refuse(Code.NOT_CREATOR)]
    assert core.step(room("running"), StartAsked(1), T0) == [
        Refuse(Code.ROOM_CLOSED, "the race has already started")]


def test_join_announces_the_seats() -> None:
    assert core.step(room(), Joined(2), T0) == [Announce("seats")]


def test_lobby_expires_only_in_the_lobby() -> None:
    assert core.step(room(), Due("lobby"), T0) == [Expire()]
    assert core.step(room("running"), Due("lobby"), T0) == []
    assert core.deadlines(room()) == [Arm("lobby", T0 - 5_000 + 60_000)]


def test_leave_in_the_lobby_unreadies_the_seat_and_rechecks() -> None:
    assert core.step(room(), Left(2, epoch=1), T0) == [
        SetSeat(2, {"connected": False, "ready": False}), Announce("seats"), Recheck()]
    # a stale holder (the seat was resumed elsewhere) changes nothing
    assert core.step(room(), Left(2, epoch=0), T0) == []


def test_resign_before_the_start_is_refused() -> None:
    for phase in ("lobby", "countdown"):
        assert core.step(room(phase), Resigned(1, epoch=1), T0) == [Refuse(Code.NOT_RUNNING)]


def test_ready_after_the_lobby_is_refused() -> None:
    assert core.step(room("countdown"), ReadySet(1, True), T0) == [
        Refuse(Code.ROOM_CLOSED, "the race has already started")]


# ------------------------------------------------------------------------------ countdown
def test_start_due_begins_the_race_with_the_deals_standing() -> None:
    counting = room("countdown", SeatState(1), SeatState(2, connected=False),
                    start_ms=T0, opening_progress=4)
    assert core.step(counting, Due("start"), T0) == [
        Transition("countdown", "running"),
        SetSeat(1, {"status": "playing", "progress": 4}),
        SetSeat(2, {"status": "playing", "progress": 4}),
        Announce("started"),
        Arm("abandon:2", T0 + GRACE),  # untimed: the seat left in the lobby has a grace
    ]


def test_start_due_again_completes_a_start_whose_node_died() -> None:
    """Phase running but the seats still say lobby: the starter died after the
    compare-and-set; the start deadline (not marked done) finishes the job."""
    half = room("running", SeatState(1, status="lobby"), SeatState(2, status="lobby"),
                start_ms=T0, time_limit_s=60, opening_progress=4)
    assert core.step(half, Due("start"), T0 + 1_500) == [
        SetSeat(1, {"status": "playing", "progress": 4}),
        SetSeat(2, {"status": "playing", "progress": 4}),
        Announce("started"),
    ]


def test_start_due_early_rearms_and_twice_does_nothing() -> None:
    counting = room("countdown", start_ms=T0 + 10)
    assert core.step(counting, Due("start"), T0) == [Arm("start", T0 + 10)]
    assert core.step(room("running", *playing(1, 2), start_ms=T0), Due("start"), T0 + 10) == []


def test_a_deal_without_a_move_finishes_at_the_start() -> None:
    stuck = room("countdown", start_ms=T0, opening_status="stuck")
    assert core.step(stuck, Due("start"), T0) == [
        Transition("countdown", "running"),
        SetSeat(1, {"status": "stuck", "progress": 0}),
        SetSeat(2, {"status": "stuck", "progress": 0}),
        Announce("started"),
        Announce("ranking"),
        Arm("results", T0 + core.RESULTS_GRACE_MS),
        Transition("running", "finished", {"end_ms": T0, "end_reason": "all_done"}),
        Disarm("end"),
        Finish("all_done"),
    ]


def test_leave_during_the_countdown_marks_the_seat_offline() -> None:
    assert core.step(room("countdown", start_ms=T0), Left(1, epoch=1), T0) == [
        SetSeat(1, {"connected": False}), Announce("seats")]


def test_end_due_during_the_countdown_starts_then_ends() -> None:
    """A store outage across the whole countdown and limit: the start was never fired."""
    late = room("countdown", start_ms=T0, time_limit_s=10)
    effects = core.step(late, Due("end"), T0 + 10_000)
    assert core.transitions(effects) == [
        Transition("countdown", "running"),
        Transition("running", "finished", {"end_ms": T0 + 10_000, "end_reason": "time"}),
    ]
    assert effects[-1] == Finish("time")


# ------------------------------------------------------------------------------ running
def test_a_move_that_ends_the_last_seat_finishes() -> None:
    done = room("running", SeatState(1, status="won"), SeatState(2, status="stuck"),
                start_ms=T0)
    assert core.step(done, MoveStored(2, "stuck"), T0 + 5) == [
        Arm("results", T0 + 5 + core.RESULTS_GRACE_MS),
        Transition("running", "finished", {"end_ms": T0 + 5, "end_reason": "all_done"}),
        Disarm("end"),
        Finish("all_done"),
    ]
    # someone still playing: no finish; a plain move needs nothing from the core
    racing = room("running", SeatState(1, status="won"), *playing(2), start_ms=T0)
    assert core.step(racing, MoveStored(1, "won"), T0) == []
    assert core.step(racing, MoveStored(2, "playing"), T0) == []


def test_resign_while_running() -> None:
    racing = room("running", *playing(1, 2), start_ms=T0)
    assert core.step(racing, Resigned(2, epoch=1), T0) == [
        SetSeat(2, {"status": "resigned"}), Announce("seat", seat=2),
        Announce("ranking"), Recheck(), Disarm("abandon:2")]
    assert core.step(racing, Resigned(2, epoch=7), T0) == [
        Refuse(Code.TAKEN_OVER, "another connection resumed this seat")]
    over = room("running", SeatState(1, status="won"), *playing(2), start_ms=T0)
    assert core.step(over, Resigned(1, epoch=1), T0) == [
        Recheck(), Refuse(Code.FINISHED, "your race is over (won)")]


def test_check_while_running_finishes_when_nobody_plays() -> None:
    done = room("running", SeatState(1, status="resigned"), SeatState(2, status="timeout"),
                start_ms=T0)
    assert core.transitions(core.step(done, Check(), T0)) == [
        Transition("running", "finished", {"end_ms": T0, "end_reason": "all_done"})]
    assert core.step(room("running", *playing(1), start_ms=T0), Check(), T0) == []


def test_leave_while_running_arms_the_abandon_deadline_when_untimed() -> None:
    racing = room("running", *playing(1, 2), start_ms=T0)
    assert core.step(racing, Left(2, epoch=1), T0 + 7) == [
        SetSeat(2, {"connected": False}), Announce("seats"), Arm("abandon:2", T0 + 7 + GRACE)]
    timed = replace(racing, time_limit_s=60)
    assert core.step(timed, Left(2, epoch=1), T0) == [
        SetSeat(2, {"connected": False}), Announce("seats")]


def test_resume_disarms_the_abandon_deadline() -> None:
    racing = room("running", *playing(1, 2), start_ms=T0)
    assert core.step(racing, Resumed(2), T0) == [
        SetSeat(2, {"connected": True}), Disarm("abandon:2"), Announce("seats")]
    assert core.step(room("finished"), Resumed(2), T0) == []


def test_abandon_due_resigns_an_offline_seat_only() -> None:
    gone = room("running", SeatState(1, status="playing"),
                SeatState(2, status="playing", connected=False), start_ms=T0)
    assert core.step(gone, Due("abandon:2"), T0) == [
        SetSeat(2, {"status": "resigned"}), Announce("seat", seat=2),
        Announce("ranking"), Recheck(), Disarm("abandon:2")]
    # fired again after its node died mid-way: the seat gave up; the finish may be owed
    done = room("running", SeatState(1, status="won"),
                SeatState(2, status="resigned", connected=False), start_ms=T0)
    assert core.step(done, Due("abandon:2"), T0)[-1] == Finish("all_done")
    assert core.step(gone, Due("abandon:1"), T0) == []  # seat 1 came back
    assert core.step(replace(gone, phase="finished"), Due("abandon:2"), T0) == []


def test_every_player_left_an_untimed_race_ends_after_the_grace() -> None:
    """Left → abandon deadline for each seat; each fires → resigned; the last Check
    finishes. The clock only moves by the grace period."""
    state = room("running", *playing(1, 2), start_ms=T0)
    armed = [e for n in (1, 2) for e in core.step(state, Left(n, epoch=1), T0)
             if isinstance(e, Arm)]
    assert armed == [Arm("abandon:1", T0 + GRACE), Arm("abandon:2", T0 + GRACE)]
    offline = room("running", SeatState(1, status="playing", connected=False),
                   SeatState(2, status="playing", connected=False), start_ms=T0)
    assert Recheck() in core.step(offline, Due("abandon:1"), T0 + GRACE)
    after = room("running", SeatState(1, status="resigned", connected=False),
                 SeatState(2, status="resigned", connected=False), start_ms=T0)
    assert core.step(after, Check(), T0 + GRACE)[-1] == Finish("all_done")


def test_time_limit_due() -> None:
    timed = room("running", *playing(1, 2), start_ms=T0, time_limit_s=60)
    assert core.step(timed, Due("end"), T0 + 59_999) == [Arm("end", T0 + 60_000)]
    assert core.step(timed, Due("end"), T0 + 60_000) == [
        Arm("results", T0 + 60_000 + core.RESULTS_GRACE_MS),
        Transition("running", "finished", {"end_ms": T0 + 60_000, "end_reason": "time"}),
        Disarm("end"),
        Finish("time"),
    ]
    assert core.deadlines(timed) == [Arm("end", T0 + 60_000)]


# ------------------------------------------------------------------------------ finished
def test_results_due_rebuilds_missing_results_and_is_idempotent() -> None:
    assert core.step(room("finished"), Due("results"), T0) == [Finish("")]
    # stored but maybe never announced (the deadline is cleared after the publish)
    assert core.step(room("finished", has_results=True), Due("results"), T0) == [Finish("")]
    assert core.deadlines(room("finished")) == [Arm("results", 0)]
    assert core.deadlines(room("finished", has_results=True)) == []


def test_results_due_on_a_race_still_running_finishes_it() -> None:
    """The results deadline is armed before the finish's compare-and-set: a node that
    died in between leaves a running race with a results deadline."""
    stale = room("running", *playing(1, 2), start_ms=T0, time_limit_s=60)
    effects = core.step(stale, Due("results"), T0 + 61_000)
    assert effects[-1] == Finish("time")


@pytest.mark.parametrize("has_results", [False, True])
def test_leave_resign_and_deadlines_after_the_finish_change_nothing(has_results: bool) -> None:
    over = room("finished", SeatState(1, status="won"), SeatState(2, status="timeout"),
                has_results=has_results)
    left = core.step(over, Left(1, epoch=1), T0)
    # after the results a leaver no longer counts for a rematch (its seat goes offline)
    assert left == ([SetSeat(1, {"connected": False, "ready": False}), Announce("seats"),
                     Recheck()] if has_results else [])
    assert core.step(over, Resigned(2, epoch=1), T0) == [
        Refuse(Code.FINISHED, "your race is over (timeout)")]
    for kind in ("start", "end", "abandon:1", "lobby"):
        assert core.step(over, Due(kind), T0) == []
    if not has_results:
        assert core.step(over, Due("results"), T0) == [Finish("")]
    assert core.step(over, Check(), T0) == []
    if not has_results:  # with results, start is the creator's rematch (below)
        assert core.step(over, StartAsked(1), T0) == [
            Refuse(Code.ROOM_CLOSED, "the race has already started")]
        assert core.step(over, ReadySet(1, True), T0) == [
            Refuse(Code.ROOM_CLOSED, "the race has already started")]


# ------------------------------------------------------------------------------ rematch
def test_rematch_when_every_connected_seat_asked() -> None:
    over = room("finished", SeatState(1, status="won"), SeatState(2, status="timeout"),
                SeatState(3, status="resigned", connected=False), has_results=True)
    assert core.step(over, ReadySet(2, True), T0) == [
        SetSeat(2, {"ready": True}), Announce("seats"), Recheck()]
    one_asked = replace(over, seats=(SeatState(1, status="won"),
                                     SeatState(2, status="timeout", ready=True),
                                     SeatState(3, status="resigned", connected=False)))
    assert core.step(one_asked, Check(), T0) == []  # seat 1 has not asked yet
    both = replace(one_asked, seats=(SeatState(1, status="won", ready=True),
                                     *one_asked.seats[1:]))
    # seat 3 left: it does not hold the rematch up, and is not in the next round
    assert core.step(both, Check(), T0) == [NewRound((1, 2))]
    # seat 1 leaves instead: seat 2 alone asked, and is alone connected
    gone = replace(one_asked, seats=(SeatState(1, status="won", connected=False),
                                     *one_asked.seats[1:]))
    assert core.step(gone, Check(), T0) == [NewRound((2,))]


def test_the_creator_forces_the_rematch_with_those_who_asked() -> None:
    over = room("finished", SeatState(1, status="won"), SeatState(2, status="timeout"),
                SeatState(3, status="won", ready=True), has_results=True)
    assert core.step(over, StartAsked(1), T0) == [NewRound((1, 3))]
    assert core.step(over, StartAsked(2), T0) == [Refuse(Code.NOT_CREATOR)]
    watching = replace(over, creator=0)
    assert core.step(watching, StartAsked(0, watching_creator=True), T0) == [NewRound((3,))]


def test_unknown_deadline_kinds_are_ignored() -> None:
    assert core.step(room("running"), Due("rematch"), T0) == []
