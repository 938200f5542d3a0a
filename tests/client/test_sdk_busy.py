"""The SDK and a node at its admission rate (server/credits.py ``Handshakes``): a 503 at
the door means "later", so ``connect()`` tries again with backoff until the node admits
it, for up to ``busy_patience_s``; past that, or with no patience, it is
``ConnectionLost``. The server's clock is the test's: the budget refills only when the
test moves it, so which attempt gets in is decided here, not by timing."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from client_cli.sdk import RaceClient
from client_cli.sdk.errors import ConnectionLost
from server.app import Server
from server.config import ServerConfig

from ..clocks import HandClock

BURST = 4  # 3 shared + 1 kept for light addresses (a quarter)


async def _node(clock: HandClock) -> tuple[Server, list[int], asyncio.Event]:
    # A budget of BURST, refilled at 1 a second of the test's clock.
    server = Server(ServerConfig(host="127.0.0.1", port=0, handshake_burst=BURST,
                                 handshakes_per_s=1.0, monotonic=clock))
    await server.start()
    refusals: list[int] = []
    refused = asyncio.Event()
    admit = server.admit

    def counting_admit(conn: Any, peer: Any) -> int | None:
        status = admit(conn, peer)
        if status is not None:
            refusals.append(status)
            refused.set()
        return status

    server.admit = counting_admit  # type: ignore[method-assign]
    return server, refusals, refused


async def test_connect_waits_out_a_busy_node() -> None:
    clock = HandClock()
    server, refusals, refused = await _node(clock)
    first = [RaceClient(server.url, f"p{i}", backoff_s=0.01, max_backoff_s=0.05)
             for i in range(BURST)]
    try:
        for client in first:  # the whole budget: 3 shared, then the light reserve's 1
            await client.connect()
        assert refusals == []
        late = RaceClient(server.url, "late", backoff_s=0.01, max_backoff_s=0.05)
        connecting = asyncio.create_task(late.connect())
        await refused.wait()  # turned away at least once: 503, the node is busy
        assert set(refusals) == {503} and not connecting.done()
        clock.now += 2.0  # the budget refills: the next try gets in
        welcome = await asyncio.wait_for(connecting, 30)
        assert welcome.node == server.node_id and late.connected
        await late.close()
    finally:
        for client in first:
            await client.close()
        await server.stop()


async def test_without_patience_a_busy_node_is_connection_lost() -> None:
    clock = HandClock()
    server, refusals, _ = await _node(clock)
    first = [RaceClient(server.url, f"p{i}") for i in range(BURST)]
    try:
        for client in first:
            await client.connect()
        impatient = RaceClient(server.url, "late", busy_patience_s=0)
        with pytest.raises(ConnectionLost, match="503"):
            await impatient.connect()
        assert refusals == [503]
    finally:
        for client in first:
            await client.close()
        await server.stop()
