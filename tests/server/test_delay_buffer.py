"""server.delay_buffer: due order, the bound, and what is lost at it (times by hand)."""

from __future__ import annotations

from protocol.messages import Diff
from server.delay_buffer import DelayBuffer


def _diff(seat: int, seq: int) -> Diff:
    return Diff(seat=seat, seq=seq, move="0>f", hash=seq, clock_ms=seq)


def test_diffs_come_out_in_due_order_once_due() -> None:
    buffer = DelayBuffer(10)
    buffer.add(_diff(1, 2), 300)
    buffer.add(_diff(2, 1), 100)
    buffer.add(_diff(1, 1), 200)
    assert buffer.next_due() == 100
    assert buffer.pop_due(99) == ([], [])
    due, lost = buffer.pop_due(250)
    assert [(d.seat, d.seq) for d in due] == [(2, 1), (1, 1)] and lost == []
    assert len(buffer) == 1 and buffer.next_due() == 300


def test_the_same_move_twice_is_kept_twice_without_comparing_diffs() -> None:
    buffer = DelayBuffer(10)
    buffer.add(_diff(1, 1), 100)
    buffer.add(_diff(1, 1), 100)
    due, _ = buffer.pop_due(100)
    assert len(due) == 2


def test_at_the_bound_a_diff_is_noted_lost_up_to_its_seq() -> None:
    buffer = DelayBuffer(2)
    buffer.add(_diff(1, 1), 100)
    buffer.add(_diff(1, 2), 110)
    buffer.add(_diff(1, 3), 120)  # not kept
    buffer.add(_diff(1, 4), 130)  # not kept: the seat is lost up to 4, due at 130
    assert len(buffer) == 2
    assert buffer.pop_due(125) == ([_diff(1, 1), _diff(1, 2)], [])
    assert buffer.next_due() == 130
    assert buffer.pop_due(130) == ([], [(1, 4)])
    assert buffer.next_due() is None


def test_clear_forgets_kept_and_lost() -> None:
    buffer = DelayBuffer(1)
    buffer.add(_diff(1, 1), 100)
    buffer.add(_diff(1, 2), 100)
    buffer.clear()
    assert len(buffer) == 0 and buffer.next_due() is None
