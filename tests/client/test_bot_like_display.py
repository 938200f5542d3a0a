"""The TUI's results table marks a bot-like seat (PROTOCOL.md, "Bot-like play")."""

from __future__ import annotations

from client_cli.tui.render import ranking_lines
from protocol.messages import RankEntry


def test_the_ranking_table_says_bot_like_for_that_seat_only() -> None:
    entries = [
        RankEntry(rank=1, seat=1, name="fast", status="resigned", progress=9, moves=40,
                  bot_like=True),
        RankEntry(rank=2, seat=2, name="slow", status="resigned", progress=3, moves=5),
        RankEntry(rank=3, seat=3, name="robot", bot=True, status="resigned", progress=1,
                  moves=40),
    ]
    lines = [line.plain for line in ranking_lines(entries, 80)]
    assert "fast bot-like" in lines[1]
    assert "bot-like" not in lines[2] and "bot-like" not in lines[3]
    assert "robot*" in lines[3]
