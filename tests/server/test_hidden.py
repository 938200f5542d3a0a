"""Room-wide hidden information over real websockets (docs/SERVER.md, "Who sees what").

A Brisbane deal hides 21 cards face down. While any racing seat still has one, a
spectator (the player's own second connection included) gets no board and no diff, and
a rival from another address gets only its own board; once no racing seat has a face-down
card, spectators get every board (``Snapshot``) and then diffs. The expected boards come
from the engine replaying the moves the test itself sent, not from the server.
"""

from __future__ import annotations

import pytest

import engine
from engine import cards as C
from engine.solver import solve
from protocol import encode
from protocol import messages as m

from .client import TestClient
from .conftest import ServerFactory
from .test_leaks import leaks

# Brisbane seed 41: the solver wins it, and some move of its solution turns the last
# face-down card up: the tests stop just before that move, then play it. Which move it
# is depends on the solution the solver finds, so it is read off the engine here.
SEED = 41


def _solution() -> tuple[list[str], int]:
    """The solver's winning moves and the number of the move that turns the last
    face-down card up (checked on the engine: cards stay face down until it)."""
    game = engine.new_game("brisbane", seed=SEED)
    result = solve(game, max_seconds=10)
    assert result.verdict == "won"
    moves = [str(mv) for mv in result.moves]
    last_reveal = 0
    for number, move in enumerate(moves, 1):
        game.play(move)
        if sum(game.down) == 0:
            last_reveal = number
            break
    # the premise: a reveal ends the hiding with at least one move of the solution left
    assert 1 < last_reveal < len(moves), (last_reveal, len(moves))
    return moves, last_reveal


async def _play(client: TestClient, moves: list[str], first: int) -> None:
    for seq, move in enumerate(moves, first):
        await client.send(m.Move(seq=seq, move=move))
        accepted = await client.expect(m.Accepted | m.Rejected)  # type: ignore[arg-type]
        assert isinstance(accepted, m.Accepted), accepted


@pytest.mark.parametrize("delay", [0, 2])
async def test_boards_reach_spectators_once_no_racing_seat_hides_a_card(
    server_factory: ServerFactory, delay: int
) -> None:
    moves, last_reveal = _solution()
    server = await server_factory(seed_source=lambda: SEED, rate_burst=100_000,
                                  rate_per_s=100_000.0)
    host = await TestClient.connect(server.url, "host")
    joined = await host.create(variant="brisbane", countdown_s=0, max_players=2,
                               spectator_delay_s=delay)
    rival = await TestClient.connect(server.url, "rival", source="127.0.0.2")
    await rival.join(joined.code)
    watcher = await TestClient.connect(server.url, "host-watching")
    await watcher.join(joined.code, role="spectator")
    for p in (host, rival):
        await p.send(m.Ready())
    await host.expect(m.Started)
    started = await watcher.expect(m.Started)
    assert started.hidden and started.boards == []
    await rival.expect(m.Started)
    await rival.send(m.Resign())  # seat 2 stops racing with its 21 cards face down
    await host.expect(m.Progress)  # the rival's resignation reached the room
    await _play(host, moves[:last_reveal - 1], 1)
    # A spectator joining now is told boards are hidden too.
    late = await TestClient.connect(server.url, "late")
    late_joined = await late.join(joined.code, role="spectator")
    assert late_joined.hidden and late_joined.boards == []
    await _play(host, moves[last_reveal - 1:last_reveal], last_reveal)
    for spectator in (watcher, late):
        snaps = [await spectator.expect(m.Snapshot) for _ in range(2)]
        boards = {s.board.seat: s.board for s in snaps}
        assert sorted(boards) == [1, 2]
        fresh = engine.new_game("brisbane", seed=SEED)
        assert boards[2].seq == 0 and boards[2].view == fresh.view()
        # Seat 1 as of the spectator's delayed clock, then diffs up to the live board.
        game = fresh.copy()
        for move in moves[:boards[1].seq]:
            game.play(move)
        assert boards[1].view == game.view()
        seen = boards[1].seq
        while seen < last_reveal:
            diff = await spectator.expect(m.Diff)
            assert diff.seat == 1 and diff.seq == seen + 1
            assert diff.move == moves[seen]
            seen += 1
        if delay == 0:
            assert boards[1].seq == last_reveal
        # Before the snapshots: no board, no diff.
        kinds = [type(msg) for _, msg in spectator.history]
        first_snap = kinds.index(m.Snapshot)
        assert m.Diff not in kinds[:first_snap]
        assert all(not getattr(msg, "boards", None) for _, msg in spectator.history[:first_snap])
    await _play(host, moves[last_reveal:last_reveal + 1], last_reveal + 1)
    diff = await watcher.expect(m.Diff)
    assert diff.seq == last_reveal + 1 and diff.move == moves[last_reveal]
    await host.send(m.Resign())
    await watcher.expect(m.Results)


def _face_down(game: engine.Game) -> frozenset[str]:
    return frozenset(C.CODES[c] for p, d in zip(game.piles, game.down, strict=True)
                     for c in p[:d])


async def test_a_rival_from_another_address_learns_only_its_own_board(
    server_factory: ServerFactory,
) -> None:
    # The rival plays the winning line up to the last reveal: its own board shows every
    # card. Everything else it receives (seat lists, progress, ranking) must name none of
    # the host's face-down cards.
    moves, last_reveal = _solution()
    server = await server_factory(seed_source=lambda: SEED, rate_burst=100_000,
                                  rate_per_s=100_000.0)
    host = await TestClient.connect(server.url, "host")
    joined = await host.create(variant="brisbane", countdown_s=0, max_players=2)
    rival = await TestClient.connect(server.url, "rival", source="127.0.0.2")
    await rival.join(joined.code)
    for p in (host, rival):
        await p.send(m.Ready())
    await host.expect(m.Started)
    await rival.expect(m.Started)
    await _play(host, moves[:3], 1)
    host_game = engine.new_game("brisbane", seed=SEED)
    for move in moves[:3]:
        host_game.play(move)
    await _play(rival, moves[:last_reveal - 1], 1)
    await host.send(m.Resign())
    await rival.expect(m.Progress)
    hidden = _face_down(host_game)
    assert len(hidden) > 0
    own_board = (m.Started, m.Accepted, m.Joined)
    others = [msg for _, msg in rival.history if not isinstance(msg, own_board)]
    assert others  # seats, progress, ranking
    for msg in others:
        assert leaks(encode(msg), hidden, (-1, "")) == [], msg
    await rival.send(m.Resign())
    await rival.expect(m.Results)
