"""Per client address caps against a real ``solrace serve``, with clients on 127.0.0.2,
127.0.0.3… (each test uses its own addresses: the per-minute windows outlive a test)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from bench.attack.harness import Client, ServerProc
from protocol import messages as m

CAPS = ["--per-address-connections", "3", "--connects-per-minute", "1000",
        "--room-creates-per-minute", "2",
        "--failed-joins-per-minute", "3", "--seats-per-address", "2",
        "--trusted-proxy", "127.0.0.9/32", "--rate", "1000", "--burst", "1000"]


@pytest.fixture
def strict_server() -> Iterator[ServerProc]:
    """A server with small per-address caps; 127.0.0.9 is its trusted proxy."""
    server = ServerProc(extra=CAPS)
    server.start_stderr_drain()
    yield server
    server.stop()


async def _error(client: Client, message: Any) -> str:
    """Send ``message``; the code of the ``Error`` that answers it."""
    await client.send(message)
    reply = await client.expect(m.Error, fail_on=m.Closing)
    return str(reply.code)


async def _status(url: str, source: str, forwarded: str = "") -> int:
    """The handshake's outcome: 101 (kept open: the caller's list) or the HTTP status."""
    headers = {"X-Forwarded-For": forwarded} if forwarded else {}
    try:
        ws = await connect(url, local_addr=(source, 0), additional_headers=headers,
                           open_timeout=10)
    except InvalidStatus as exc:
        return exc.response.status_code
    _open.append(ws)
    return 101


_open: list[Any] = []


@pytest.fixture(autouse=True)
async def _close_open() -> Any:
    yield
    while _open:
        await _open.pop().close()


async def test_connections_per_address(strict_server: ServerProc) -> None:
    url = strict_server.url
    assert [await _status(url, "127.0.0.2") for _ in range(4)] == [101, 101, 101, 429]
    assert await _status(url, "127.0.0.3") == 101  # another address is not affected
    await _open.pop(0).close()  # one of the three closes: a fourth may come
    for _ in range(200):  # the server sees the close after the client does
        if (status := await _status(url, "127.0.0.2")) == 101:
            break
        assert status == 429
    assert status == 101


async def test_trusted_proxy_forwards_the_client_address(strict_server: ServerProc) -> None:
    url, proxy = strict_server.url, "127.0.0.9"
    # Through the trusted proxy, each forwarded client has its own allowance.
    assert [await _status(url, proxy, "10.0.0.1") for _ in range(4)] == [101] * 3 + [429]
    assert await _status(url, proxy, "10.0.0.2") == 101
    # A spoofed header in front of the proxy's own entry changes nothing.
    assert await _status(url, proxy, "10.0.0.2, 10.0.0.1") == 429
    # From an untrusted peer the header is ignored: 127.0.0.4 is the client.
    statuses = [await _status(url, "127.0.0.4", f"10.9.9.{i}") for i in range(4)]
    assert statuses == [101, 101, 101, 429]


async def test_room_creations_per_minute(strict_server: ServerProc) -> None:
    client = await Client.open(strict_server.url, "maker", source="127.0.0.5")
    for _ in range(2):
        await client.create(variant="fortress", public=False)
        await client.send(m.Leave())
    assert await _error(client, m.CreateRoom(settings=m.RoomSettings(variant="fortress"))) \
        == "address_limit"
    other = await Client.open(strict_server.url, "other", source="127.0.0.6")
    await other.create(variant="fortress", public=False)  # another address may
    await client.close()
    await other.close()


async def test_failed_joins_per_minute(strict_server: ServerProc) -> None:
    host = await Client.open(strict_server.url, "host", source="127.0.0.7")
    real = (await host.create(variant="fortress", public=False)).code
    guesser = await Client.open(strict_server.url, "guesser", source="127.0.0.8")
    codes = [await _error(guesser, m.Join(code=f"ZZZZZZZZZ{i}")) for i in range(3)]
    assert codes == ["no_such_room"] * 3
    # the fourth guess is refused before the lookup, even a right one
    assert await _error(guesser, m.Join(code=real)) == "address_limit"
    honest = await Client.open(strict_server.url, "honest", source="127.0.0.10")
    assert (await honest.join(real)).code == real
    for c in (host, guesser, honest):
        await c.close()


async def test_one_seat_per_address_in_a_face_down_room(strict_server: ServerProc) -> None:
    url = strict_server.url
    creator = await Client.open(url, "creator", source="127.0.0.11")
    code = (await creator.create(variant="brisbane", public=False, max_players=4)).code
    twin = await Client.open(url, "twin", source="127.0.0.11")
    assert await _error(twin, m.Join(code=code)) == "same_address"
    rival = await Client.open(url, "rival", source="127.0.0.12")
    assert (await rival.join(code)).code == code
    await twin.join(code, role="spectator")  # watching is not a seat
    # No face-down card in Fortress: two seats from one address are allowed...
    await rival.send(m.Leave())
    open_room = (await rival.create(variant="fortress", public=False)).code
    mate = await Client.open(url, "mate", source="127.0.0.12")
    assert (await mate.join(open_room)).code == open_room
    # ...up to the seats cap of the address (2): a third seat is refused.
    third = await Client.open(url, "third", source="127.0.0.12")
    assert await _error(third, m.Join(code=code)) == "address_limit"
    for c in (creator, twin, rival, mate, third):
        await c.close()
