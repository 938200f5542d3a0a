"""Several real ``solrace serve`` processes on one Redis act as one service: players on
different nodes race each other, a spectator on a third node sees every board, and a
node's crash loses no acknowledged move (its players resume on another node)."""

from __future__ import annotations

import asyncio

from websockets.exceptions import ConnectionClosed

from protocol import messages as m

from .conftest import NodeFactory
from .harness import Racer, Watcher, audit

# Spanish: no card is dealt face down, so spectators get every board and every diff
# across nodes (in a Brisbane room they would get no board while seats race: the
# room-wide hidden-information rule, tested across nodes in tests/server/test_nodes.py).
SETTINGS = {"variant": "spanish", "countdown_s": 0, "max_players": 2}


async def start_race(
    urls: tuple[str, str, str], seed: int = 1
) -> tuple[Racer, Racer, Watcher, asyncio.Task[None]]:
    """p1 creates on urls[0], p2 joins on urls[1], a spectator joins on urls[2] and
    watches (a task, until the results); the race starts."""
    p1, p2, spectator = Racer("p1", seed), Racer("p2", seed + 1), Watcher("spec")
    await p1.open(urls[0])
    code = (await p1.create(**SETTINGS)).code
    await p2.open(urls[1])
    await p2.join(code)
    await spectator.open(urls[2])
    await spectator.send(m.Join(code=code, role="spectator"))
    await spectator.expect(m.Joined)
    watching = asyncio.create_task(spectator.watch_until_results())
    await asyncio.gather(p1.ready_and_start(), p2.ready_and_start())
    return p1, p2, spectator, watching


async def finish(
    p1: Racer, p2: Racer, spectator: Watcher, watching: asyncio.Task[None]
) -> m.Results:
    """Both resign; everyone gets the same results; the audit passes."""
    r1, r2 = await asyncio.gather(p1.resign_and_results(), p2.resign_and_results())
    assert r1 == r2
    await asyncio.wait_for(watching, 20)
    assert spectator.results == r1
    assert audit(r1, [p1, p2]) == len(p1.acked) + len(p2.acked)
    return r1


async def test_players_on_two_nodes_and_a_spectator_on_a_third(
    redis_url: str, nodes: NodeFactory
) -> None:
    a, b, c = await nodes(redis_url, 3)
    p1, p2, spectator, watching = await start_race((a.url, b.url, c.url))
    played = await asyncio.gather(p1.play(12), p2.play(12))
    assert min(played) > 0
    # the rival on the other node saw p1's progress
    seen = [msg for msg in p2.history if isinstance(msg, m.Progress) and msg.seat == p1.seat]
    assert seen and seen[-1].moves <= p1.seq
    results = await finish(p1, p2, spectator, watching)
    logs = {log.seat: log.moves for log in results.logs}
    assert logs[p1.seat] == [p1.acked[s] for s in sorted(p1.acked)]
    # the spectator on the third node rebuilt every board, move by move (hash-checked)
    assert spectator.moves == logs


async def test_a_node_crash_loses_no_acknowledged_move(redis_url: str, nodes: NodeFactory) -> None:
    a, b, c = await nodes(redis_url, 3)
    p1, p2, spectator, watching = await start_race((a.url, b.url, c.url), seed=7)
    await asyncio.gather(p1.play(5), p2.play(5))
    # p1 keeps playing on node a while node a is killed (SIGKILL: no goodbye)
    crashed = asyncio.Event()
    p1.on_ack = lambda racer: crashed.is_set() or len(racer.acked) < 8 or crashed.set()
    playing = asyncio.create_task(p1.play(1000))
    await asyncio.wait_for(crashed.wait(), 20)
    await a.kill()
    try:
        await asyncio.wait_for(playing, 20)
        raise AssertionError("p1 kept playing on a dead node")
    except ConnectionClosed:
        pass
    before = dict(p1.acked)
    assert len(before) >= 8
    await p1.resume(b.url)  # to another node, with its token and last seen sequence
    assert p1.resumes == 1 and p1.seq >= max(before)
    await asyncio.gather(p1.play(5), p2.play(5))
    assert len(p1.acked) > len(before), "p1 plays on after resuming"
    results = await finish(p1, p2, spectator, watching)
    logs = {log.seat: log.moves for log in results.logs}
    for seq, move in before.items():
        assert logs[p1.seat][seq - 1] == move, "an acknowledged move was lost"
    # the move acknowledged just before the crash may never have been published: the
    # spectator's node fills such a gap from the log
    assert spectator.moves == logs
