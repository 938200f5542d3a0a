"""The legal-moves opt-in (hello.lm): own-board states carry ``lm``, nothing else does.

Expected lists come from the client side: ``engine.game_from_view`` on the view the
client keeps by applying diffs (a second route to the rules), never from the server's
cached game."""

from __future__ import annotations

import random

from protocol import PROTOCOL_VERSION
from protocol import messages as m
from server.app import Server

from .client import Board, TestClient, play_moves


async def _hello(url: str, name: str, *, legal: bool, token: str | None = None,
                 seen: int = 0) -> TestClient:
    client = await TestClient.connect(url, name, hello=False)
    await client.send(m.Hello(version=PROTOCOL_VERSION, name=name, legal_moves=legal,
                              token=token, seen=seen))
    if token is None:
        await client.expect(m.Welcome)
    return client


async def test_opted_in_player_gets_legal_moves_with_every_own_state(server: Server) -> None:
    one = await _hello(server.url, "one", legal=True)
    two = await _hello(server.url, "two", legal=False)
    joined = await one.create(variant="brisbane", countdown_s=0)
    await two.join(joined.code)
    watcher = await _hello(server.url, "eye", legal=True)
    await watcher.join(joined.code, "spectator")
    for client in (one, two):
        await client.send(m.Ready())
    started = await one.expect(m.Started)
    board = Board(started.boards[0].view)
    assert started.boards[0].legal == board.legal()
    assert (await two.expect(m.Started)).boards[0].legal is None
    assert all(b.legal is None for b in (await watcher.expect(m.Started)).boards)

    def legal_moves_match(reply: m.Accepted, after: Board) -> None:
        assert reply.legal == after.legal()

    played = await play_moves(one, board, 12, random.Random(3).choice, legal_moves_match)
    assert played == 12
    # The player who did not ask never gets lm; the spectator's diffs carry none.
    reply = await two.move(Board(started.boards[0].view).legal()[0])  # the same deal
    assert isinstance(reply, m.Accepted) and reply.legal is None
    assert (await watcher.expect(m.Diff)).legal is None
    # A resume with lm: the Joined board and the last replayed diff carry the moves.
    token, seq = one.token, one.seq
    await one.close()
    back = await _hello(server.url, "one", legal=True, token=token, seen=seq - 2)
    rejoined = await back.expect(m.Joined)
    assert rejoined.boards == []  # within reach: the client keeps its board
    diffs = [await back.expect(m.Diff) for _ in range(2)]
    assert diffs[0].legal is None and diffs[1].legal == board.legal()
