"""The attack kit's set-up connections retry a refusal that says "later" (HTTP 503: the
node's handshake budget; 429: the address's caps) with the SDK's jittered backoff, within
a patience; a flood (patience 0) gets the refusal at once. The server's clock is a
HandClock: the budget refills only when the test's backoff stand-in moves it, so what
is asserted is the number of refusals, never a time."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest
from websockets.exceptions import InvalidStatus

from bench.attack import harness, rawws
from bench.attack.harness import Client
from bench.attack.rawws import BUSY_MAX_BACKOFF_S, RawWs, busy_backoff
from server.app import Server
from server.config import ServerConfig
from server.credits import LIGHT_HANDSHAKES

from ..clocks import HandClock

SOURCE = "127.0.0.90"


@pytest.fixture
async def tight() -> AsyncIterator[tuple[Server, HandClock, list[RawWs]]]:
    """A server whose budget ``SOURCE`` has spent: its next handshake gets 503 until the
    clock moves a second (a burst of 8: 6 shared, which a busy address may use, and 2
    reserved, which it may not; 4 a second)."""
    clock = HandClock()
    server = Server(ServerConfig(port=0, host="127.0.0.1", handshake_burst=8,
                                 handshakes_per_s=4.0, monotonic=clock,
                                 max_connections_per_address=1000, connects_per_minute=1000,
                                 allow_volatile_store=True))
    await server.start()
    for _ in range(LIGHT_HANDSHAKES):  # SOURCE is busy this minute: no reserve for it
        server.addresses.charge(SOURCE)
        server.addresses.release(SOURCE)
    held = [await RawWs.open("127.0.0.1", server.port, source=SOURCE) for _ in range(6)]
    assert [ws.status for ws in held] == [101] * 6
    yield server, clock, held
    for ws in held:
        ws.close()
    await server.stop()


def _backoff_moving(clock: HandClock, refill_after: int,
                    attempts: list[int]) -> Callable[[int], float]:
    """A stand-in for ``busy_backoff``: records each attempt, and at ``refill_after``
    moves the server's clock a second (the budget refills); waits no time."""
    def backoff(attempt: int) -> float:
        attempts.append(attempt)
        if attempt == refill_after:
            clock.now += 1.0
        return 0.0
    return backoff


async def test_raw_setup_retries_503_until_admitted(
        tight: tuple[Server, HandClock, list[RawWs]], monkeypatch: pytest.MonkeyPatch) -> None:
    server, clock, _ = tight
    attempts: list[int] = []
    monkeypatch.setattr(rawws, "busy_backoff", _backoff_moving(clock, 3, attempts))
    ws = await RawWs.open_patiently("127.0.0.1", server.port, source=SOURCE)
    assert (ws.status, ws.retries, attempts) == (101, 3, [1, 2, 3])
    ws.close()


async def test_raw_setup_without_patience_returns_the_503(
        tight: tuple[Server, HandClock, list[RawWs]], monkeypatch: pytest.MonkeyPatch) -> None:
    server, clock, _ = tight
    attempts: list[int] = []
    monkeypatch.setattr(rawws, "busy_backoff", _backoff_moving(clock, 1, attempts))
    ws = await RawWs.open_patiently("127.0.0.1", server.port, source=SOURCE, patience_s=0)
    assert (ws.status, ws.retries, attempts) == (503, 0, [])
    ws.close()


async def test_client_setup_retries_503_a_flood_does_not(
        tight: tuple[Server, HandClock, list[RawWs]], monkeypatch: pytest.MonkeyPatch) -> None:
    server, clock, _ = tight
    url = f"ws://127.0.0.1:{server.port}"
    attempts: list[int] = []
    monkeypatch.setattr(harness, "busy_backoff", _backoff_moving(clock, 2, attempts))
    with pytest.raises(InvalidStatus) as refused:
        await Client.open(url, "flood", source=SOURCE, patience_s=0)
    assert refused.value.response.status_code == 503 and attempts == []
    client = await Client.open(url, "setup", source=SOURCE)  # hello answered: admitted
    assert attempts == [1, 2]
    await client.close()


async def test_client_setup_retries_429_from_the_address_cap(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """One open connection per address: the second is refused 429 until the first
    goes, which the backoff stand-in starts at the second refusal."""
    server = Server(ServerConfig(port=0, host="127.0.0.1", max_connections_per_address=1,
                                 allow_volatile_store=True))
    await server.start()
    url = f"ws://127.0.0.1:{server.port}"
    first = await Client.open(url, "first", source=SOURCE)
    attempts: list[int] = []
    closing: list[asyncio.Task[None]] = []

    def backoff(attempt: int) -> float:
        attempts.append(attempt)
        if attempt == 2:
            closing.append(asyncio.get_running_loop().create_task(first.close()))
        return 0.0

    monkeypatch.setattr(harness, "busy_backoff", backoff)
    second = await Client.open(url, "second", source=SOURCE)
    assert attempts[:2] == [1, 2]  # refused 429 twice at least, then admitted
    await second.close()
    await asyncio.gather(*closing)
    await server.stop()


def test_busy_backoff_doubles_from_the_sdks_first_delay_to_its_cap_jittered() -> None:
    for attempt, full in [(1, 0.1), (2, 0.2), (3, 0.4), (6, 3.2), (7, BUSY_MAX_BACKOFF_S),
                          (40, BUSY_MAX_BACKOFF_S)]:
        delays = [busy_backoff(attempt) for _ in range(200)]
        assert all(full * 0.5 <= d <= full for d in delays)
        assert max(delays) - min(delays) > full * 0.1  # jittered, not one value
