"""What a join and a creation cost in store calls (each a round trip on Redis): joins in
a loop and creations are floods (docs/SECURITY.md). A race this node holds is found
without a store lookup; ``_enter`` still reads the record once the spectator is
attached. A lobby (which may expire) is looked up in the store as before. A player's
seat checks (address, name) read the seats once, and not at all in a room the player
created a moment ago."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bench.attack.harness import Client, play_cycle, racing_player
from protocol import messages as m
from server.app import Server
from server.config import ONE_HOST, ServerConfig


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    """A real server in this process (its store is the test's to count)."""
    started = Server(ServerConfig(port=0, host="127.0.0.1", rate_burst=100_000,
                                  rate_per_s=100_000.0, allow_volatile_store=True, **ONE_HOST))
    await started.start()
    yield started
    await started.stop()


def _count_calls(server: Server, monkeypatch: pytest.MonkeyPatch,
                 order: list[str] | None = None) -> Counter[str]:
    """Count every call to the store's async methods from now on (and list them in
    ``order``)."""
    calls: Counter[str] = Counter()
    names = order if order is not None else []
    store: Any = server.store
    inner = store.wrapped  # under the metrics wrapper, which caches its wrappers (in
    for name in store._timed:  # ``_timed`` and as instance attributes): made anew below
        store.__dict__.pop(name, None)
    store._timed.clear()
    for name in ("get_room", "get_seats", "get_seat", "get_checkpoint", "read_log",
                 "checkpoint_and_tail", "get_results", "subscribe", "add_seat"):
        method = getattr(inner, name)

        def counted(method: Any = method, name: str = name) -> Any:
            async def call(*args: Any, **kwargs: Any) -> Any:
                calls[name] += 1
                names.append(name)
                return await method(*args, **kwargs)
            return call

        monkeypatch.setattr(inner, name, counted())
    return calls


async def test_a_spectator_joins_a_race_held_here_without_a_lookup(
        server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"ws://127.0.0.1:{server.port}"
    bot, cycle = await racing_player(url, name="mover", bot=True, spectators=True)
    assert await play_cycle(bot, cycle, 300, 60) == 300
    calls = _count_calls(server, monkeypatch)
    watcher = await Client.open(url, "watcher")
    joined = await watcher.join(bot.code, role="spectator")
    assert joined.boards[0].seq == 300  # the board as it is: the record read is current
    # one get_room (in _enter, after attaching), the seats, and the one seat's
    # checkpoint with the log's tail after it in one call
    assert calls == Counter(get_room=1, get_seats=1, checkpoint_and_tail=1)
    await watcher.close()
    await bot.close()


async def test_a_spectator_of_a_lobby_is_looked_up_in_the_store(
        server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"ws://127.0.0.1:{server.port}"
    host = await Client.open(url, "host")
    created = await host.create(variant="brisbane", countdown_s=0, public=False)
    calls = _count_calls(server, monkeypatch)
    watcher = await Client.open(url, "watcher")
    await watcher.join(created.code, role="spectator")
    assert calls["get_room"] == 2  # the lookup, then _enter's read
    await watcher.close()
    await host.send(m.Leave())
    await host.close()


async def test_a_seat_reads_the_seats_once_and_a_creator_not_at_all(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A hidden-information room (Brisbane) with the one-seat-per-address rule on: the
    address check and the name check share one read of the seats."""
    server = Server(ServerConfig(port=0, host="127.0.0.1", allow_volatile_store=True,
                                 **{**ONE_HOST, "shared_address_seats": False}))
    await server.start()
    url = f"ws://127.0.0.1:{server.port}"
    order: list[str] = []
    _count_calls(server, monkeypatch, order)
    host = await Client.open(url, "host", source="127.0.0.31")
    created = await host.create(variant="brisbane", countdown_s=0, public=False)
    assert "get_seats" not in order[:order.index("add_seat")]
    order.clear()
    guest = await Client.open(url, "guest", source="127.0.0.32")
    await guest.join(created.code)
    assert order[:order.index("add_seat")].count("get_seats") == 1
    order.clear()
    twin = await Client.open(url, "twin", source="127.0.0.32")  # the guest's address
    await twin.send(m.Join(code=created.code))
    refused = await twin.expect(m.Error)
    assert refused.code == "same_address" and order.count("get_seats") == 1
    for client in (host, guest, twin):
        await client.close()
    await server.stop()

