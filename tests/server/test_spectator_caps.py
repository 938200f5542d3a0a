"""A room's spectators on a node are capped (``max_spectators_per_room``), and of them
those whose hello did not set ``ds`` (a ``Progress`` and a ``Diff`` frame per move each,
instead of one ``Diffs`` frame per tick) have a cap of their own
(``max_legacy_spectators_per_room``): beyond either, a spectator join is ``room_full``,
and a ``ds`` spectator may still join while only the second one is reached."""

from __future__ import annotations

from protocol import messages as m

from .client import TestClient
from .conftest import ServerFactory


async def test_spectators_without_ds_have_their_own_cap(server_factory: ServerFactory) -> None:
    server = await server_factory(max_spectators_per_room=4, max_legacy_spectators_per_room=2,
                                  rate_burst=100_000, rate_per_s=100_000.0)
    host = await TestClient.connect(server.url, "host")
    code = (await host.create(variant="spanish")).code
    watchers: list[TestClient] = []
    try:
        for i in range(2):  # the two a frame-per-move spectator may take
            legacy = await TestClient.connect(server.url, f"old{i}")
            watchers.append(legacy)
            await legacy.join(code, "spectator")
        third = await TestClient.connect(server.url, "old2")
        watchers.append(third)
        await third.send(m.Join(code=code, role="spectator"))
        refused = await third.expect_error("room_full")
        assert "Diffs" in refused.message
        for i in range(2):  # ds spectators still get in, up to the room's 4 in all
            modern = await TestClient.connect(server.url, f"new{i}", batched=True)
            watchers.append(modern)
            await modern.join(code, "spectator")
        fifth = await TestClient.connect(server.url, "new2", batched=True)
        watchers.append(fifth)
        await fifth.send(m.Join(code=code, role="spectator"))
        full = await fifth.expect_error("room_full")
        assert "4 spectators" in full.message
    finally:
        for client in (host, *watchers):
            await client.close()
