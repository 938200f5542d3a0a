"""A Redis Cluster failover mid-race, with real processes: 3 masters with a replica each,
two ``solrace serve`` nodes, a person (the harness's Racer) and an SDK bot
(``solrace bot``, its own process). The master that owns the room is killed while the bot
plays; the bot rides over the failover (``store_unavailable`` is retried, never
``internal``) and exits 0 with results that pass its seed check, identical on both nodes.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from protocol import messages as m
from protocol.verify import verify_results
from server.store.redis_keys import RoomKeys as _Keys
from tests.conftest import RedisClusterProcesses
from tests.store.test_redis_store import _int_reply, _owns

from .conftest import NodeFactory
from .harness import Racer, Watcher

pytestmark = [pytest.mark.redis, pytest.mark.slow]
SOLRACE = str(Path(sys.executable).parent / "solrace")


async def test_a_bot_rides_over_a_cluster_failover(
    redis_cluster_with_replicas: RedisClusterProcesses, nodes: NodeFactory, tmp_path: Path
) -> None:
    cluster = redis_cluster_with_replicas
    a, b = await nodes(cluster.url, 2)
    person, watcher = Racer("person", 3), Watcher("watcher")
    await person.open(a.url)
    code = (await person.create(variant="spanish", countdown_s=0, max_players=2)).code
    await watcher.open(a.url)
    await watcher.send(m.Join(code=code, role="spectator"))
    await watcher.expect(m.Joined)
    watching = asyncio.create_task(watcher.watch_until_results())
    log = (tmp_path / "bot.log").open("wb")
    bot = await asyncio.create_subprocess_exec(
        SOLRACE, "bot", b.url, code, "--seed", "4", "--think", "0.25", "--max-moves", "40",
        stdout=log, stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        while True:  # the bot has joined (and says ready by itself)
            seats: m.Seats = await person.expect(m.Seats, wait=30)
            if len(seats.seats) == 2:
                break
        await person.ready_and_start()
        await person.play(2)
        await person.send(m.Resign())  # the rest of the race is the bot's
        # Wait until the person's resignation is stored (its own Progress says so) and
        # the bot has moved. Killing the master with the resignation still in flight
        # could lose it (store_unavailable), and the race would then wait for the
        # person's seat instead of ending with the bot's.
        resigned = bot_moved = False
        while not (resigned and bot_moved):
            message = await person.recv(wait=30)
            if isinstance(message, m.Progress) and message.seat != person.seat:
                bot_moved = True
            elif isinstance(message, m.Progress) and message.status == "resigned":
                resigned = True
            elif isinstance(message, m.Error):
                raise AssertionError(f"the resignation was refused: {message}")
        slot = _int_reply(cluster.nodes[0].command("CLUSTER", "KEYSLOT", _Keys(code).room))
        owner = next(n for n in cluster.nodes if _owns(n, slot))
        owner.stop()  # SIGKILL the room's master: its replica takes over
        status = await asyncio.wait_for(bot.wait(), 120)
        await asyncio.wait_for(watching, 60)
    finally:
        if bot.returncode is None:
            bot.kill()
            await bot.wait()
        log.close()
        # shown with any failure above, so a failed run says what the bot saw
        print("----- bot log -----\n" + (tmp_path / "bot.log").read_text(errors="replace"))
    output = (tmp_path / "bot.log").read_text(errors="replace")
    assert status == 0, output
    assert "internal" not in output, output
    results = watcher.results
    assert results is not None and verify_results(results).problems == []
    late = Watcher("late")  # the other node has the same results
    await late.open(b.url)
    await late.send(m.Join(code=code, role="spectator"))
    await late.expect(m.Joined)
    assert await late.expect(m.Results, wait=30) == results
    for client in (person, watcher, late):
        assert not [x for x in client.history if isinstance(x, m.Error) and x.code == "internal"]
