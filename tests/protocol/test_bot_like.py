"""The bot-like rule (protocol.ranking.bot_like): 20 deliberate moves within < 2,000 ms."""

from __future__ import annotations

from protocol.messages import RankEntry
from protocol.ranking import bot_like, rank


def test_twenty_moves_in_under_two_seconds_are_bot_like() -> None:
    # 20 moves 100 ms apart: the 20th is at 1,900 ms after the 1st (< 2,000).
    clocks = [1_000 + 100 * i for i in range(20)]
    assert bot_like(["1>2"] * 20, clocks)
    # 105 ms apart: 19 gaps make 1,995 ms, still under; 106 ms: 2,014 ms, not.
    assert bot_like(["1>2"] * 20, [105 * i for i in range(20)])
    assert not bot_like(["1>2"] * 20, [106 * i for i in range(20)])
    # Exactly 2,000 ms is human (the rule says "less than").
    assert not bot_like(["1>2"] * 20, [0, *[1_000 + i for i in range(18)], 2_000])


def test_nineteen_fast_moves_or_foundation_moves_do_not_count() -> None:
    assert not bot_like(["1>2"] * 19, list(range(19)))
    # 30 moves within 30 ms, but 11 of them to the foundations (auto-moves): 19 left.
    moves = ["3>f"] * 11 + ["1>2"] * 19
    assert not bot_like(moves, list(range(30)))
    # A slow start, then a burst of 20 deliberate moves in 190 ms, somewhere in the log.
    slow = [i * 5_000 for i in range(10)]
    burst = [60_000 + 10 * i for i in range(20)]
    assert bot_like(["1>2"] * 30, slow + burst)
    assert not bot_like([], [])


def test_the_ranking_marks_only_seats_not_declared_bots() -> None:
    class S:
        def __init__(self, seat: int, bot: bool) -> None:
            self.seat, self.name, self.bot, self.status = seat, f"s{seat}", bot, "playing"
            self.progress, self.moves, self.finish_ms, self.progress_ms = 0, 0, None, None

    entries: list[RankEntry] = rank([S(1, False), S(2, True), S(3, False)], "time", {1, 2})
    assert [(e.seat, e.bot_like) for e in entries] == [(1, True), (2, False), (3, False)]
