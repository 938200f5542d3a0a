"""Reconnecting: resume with diff replay, with a snapshot, takeover, and the grace rules."""

from __future__ import annotations

import random

import pytest

from protocol import messages as m
from server.app import Server

from .client import Board, TestClient, play_moves
from .conftest import ServerFactory


async def _race(server: Server, variant: str = "brisbane") -> tuple[TestClient, TestClient, Board]:
    """A running two-player race; returns (player 1, player 2, player 1's board)."""
    one = await TestClient.connect(server.url, "one")
    two = await TestClient.connect(server.url, "two")
    joined = await one.create(variant=variant, countdown_s=0)
    await two.join(joined.code)
    await one.send(m.Ready())
    await two.send(m.Ready())
    started = await one.expect(m.Started)
    await two.expect(m.Started)
    return one, two, Board(started.boards[0].view)


def _first(legal: list[str]) -> str:
    return legal[0]


async def test_resume_replays_diffs_after_seen(server: Server) -> None:
    one, two, board = await _race(server)
    await play_moves(one, board, 2, _first)
    at_two = Board(board.view)
    played = 2 + await play_moves(one, board, 4, random.Random(1).choice)
    assert played == 6
    token = one.token
    await one.close()
    seats = await two.expect(m.Seats)
    while next(s for s in seats.seats if s.seat == 1).connected:
        seats = await two.expect(m.Seats)
    back = await TestClient.connect(server.url, "one-again", token=token, seen=2)
    joined = await back.expect(m.Joined)
    assert joined.seat == 1 and joined.phase == "running" and joined.token is None
    assert joined.boards == []  # the client keeps its board at seq 2: only the D's follow
    for seq in range(3, 7):
        diff = await back.expect(m.Diff)
        assert (diff.seat, diff.seq) == (1, seq)
        at_two.apply(diff.move, diff.revealed, diff.hash)
    assert at_two.view == board.view
    assert back.received(m.Snapshot) == []
    # The seat plays on from where it was; the clock did not pause.
    back.seq = 6
    legal = board.legal()
    reply = await back.move(legal[0])
    assert isinstance(reply, m.Accepted) and reply.seq == 7
    seats = await two.expect(m.Seats)
    while not next(s for s in seats.seats if s.seat == 1).connected:
        seats = await two.expect(m.Seats)


@pytest.mark.parametrize("seen", [0, 1])  # no board (a desync, a new process); too far
async def test_resume_without_a_board_or_far_behind_gets_the_board(
    server_factory: ServerFactory, seen: int
) -> None:
    server = await server_factory(snapshot_after=3, rate_burst=1000)
    one, _two, board = await _race(server, "portuguese")
    played = await play_moves(one, board, 5, _first)
    assert played == 5
    await one.close()
    back = await TestClient.connect(server.url, "back", token=one.token, seen=seen)
    joined = await back.expect(m.Joined)
    assert [(b.seat, b.seq) for b in joined.boards] == [(1, 5)]
    assert joined.boards[0].view == board.view
    # nothing follows the joined: a ping's pong is the next message
    await back.send(m.Ping(nonce=7))
    assert (await back.expect(m.Pong)).nonce == 7
    assert back.received(m.Diff) == [] and back.received(m.Snapshot) == []


async def test_resume_three_behind_gets_exactly_three_diffs(server: Server) -> None:
    one, _two, board = await _race(server)
    played = await play_moves(one, board, 6, _first)
    assert played == 6
    await one.close()
    back = await TestClient.connect(server.url, "back", token=one.token, seen=played - 3)
    joined = await back.expect(m.Joined)
    assert joined.boards == []
    await back.send(m.Ping(nonce=8))
    assert (await back.expect(m.Pong)).nonce == 8
    assert [(d.seat, d.seq) for d in back.received(m.Diff)] == [(1, 4), (1, 5), (1, 6)]
    assert back.received(m.Snapshot) == []


async def test_takeover_closes_the_old_connection(server: Server) -> None:
    one, _two, board = await _race(server)
    await play_moves(one, board, 1, _first)
    thief = await TestClient.connect(server.url, "new-device", token=one.token, seen=1)
    await thief.expect(m.Joined)
    closing = await one.expect(m.Closing)
    assert closing.code == "taken_over"
    assert await one.closed()
    thief.seq = 1
    reply = await thief.move(board.legal()[0])
    assert isinstance(reply, m.Accepted) and reply.seq == 2


async def test_resume_in_lobby_then_race(server: Server) -> None:
    one = await TestClient.connect(server.url, "one")
    joined = await one.create(variant="spanish", countdown_s=0)
    await one.close()
    back = await TestClient.connect(server.url, "back", token=joined.token)
    again = await back.expect(m.Joined)
    assert again.phase == "lobby" and again.boards == []
    await back.send(m.Ready())
    started = await back.expect(m.Started)
    assert [b.seat for b in started.boards] == [1]


async def test_bad_tokens_are_refused_and_the_session_stays_usable(server: Server) -> None:
    one, two, _board = await _race(server)
    code, seat, secret = one.token.split(".")  # type: ignore[union-attr]
    bad = [f"{code}.{seat}.{secret[:-1]}x", f"{code}.2.{secret}", f"ZZZZZZ.1.{secret}",
           "no-dots", f"{code}.x.{secret}"]
    client = await TestClient.connect(server.url, "x", hello=False)
    for token in bad:
        await client.send(m.Hello(version=1, name="x", token=token))
        await client.expect_error("bad_token")
    await client.send(m.Hello(version=1, name="x"))
    await client.expect(m.Welcome)
    # Tokens stop working once the results are out.
    await one.send(m.Resign())
    await two.send(m.Resign())
    await one.expect(m.Results)
    late = await TestClient.connect(server.url, "late", hello=False)
    await late.send(m.Hello(version=1, name="late", token=one.token))
    await late.expect_error("bad_token")
