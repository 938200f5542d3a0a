"""A spectator joining a room with many logged moves gets the right boards, built from a
checkpoint and the log's tail (docs/SERVER.md, "Snapshots"): live, delayed (as of the
delayed clock, then the diffs of the window as they fall due), on another node (no cache
there: the checkpoints come from the store), and a resumed player gets its board the same
way; a spectator of a long hidden-information room gets no board while a seat races
(here or on a node that learns the face-down counts from the checkpoints), then the
final boards. The expected boards are the player's own, kept by applying each acknowledged diff
and checking the server's hash; the server's checkpoints are not consulted."""

from __future__ import annotations

import random
from typing import Any

import pytest

import engine
from bench.players import reversible_pair
from protocol import messages as m

from .client import Board, TestClient, lasting_move
from .conftest import ServerFactory

EVERY = 16  # checkpoint_every: many checkpoints in a test-sized race
FAST = {"rate_burst": 100_000, "rate_per_s": 100_000.0, "checkpoint_every": EVERY,
        "rebuild_slice": 5}


async def _race(server_url: str, **settings: Any) -> tuple[TestClient, Board, str]:
    """A two-seat Spanish race (no face-down card: spectators see boards); seat 2
    never moves, so the race runs while seat 1 plays."""
    host = await TestClient.connect(server_url, "host")
    joined = await host.create(variant="spanish", countdown_s=0, max_players=2, **settings)
    rival = await TestClient.connect(server_url, "rival", source="127.0.0.2")
    await rival.join(joined.code)
    for p in (host, rival):
        await p.send(m.Ready())
    board = Board((await host.expect(m.Started)).boards[0].view)
    await rival.expect(m.Started)
    return host, board, joined.code


async def _play(host: TestClient, board: Board, count: int, rng: random.Random,
                views: dict[int, dict[str, Any]]) -> None:
    for _ in range(count):
        # Spanish has no face-down card: the view is the whole game
        move = lasting_move(engine.game_from_view(board.view), rng)
        reply = await host.move(move)
        assert isinstance(reply, m.Accepted), reply
        board.apply(move, reply.revealed, reply.hash)
        views[reply.seq] = board.view


def _boards(joined: m.Joined) -> dict[int, m.Board]:
    return {b.seat: b for b in joined.boards}


async def _follow(watcher: TestClient, view: dict[str, Any], seq: int, upto: int,
                  views: dict[int, dict[str, Any]]) -> None:
    """Apply the watcher's diffs of seat 1 from ``seq`` to ``upto`` (hash checked)."""
    board = Board(view)
    while seq < upto:
        diff = await watcher.expect(m.Diff)
        assert (diff.seat, diff.seq) == (1, seq + 1)
        board.apply(diff.move, diff.revealed, diff.hash)
        seq += 1
        assert board.view == views[seq]


async def test_a_spectator_joins_a_long_room_from_a_checkpoint(
    server_factory: ServerFactory,
) -> None:
    server = await server_factory(seed_source=lambda: 7, **FAST)
    host, board, code = await _race(server.url)
    views: dict[int, dict[str, Any]] = {0: board.view}
    await _play(host, board, 150, random.Random(1), views)
    saved = await server.store.get_checkpoint(code, 1)
    assert saved is not None and saved.seq == 144, "the holder stored its checkpoints"
    watcher = await TestClient.connect(server.url, "watcher")
    boards = _boards(await watcher.join(code, role="spectator"))
    assert (boards[1].seq, boards[1].view) == (150, views[150])
    assert boards[2].seq == 0
    await _play(host, board, 20, random.Random(2), views)
    await _follow(watcher, boards[1].view, 150, 170, views)


async def test_a_delayed_spectator_gets_the_board_as_of_the_delay_then_the_window(
    server_factory: ServerFactory,
) -> None:
    now = [1_800_000_000_000]
    server = await server_factory(seed_source=lambda: 7, clock=lambda: now[0], **FAST)
    host, board, code = await _race(server.url, spectator_delay_s=3)
    views: dict[int, dict[str, Any]] = {0: board.view}
    rng = random.Random(1)
    await _play(host, board, 100, rng, views)  # race clock 0 (the clock stands still)
    now[0] += 10_000
    await _play(host, board, 60, rng, views)  # race clock 10 s
    now[0] += 2_000  # the delayed clock is 9 s: the first 100 moves only
    watcher = await TestClient.connect(server.url, "watcher")
    boards = _boards(await watcher.join(code, role="spectator"))
    assert (boards[1].seq, boards[1].view) == (100, views[100])
    # a second one: the window is in the room's buffer already (not read again)
    second = await TestClient.connect(server.url, "second")
    again = _boards(await second.join(code, role="spectator"))
    assert (again[1].seq, again[1].view) == (100, views[100])
    now[0] += 1_000  # the window's moves (race clock 10 s) fall due
    await _follow(watcher, boards[1].view, 100, 160, views)
    await _follow(second, again[1].view, 100, 160, views)


@pytest.mark.redis
async def test_a_node_without_the_room_reads_checkpoints_from_the_store(
    server_factory: ServerFactory, redis_url: str,
) -> None:
    a = await server_factory(store_url=redis_url, node_id="a", seed_source=lambda: 7, **FAST)
    b = await server_factory(store_url=redis_url, node_id="b", **FAST)
    host, board, code = await _race(a.url)
    views: dict[int, dict[str, Any]] = {0: board.view}
    await _play(host, board, 150, random.Random(1), views)
    watcher = await TestClient.connect(b.url, "watcher")
    boards = _boards(await watcher.join(code, role="spectator"))
    assert (boards[1].seq, boards[1].view) == (150, views[150])
    # the player resumes on node b with no board (seen 0): rebuilt the same way
    moved = await TestClient.connect(b.url, "host-on-b", token=host.token, seen=0)
    resumed = await moved.expect(m.Joined)
    assert _boards(resumed)[1].view == views[150]
    moved.seq = 150
    await _play(moved, Board(views[150]), 10, random.Random(3), views)
    await _follow(watcher, boards[1].view, 150, 160, views)


async def test_a_resumed_player_gets_its_board_from_a_checkpoint(
    server_factory: ServerFactory,
) -> None:
    server = await server_factory(seed_source=lambda: 7, **FAST)
    host, board, _ = await _race(server.url)
    views: dict[int, dict[str, Any]] = {0: board.view}
    await _play(host, board, 90, random.Random(4), views)
    again = await TestClient.connect(server.url, "host-again", token=host.token, seen=0)
    resumed = _boards(await again.expect(m.Joined))
    assert (resumed[1].seq, resumed[1].view) == (90, views[90])
    again.seq = 90
    await _play(again, Board(views[90]), 5, random.Random(5), views)


async def _hidden_race(url: str) -> tuple[TestClient, TestClient, str]:
    """A Brisbane race (seed 1: 21 cards face down) where seat 1 has played 200 moves of
    a cycle that turns no card up; seat 2 has not moved."""
    host = await TestClient.connect(url, "host")
    joined = await host.create(variant="brisbane", countdown_s=0, max_players=2)
    rival = await TestClient.connect(url, "rival", source="127.0.0.2")
    await rival.join(joined.code)
    for p in (host, rival):
        await p.send(m.Ready())
    await host.expect(m.Started)
    await rival.expect(m.Started)
    pair = reversible_pair(engine.new_game("brisbane", seed=1), min_up=2)
    assert pair is not None
    for i in range(200):
        reply = await host.move(pair[i % 2])
        assert isinstance(reply, m.Accepted) and reply.revealed == []
    return host, rival, joined.code


async def _hidden_until_the_end(watcher: TestClient, code: str, host: TestClient,
                                rival: TestClient) -> None:
    joined = await watcher.join(code, role="spectator")
    assert joined.hidden and joined.boards == [], "a racing seat hides cards"
    for p in (host, rival):
        await p.send(m.Resign())
    snaps = {s.board.seat: s.board for s in [await watcher.expect(m.Snapshot)
                                             for _ in range(2)]}
    # the final boards, once nobody races: seat 1 is back on the deal after 200 moves
    fresh = engine.new_game("brisbane", seed=1).view()
    assert (snaps[1].seq, snaps[1].view) == (200, fresh)
    assert (snaps[2].seq, snaps[2].view) == (0, fresh)
    kinds = [type(msg) for _, msg in watcher.history]
    assert m.Diff not in kinds[:kinds.index(m.Snapshot)]


async def test_a_spectator_of_a_long_hidden_room_gets_no_board_until_the_end(
    server_factory: ServerFactory,
) -> None:
    server = await server_factory(seed_source=lambda: 1, **FAST)
    host, rival, code = await _hidden_race(server.url)
    watcher = await TestClient.connect(server.url, "watcher")
    await _hidden_until_the_end(watcher, code, host, rival)


@pytest.mark.redis
async def test_a_node_opening_a_long_hidden_room_learns_it_hides_from_checkpoints(
    server_factory: ServerFactory, redis_url: str,
) -> None:
    a = await server_factory(store_url=redis_url, node_id="a", seed_source=lambda: 1, **FAST)
    b = await server_factory(store_url=redis_url, node_id="b", **FAST)
    host, rival, code = await _hidden_race(a.url)
    watcher = await TestClient.connect(b.url, "watcher")  # b never saw Started
    await _hidden_until_the_end(watcher, code, host, rival)
