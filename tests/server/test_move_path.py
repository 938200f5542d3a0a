"""The move path end to end (docs/SERVER.md "One move"): the ack comes first, a seat's
events reach rivals in its move order even when the player pipelines its moves, and
the live ranking — computed on every node from the events, not read back from the
store — matches the engine's own count of the seat's progress after each move."""

from __future__ import annotations

import pytest

import engine
from protocol import encode
from protocol import messages as m
from server import events

from .client import TestClient
from .conftest import ServerFactory
from .test_ranking import WIN_SEED_7


def _progress_after_each_move() -> list[int]:
    """The seat's progress after each move of the line, from the engine (independent of
    the server)."""
    game = engine.new_game("portuguese", seed=7)
    out = []
    for move in WIN_SEED_7:
        game.play(move)
        out.append(game.progress)
    return out


async def test_pipelined_moves_reach_a_rival_in_order_with_a_ranking_per_change(
        server_factory: ServerFactory) -> None:
    server = await server_factory(seed_source=lambda: 7, rate_burst=10_000,
                                  rate_per_s=10_000.0)
    one = await TestClient.connect(server.url, "mover")
    two = await TestClient.connect(server.url, "rival", bot=True)
    joined = await one.create(variant="portuguese", countdown_s=0, rank_by="progress")
    await two.join(joined.code)
    await one.send(m.Ready())
    await two.send(m.Ready())
    await one.expect(m.Started)
    await two.expect(m.Started)
    # every move sent before the first ack arrives: the server judges them in order
    for seq, move in enumerate(WIN_SEED_7, 1):
        await one.send(m.Move(seq=seq, move=move))
    acks = [await one.expect(m.Accepted) for _ in WIN_SEED_7]
    assert [a.seq for a in acks] == list(range(1, len(WIN_SEED_7) + 1))
    progress = await two.expect(m.Progress)
    while progress.moves < len(WIN_SEED_7):
        progress = await two.expect(m.Progress)
    assert progress.status == "won" and progress.progress == 52
    await two.send(m.Resign())
    await two.expect(m.Results)

    expected = _progress_after_each_move()
    # The rival saw every move of seat 1, once, in order, each with its progress.
    seen = [(p.moves, p.progress) for _, p in two.history
            if isinstance(p, m.Progress) and p.seat == 1]
    assert seen == [(i + 1, expected[i]) for i in range(len(expected))]
    # A ranking after each move that changed the ranking (the progress, or the win),
    # showing seat 1 as of that move. The node reads the seats from the store once (at
    # the first ranked move it sees), and may find it ahead of the events (moves
    # already stored); from then on every ranking is exactly the move it follows.
    changed = [i + 1 for i in range(len(expected))
               if expected[i] != (expected[i - 1] if i else 0) or i + 1 == len(expected)]
    ranked: list[tuple[int, int]] = []
    last_moves = 0
    for _, message in two.history:
        if isinstance(message, m.Progress) and message.seat == 1:
            last_moves = message.moves
        elif isinstance(message, m.Ranking) and last_moves:
            (entry,) = [e for e in message.ranking if e.seat == 1]
            ranked.append((entry.moves, entry.progress))
            assert entry.moves >= last_moves, "a ranking never shows the seat behind"
            if len(ranked) > 1 and ranked[0][0] < last_moves:
                assert entry.moves == last_moves
    assert all(progress == expected[moves - 1] for moves, progress in ranked)
    # Every change after the store read has its ranking (others come too: the bot-like
    # mark of this fast player, the core's rankings at the win and the resignation).
    first = ranked[0][0]
    moves_ranked = [moves for moves, _ in ranked]
    assert moves_ranked == sorted(moves_ranked)
    assert {k for k in changed if k > first} <= set(moves_ranked)


async def test_a_reads_own_moves_are_not_decoded_again_on_the_memory_store(
        server_factory: ServerFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The memory store hands a node its own ``Moved`` events back as the bytes it was
    given, all of a read's moves together at the end of the read; the room keeps one
    entry per event (``Room.encode_own``), so none is decoded again, and the rival still
    gets every move once, in order."""
    server = await server_factory(store_url="", seed_source=lambda: 7, rate_burst=10_000,
                                  rate_per_s=10_000.0)
    decoded: list[str] = []
    real = events.decode_event

    def counting(data: bytes) -> events.Event:
        event = real(data)
        decoded.append(type(event).__name__)
        return event

    monkeypatch.setattr(events, "decode_event", counting)
    one = await TestClient.connect(server.url, "mover")
    two = await TestClient.connect(server.url, "rival", bot=True)
    joined = await one.create(variant="portuguese", countdown_s=0, rank_by="progress")
    await two.join(joined.code)
    await one.send(m.Ready())
    await two.send(m.Ready())
    await one.expect(m.Started)
    await two.expect(m.Started)
    line = WIN_SEED_7[:8]
    # the eight moves in one write: the server reads them in one read (one delivery)
    protocol, transport = one.ws.protocol, one.ws.transport
    for seq, move in enumerate(line, 1):
        protocol.send_binary(encode(m.Move(seq=seq, move=move)))
    transport.writelines(protocol.data_to_send())
    acks = [await one.expect(m.Accepted) for _ in line]
    assert [a.seq for a in acks] == list(range(1, len(line) + 1))
    progress = await two.expect(m.Progress)
    while progress.moves < len(line):
        progress = await two.expect(m.Progress)
    seen = [p.moves for _, p in two.history if isinstance(p, m.Progress) and p.seat == 1]
    assert seen == list(range(1, len(line) + 1))
    assert "Moved" not in decoded
