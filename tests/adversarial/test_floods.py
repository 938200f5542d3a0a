"""Floods from one client address against a real ``solrace serve``: connections are
refused at admission, before the websocket handshake, with the documented HTTP status
and body, and the caps are exact even with a hundred handshakes in flight at once; room
creations past the address's cap are refused ``address_limit`` and count nothing.
(The kit's full runs, with the honest player's acks, are in docs/SECURITY.md.)"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from bench.attack.harness import Client, ServerProc
from bench.attack.rawws import RawWs, hello_frame
from protocol import messages as m

CAP = 8  # connections per address in these tests
PER_MINUTE = 40  # handshakes per address and minute
REFUSED_BODY = b"too many connections from your address; retry later\n"


@pytest.fixture
def capped_server() -> Iterator[ServerProc]:
    """Small per-address caps; room creations 3 a minute."""
    server = ServerProc(extra=["--per-address-connections", str(CAP),
                               "--connects-per-minute", str(PER_MINUTE),
                               "--room-creates-per-minute", "3",
                               "--rate", "1000", "--burst", "1000"])
    server.start_stderr_drain()
    yield server
    server.stop()


async def _answer(ws: RawWs) -> bytes:
    """Everything the server sends until it closes (bounded)."""
    data = b""
    while len(data) < 4096:
        chunk = await asyncio.wait_for(ws.reader.read(4096), 10)
        if not chunk:
            break
        data += chunk
    return data


async def test_a_connection_flood_gets_exactly_the_cap(capped_server: ServerProc) -> None:
    port = capped_server.port
    held: list[RawWs] = []
    refused: list[bytes] = []
    sem = asyncio.Semaphore(100)  # a hundred handshakes in flight at once

    async def one() -> int:
        async with sem:
            ws = await RawWs.open("127.0.0.1", port, source="127.0.0.60")
        if ws.status == 101:
            ws.send(hello_frame())
            held.append(ws)
        else:
            refused.append(await _answer(ws))
            ws.close()
        return ws.status

    statuses = Counter(await asyncio.gather(*(one() for _ in range(30))))
    assert statuses == {101: CAP, 429: 30 - CAP}
    # after the head (RawWs read it), the body, then the close
    assert refused == [REFUSED_BODY] * (30 - CAP)
    # Another address is not affected; the honest one on 127.0.0.1 neither.
    for source in ("127.0.0.61", ""):
        other = await RawWs.open("127.0.0.1", port, source=source)
        assert other.status == 101
        other.close()
    for ws in held:
        ws.close()


async def test_refusals_do_not_count_against_the_minute(capped_server: ServerProc) -> None:
    port = capped_server.port
    held: list[RawWs] = []
    for _ in range(CAP):  # the address at its cap of open connections
        ws = await RawWs.open("127.0.0.1", port, source="127.0.0.62")
        assert ws.status == 101
        held.append(ws)
    for _ in range(100):  # refused: the cap, not the window
        ws = await RawWs.open("127.0.0.1", port, source="127.0.0.62")
        assert ws.status == 429
        ws.close()
    for ws in held:
        ws.close()
    # The minute's window holds only the CAP admitted handshakes: PER_MINUTE - CAP more
    # are admitted (a 429 meanwhile is the open cap: the server has not yet seen every
    # close; it counts nothing), then the window refuses.
    statuses = []
    while len(statuses) < 200 and statuses.count(101) < PER_MINUTE - CAP:
        ws = await RawWs.open("127.0.0.1", port, source="127.0.0.62")
        statuses.append(ws.status)
        ws.close()
    assert statuses.count(101) == PER_MINUTE - CAP
    ws = await RawWs.open("127.0.0.1", port, source="127.0.0.62")
    assert ws.status == 429  # the window is full now
    ws.close()


async def test_a_refused_request_in_pieces_still_gets_its_answer(
        capped_server: ServerProc) -> None:
    port = capped_server.port
    held = [await RawWs.open("127.0.0.1", port, source="127.0.0.63") for _ in range(CAP)]
    reader, writer = await asyncio.open_connection("127.0.0.1", port,
                                                   local_addr=("127.0.0.63", 0))
    for piece in (b"GET / HTTP/1.1\r\nHost: x\r", b"\nUpgrade: websocket\r\n", b"\r\n"):
        writer.write(piece)
        await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10)
    assert answer.startswith(b"HTTP/1.1 429 ") and answer.endswith(REFUSED_BODY)
    # One that sends nothing is dropped (REFUSED_WAIT_S), with nothing sent.
    reader, writer = await asyncio.open_connection("127.0.0.1", port,
                                                   local_addr=("127.0.0.63", 0))
    with contextlib.suppress(ConnectionResetError):  # aborted: nothing sent either
        assert await asyncio.wait_for(reader.read(), 10) == b""
    writer.close()
    for ws in held:
        ws.close()


async def _create(client: Client, variant: str = "fortress") -> str:
    """Send a create; "ok" if it made a room (left at once), else the error code."""
    await client.send(m.CreateRoom(settings=m.RoomSettings(variant=variant)))
    reply: Any = await client.expect(m.Joined | m.Error)
    if isinstance(reply, m.Error):
        return str(reply.code)
    await client.send(m.Leave())
    return "ok"


async def test_room_creations_past_the_cap_are_refused_and_count_nothing(
        capped_server: ServerProc) -> None:
    url = capped_server.url
    makers = [await Client.open(url, f"m{i}", source="127.0.0.64") for i in range(4)]
    # A refused create (bad settings) does not use the address's allowance.
    assert [await _create(makers[0], "nope") for _ in range(5)] == ["bad_settings"] * 5
    outcomes = Counter([await _create(c) for c in makers for _ in range(3)])
    assert outcomes == {"ok": 3, "address_limit": 9}  # exactly the cap, on any connection
    # Refused creates cost the connection none of its room allowance (32): 40 more
    # refusals, then still address_limit, never too_many_rooms.
    assert {await _create(makers[0]) for _ in range(40)} == {"address_limit"}
    other = await Client.open(url, "other", source="127.0.0.65")
    assert await _create(other) == "ok"  # another address has its own
    for c in (*makers, other):
        await c.close()


async def test_spectators_of_a_room_are_capped() -> None:
    server = ServerProc(extra=["--max-spectators", "3", "--rate", "1000", "--burst", "1000"])
    server.start_stderr_drain()
    try:
        url = server.url
        host = await Client.open(url, "host", source="127.0.0.66")
        code = (await host.create(variant="fortress", public=False, max_players=2)).code
        watchers = [await Client.open(url, f"w{i}", source=f"127.0.0.{67 + i}")
                    for i in range(4)]
        for w in watchers[:3]:
            await w.join(code, role="spectator")
        await watchers[3].send(m.Join(code=code, role="spectator"))
        assert (await watchers[3].expect(m.Error)).code == "room_full"
        player = await Client.open(url, "player", source="127.0.0.71")
        assert (await player.join(code)).code == code  # seats are not spectators
        await watchers[0].send(m.Leave())
        await watchers[0].send(m.Ping(nonce=1))  # answered after the leave was handled
        await watchers[0].expect(m.Pong)
        assert (await watchers[3].join(code, role="spectator")).code == code
        for c in (host, *watchers, player):
            await c.close()
    finally:
        server.stop()
