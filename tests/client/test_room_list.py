"""The SDK's ``list_rooms`` and ``solrace rooms`` read the server's room list page by
page (``ListRooms.before``), within their bounds, against a real server whose pages hold
fewer rooms than it has."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from client_cli.sdk import RaceClient, settings_from
from client_cli.sdk.client import LIST_PAGES_MAX

from .test_player_commands import run_main

PAGE = 5  # the server's page (ServerConfig.list_page) in these tests
ROOMS = 12  # three pages: 5, 5, 2


async def make_rooms(url: str, count: int) -> list[str]:
    """``count`` public lobbies made one after another (the maker leaves each, so they
    stay listed without a player); their codes, oldest first."""
    codes = []
    async with RaceClient(url, "maker", reconnect=False) as maker:
        for _ in range(count):
            room = await maker.create_room(settings_from("fortress"))
            codes.append(room.code)
            await maker.leave()
    return codes


async def test_list_rooms_reads_every_page(start_server: Any) -> None:
    server = await start_server(list_page=PAGE)
    made = await make_rooms(server.url, ROOMS)
    pages: list[int] = []
    server.frame_hook = lambda conn, frame: pages.append(1) if b"rooms" in frame[:16] else None
    async with RaceClient(server.url, "lister", reconnect=False) as client:
        first = await client.list_page()
        assert len(first.rooms) == PAGE and first.next is not None
        pages.clear()
        listed = [r.code for r in await client.list_rooms()]
    assert sorted(listed) == sorted(made)  # every room, each once
    assert len(pages) == 3  # 5 + 5 + 2: three requests, the last page has no next


async def test_list_rooms_stops_at_its_limit(start_server: Any) -> None:
    server = await start_server(list_page=PAGE)
    made = await make_rooms(server.url, LIST_PAGES_MAX + 5)
    pages: list[int] = []
    server.frame_hook = lambda conn, frame: pages.append(1) if b"rooms" in frame[:16] else None
    async with RaceClient(server.url, "lister", reconnect=False) as client:
        listed = [r.code for r in await client.list_rooms(limit=7)]
        assert len(listed) == 7 and len(set(listed)) == 7 and set(listed) <= set(made)
        assert len(pages) == 2  # 5 + 2 of the second page
        # One room a page: the page bound stops it before the rooms run out.
        server.config.list_page = 1
        pages.clear()
        assert len(await client.list_rooms()) == LIST_PAGES_MAX == len(pages)


async def test_a_rate_limited_page_is_asked_again(start_server: Any) -> None:
    # The server's rate-limit clock moves 1 s a reading while the rooms are made, then
    # only after each rate_limited answer (10 credits of burst; a list costs 5).
    now, ticking = [0.0], [True]

    def clock() -> float:
        if ticking[0]:
            now[0] += 1.0
        return now[0]

    server = await start_server(list_page=PAGE, rate_burst=10, rate_per_s=10.0,
                                monotonic=clock)
    made = await make_rooms(server.url, ROOMS)
    ticking[0] = False
    now[0] += 100.0
    limited: list[bytes] = []

    def refill(conn: Any, frame: bytes) -> None:
        if b"rate_limited" in frame:
            limited.append(frame)
            now[0] += 1.0  # a second later: 10 credits again

    server.frame_hook = refill
    async with RaceClient(server.url, "lister", reconnect=False) as client:
        for _ in range(2):  # two full lists: 6 pages, more than the burst pays for
            assert sorted(r.code for r in await client.list_rooms()) == sorted(made)
    assert limited  # the server did refuse pages, and the client asked again


async def test_rooms_command_pages_and_limits(start_server: Any) -> None:
    server = await start_server(list_page=PAGE)
    made = await make_rooms(server.url, ROOMS)
    status, out, err = await asyncio.to_thread(run_main, "rooms", server.url, "--json")
    assert status == 0, err
    assert sorted(r["code"] for r in json.loads(out)) == sorted(made)
    status, out, err = await asyncio.to_thread(run_main, "rooms", server.url, "--limit", "6")
    assert status == 0, err
    rows = out.splitlines()
    assert len(rows) == 1 + 6 + 1 and rows[-1] == "(the 6 newest rooms; --limit N for more)"
    assert {row.split()[0] for row in rows[1:-1]} <= set(made)
