"""The node's handshake budget (``ServerConfig.handshakes_per_s``/``handshake_burst``,
server/credits.py ``Handshakes``): many addresses, each under its own caps, are refused
HTTP 503 at admission beyond it, and a quarter of it stays for addresses that made few
handshakes in the last minute. Time is an injected clock: the counts are exact.

The expected counts come from the settings: a burst of 8 is 6 shared + 2 reserved
(a quarter), 4 a second is 3 shared + 1 reserved."""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import pytest

from bench.attack.rawws import RawWs
from server.app import Server
from server.config import ServerConfig
from server.credits import LIGHT_HANDSHAKES

from ..clocks import HandClock

BURST, PER_S = 8, 4.0  # 6 + 2 at once, then 3 + 1 a second
BUSY_BODY = b"server busy or shutting down; retry\n"


def _server(clock: HandClock, **overrides: Any) -> Server:
    return Server(ServerConfig(port=0, handshake_burst=BURST, handshakes_per_s=PER_S,
                               monotonic=clock, **overrides))


def _admit(server: Server, ip: str) -> int | None:
    conn: Any = SimpleNamespace(charged=None)
    return server.admit(conn, (ip, 40000))


def _busy(server: Server, ip: str, handshakes: int = LIGHT_HANDSHAKES) -> None:
    """``ip`` made ``handshakes`` handshakes earlier this minute (each one ended): from
    ``LIGHT_HANDSHAKES`` on, it is busy and may not use the reserve."""
    for _ in range(handshakes):
        server.addresses.charge(ip)
        server.addresses.release(ip)


def test_the_burst_then_503_until_the_clock_moves() -> None:
    clock = HandClock()
    server = _server(clock)
    # A busy address (under its 64 connections and 120 handshakes a minute): the shared
    # 6, then 503: it may not touch the reserve.
    _busy(server, "10.0.0.1")
    assert [_admit(server, "10.0.0.1") for _ in range(10)] == [None] * 6 + [503] * 4
    # Addresses new this minute still get the reserve's 2, then 503 too.
    assert [_admit(server, f"10.0.1.{i}") for i in range(4)] == [None, None, 503, 503]
    assert server.admitted == 8
    clock.now += 1.0  # 3 shared and 1 reserved more
    assert [_admit(server, "10.0.0.1") for _ in range(5)] == [None] * 3 + [503] * 2
    assert [_admit(server, f"10.0.2.{i}") for i in range(3)] == [None, 503, 503]
    assert server.admitted == 12


def test_a_busy_address_cannot_starve_a_reconnecting_player() -> None:
    clock = HandClock()
    server = _server(clock)
    flood = [f"10.0.0.{i}" for i in range(5)]
    for ip in flood:
        _busy(server, ip)
    tries = [_admit(server, flood[i % 5]) for i in range(50)]
    assert tries.count(None) == 6  # the shared part; the flood may not touch the reserve
    players = [_admit(server, "10.1.0.1")]  # a player reconnecting: the reserve (2 → 1)
    flooded = 6
    for step in range(1, 41):  # 10 s; every quarter second the flood tries 50 times
        clock.now += 0.25
        flooded += sum(_admit(server, flood[i % 5]) is None for i in range(50))
        players.append(_admit(server, f"10.1.{step}.1"))  # then a new player tries once
    # The shared part refills 0.75 a step: 3 handshakes every 4 steps, all the flood's.
    assert flooded == 6 + 30
    # The reserve refills 0.25 a step and is never full: after the 1 left at the start,
    # the player gets one at step 1 (1.25) and at every 4th step from there (4, 8 … 40).
    assert players.count(None) == 1 + 1 + 10
    assert [i for i, p in enumerate(players) if p is None] == [0, 1, *range(4, 41, 4)]
    assert server.admitted == BURST + 10 * PER_S


def test_the_node_never_admits_more_than_its_rate() -> None:
    clock = HandClock()
    server = _server(clock)
    # Nine new addresses at once: the burst (6 shared, then 2 reserved), then 503.
    assert [_admit(server, f"10.9.0.{i}") for i in range(9)] == [None] * 8 + [503]
    admitted = 0
    for step in range(40):  # 10 s, 5 new addresses every quarter second
        clock.now += 0.25
        admitted += sum(_admit(server, f"10.{step}.0.{i}") is None for i in range(5))
    assert admitted == 10 * PER_S  # 30 shared + 10 reserved: neither bucket ever fills


def test_a_429_spends_none_of_the_budget() -> None:
    clock = HandClock()
    server = _server(clock, max_connections_per_address=2)
    _busy(server, "10.0.0.1")  # (its handshakes ended: it holds no connection)
    statuses = [_admit(server, "10.0.0.1") for _ in range(50)]
    assert statuses == [None, None] + [429] * 48  # the address's cap, before the budget
    assert [_admit(server, f"10.0.1.{i}") for i in range(8)] == [None] * 6 + [503] * 2
    # (4 shared left after the 2, then the reserve's 2: 6 of the 8 new addresses)


def test_a_trusted_proxy_takes_the_budget_as_a_light_address() -> None:
    clock = HandClock()
    server = _server(clock, trusted_proxies=("10.5.5.5/32",))
    # The client behind the proxy is not known at accept: each connection is light.
    assert [_admit(server, "10.5.5.5") for _ in range(10)] == [None] * 8 + [503] * 2
    assert _admit(server, "10.0.0.1") == 503  # the node's budget is spent for everyone
    clock.now += 0.25  # 0.75 shared, 0.25 reserved: not one handshake yet
    assert _admit(server, "10.5.5.5") == 503
    clock.now += 0.25  # 1.5 shared
    assert _admit(server, "10.5.5.5") is None


@pytest.fixture
async def budget_server() -> AsyncIterator[tuple[Server, HandClock]]:
    """A real server (in this process: its clock is the test's) with a burst of 8."""
    clock = HandClock()
    server = _server(clock, host="127.0.0.1", max_connections_per_address=1000,
                     connects_per_minute=1000, allow_volatile_store=True)
    await server.start()
    yield server, clock
    await server.stop()


async def test_over_the_wire_503_with_its_body_then_admitted(
        budget_server: tuple[Server, HandClock]) -> None:
    server, clock = budget_server
    held: list[RawWs] = []
    statuses = []
    _busy(server, "127.0.0.70")
    for _ in range(10):  # a busy address: the shared 6, then 503
        ws = await RawWs.open("127.0.0.1", server.port, source="127.0.0.70")
        statuses.append(ws.status)
        if ws.status == 101:
            held.append(ws)
        else:
            body = await ws.reader.read(4096)
            assert body == BUSY_BODY
            ws.close()
    assert statuses == [101] * 6 + [503] * 4
    # Another address, new this minute: the reserve's 2.
    other = [await RawWs.open("127.0.0.1", server.port, source="127.0.0.71")
             for _ in range(3)]
    assert [ws.status for ws in other] == [101, 101, 503]
    clock.now += 1 / 3  # one shared handshake refilled (3 a second)
    again = await RawWs.open("127.0.0.1", server.port, source="127.0.0.70")
    assert again.status == 101
    for ws in [*held, *other, again]:
        ws.close()


@pytest.mark.parametrize(("per_s", "burst"), [(0.0, 8), (-1.0, 8), (4.0, 0)])
def test_a_budget_that_would_refuse_everyone_is_a_bad_setting(per_s: float, burst: int) -> None:
    with pytest.raises(ValueError, match="handshakes_per_s must be > 0"):
        Server(ServerConfig(port=0, handshakes_per_s=per_s, handshake_burst=burst))
