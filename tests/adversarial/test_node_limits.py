"""Per-node bounds against a real ``solrace serve``: ``list`` is paged, ``max_live_rooms``
is enforced."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.attack.harness import Client, ServerProc
from protocol import messages as m

ROOMS = 120  # more than two pages of 50 (ServerConfig.list_page)
PER_CONNECTION = 30  # under max_rooms_per_connection (32)


@pytest.fixture
def roomy_server() -> Iterator[ServerProc]:
    """Room creation as fast as the test likes; at most 3 rooms held by the node."""
    server = ServerProc(extra=["--room-creates-per-minute", "1000", "--rate", "100000",
                               "--burst", "100000", "--max-live-rooms", "3"])
    server.start_stderr_drain()
    yield server
    server.stop()


async def test_list_is_paged_and_complete(roomy_server: ServerProc) -> None:
    made: list[str] = []
    for c in range(ROOMS // PER_CONNECTION):
        maker = await Client.open(roomy_server.url, f"maker{c}", source=f"127.0.0.{20 + c}")
        for _ in range(PER_CONNECTION):
            made.append((await maker.create(variant="fortress")).code)
            await maker.send(m.Leave())  # the node then holds no room for it
        await maker.close()
    lister = await Client.open(roomy_server.url, "lister", source="127.0.0.30")
    pages: list[list[str]] = []
    cursor: str | None = None
    while True:
        await lister.send(m.ListRooms(before=cursor))
        reply = await lister.expect(m.RoomList)
        pages.append([r.code for r in reply.rooms])
        cursor = reply.next
        if cursor is None:
            break
        assert len(pages) < 10, "the cursor does not advance"
    assert [len(p) for p in pages] == [50, 50, 20]
    listed = [code for page in pages for code in page]
    # each room once (rooms made in the same millisecond are ordered by code, so the
    # order is "newest first" only up to such ties)
    assert len(set(listed)) == len(listed) and set(listed) == set(made)
    await lister.close()


async def test_max_live_rooms(roomy_server: ServerProc) -> None:
    holders = [await Client.open(roomy_server.url, f"h{i}", source=f"127.0.0.{40 + i}")
               for i in range(4)]
    for holder in holders[:3]:
        await holder.create(variant="fortress", public=False)
    await holders[3].send(m.CreateRoom(settings=m.RoomSettings(variant="fortress")))
    error = await holders[3].expect(m.Error)
    assert error.code == "node_full"
    await holders[0].send(m.Leave())  # a room freed on the node: creation works again
    # A connection's messages are handled in order: the Pong says the Leave (and the
    # room's release, which it awaits) is done before the other connection creates.
    await holders[0].send(m.Ping(nonce=1))
    await holders[0].expect(m.Pong)
    await holders[3].create(variant="fortress", public=False)
    for holder in holders:
        await holder.close()


async def test_a_seat_left_in_the_lobby_is_freed(roomy_server: ServerProc) -> None:
    host = await Client.open(roomy_server.url, "host", source="127.0.0.50")
    code = (await host.create(variant="fortress", max_players=2)).code
    squatter = await Client.open(roomy_server.url, "squatter", source="127.0.0.51")
    for _ in range(3):  # join and leave, again and again
        await squatter.join(code)
        await squatter.send(m.Leave())
    await squatter.send(m.Ping(nonce=1))  # answered after the leave was handled
    await squatter.expect(m.Pong)
    await squatter.close()
    honest = await Client.open(roomy_server.url, "honest", source="127.0.0.52")
    joined = await honest.join(code)
    assert joined.seat == 2 and [s.name for s in joined.seats] == ["host", "honest"]
    for c in (host, honest):
        await c.close()
