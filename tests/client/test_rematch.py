"""A rematch with two SDK clients against a real server: both race round 1, both ask
for the next deal (``RaceClient.rematch``), the room comes back to its lobby on a new
committed deal, and round 2 races to results that verify against the new commitment."""

from __future__ import annotations

import asyncio

from client_cli.bots import GreedyBot
from client_cli.sdk import RaceClient, play_bot, settings_from
from client_cli.sdk.verify import check_results


async def _race(clients: list[RaceClient]) -> None:
    for c in clients:
        await c.ready()
    await asyncio.gather(*(play_bot(c, GreedyBot(i), max_moves=60) for i, c in enumerate(clients)))


async def test_two_sdk_clients_rematch_and_round_two_verifies(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server()
    ann, bob = RaceClient(server.url, "ann", bot=True), RaceClient(server.url, "bob", bot=True)
    for c in (ann, bob):
        await c.connect()
    await ann.create_room(settings_from("spanish", countdown_s=0, max_players=2))
    await bob.join(ann.room.code)
    await _race([ann, bob])
    first = ann.room.results
    assert first is not None and first.round == 1
    committed = ann.room.commitment
    assert check_results(first, committed).ok
    await ann.rematch()
    assert ann.room.results is not None  # bob has not asked yet: still round 1
    await bob.rematch()
    for c in (ann, bob):
        await c.wait_for(lambda r: r.results is None and r.phase == "lobby", 10)
        assert c.room.commitment != committed and c.room.boards == {}
        assert c.room.token is not None  # the same seat, the same token
    assert ann.room.commitment == bob.room.commitment
    second_commitment = ann.room.commitment
    await _race([ann, bob])
    second = bob.room.results
    assert second is not None and second.round == 2 and second.seed != first.seed
    check = check_results(second, second_commitment)
    assert check.ok, check.lines
    assert {e.name for e in second.ranking} == {"ann", "bob"}
    for c in (ann, bob):
        await c.close()


async def test_the_watch_screen_follows_a_rematch_and_checks_the_new_deal(start_server) -> None:  # type: ignore[no-untyped-def]
    from client_cli.tui.common import screen_text
    from client_cli.tui.watch import WatchApp

    server = await start_server()
    ann = RaceClient(server.url, "ann", bot=True)
    await ann.connect()
    await ann.create_room(settings_from("spanish", countdown_s=0, max_players=1))
    app = WatchApp(server.url, ann.room.code)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.client.wait_for(lambda r: r.code == ann.room.code, 10)
        await _race([ann])
        await app.client.wait_for(lambda r: r.results is not None, 10)
        first = app.committed
        await ann.rematch()  # alone: the room is back in its lobby at once
        await app.client.wait_for(lambda r: r.results is None and r.phase == "lobby", 10)
        await _race([ann])
        await app.client.wait_for(lambda r: r.results is not None, 10)
        await pilot.pause()
        assert app.committed == ann.room.commitment != first
        assert app.client.room.results is not None and app.client.room.results.round == 2
        assert "✓ seed check passed" in screen_text(app)
    await ann.close()
