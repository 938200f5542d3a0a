"""Issue 18's server side, against a real server: the creator can always start; one
error code per failure kind; unique names in a room; a resume replays only what the
client has not seen."""

from __future__ import annotations

import pytest

from protocol import messages as m
from server.app import Server

from .client import TestClient


async def test_a_watching_creator_can_start(server: Server) -> None:
    creator = await TestClient.connect(server.url, "host")
    joined = await creator.create(as_player=False, variant="spanish", countdown_s=5)
    assert joined.seat == 0
    player = await TestClient.connect(server.url, "ann")
    await player.join(joined.code)  # not ready
    other = await TestClient.connect(server.url, "eve")
    await other.join(joined.code, role="spectator")
    await other.send(m.StartNow())  # a spectator that did not create the room
    await other.expect_error("not_creator")
    await creator.send(m.StartNow())
    for client in (creator, player, other):
        await client.expect(m.Countdown)
    for client in (creator, player, other):
        await client.close()
