"""Hidden information never leaves the server.

Every frame queued for every connection is recorded at that moment together with the
cards face down *for its receiver* then, taken from the server's true boards: a player's
own face-down cards; for a spectator the cards face down on any racing seat's board (the
room-wide rule: a card face down on a racing seat must not reach anyone else, and every
seat has the same deal); for anyone before the start, all 52. No frame before the results
may name one of those cards, nor contain the seed or the salt.
"""

from __future__ import annotations

import asyncio
import random
import re
from typing import Any

import msgpack
import pytest

import engine
from engine import cards as C
from protocol import messages as m
from protocol.errors import ProtocolError
from protocol.tokens import make_token, parse_token
from server.connection import Connection

from .client import Board, TestClient, play_moves
from .conftest import ServerFactory

ALL = frozenset(C.CODES)


def _face_down(game: engine.Game) -> set[str]:
    return {C.CODES[c] for p, d in zip(game.piles, game.down, strict=True) for c in p[:d]}


def hidden_for(conn: Connection) -> frozenset[str] | None:
    """Cards the receiver must not learn now; None once the race is over (all public)."""
    room, member = conn.room, conn.member
    if room is None or member is None:
        return ALL  # outside a room nothing about any board may be sent
    if room.phase == "finished":
        return None
    if room.phase in ("lobby", "countdown"):
        return ALL
    if member.is_player:
        return frozenset(_face_down(member.game)) if member.game else ALL
    racing = [mb.game for mb in room.members.values()
              if mb.is_player and mb.game and mb.status == "playing"]
    return frozenset(set().union(*(_face_down(g) for g in racing)))


def _walk(obj: Any) -> list[Any]:
    out = [obj]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _walk(k) + _walk(v)
    elif isinstance(obj, list | tuple):
        for v in obj:
            out += _walk(v)
    return out


def _is_token(text: str) -> bool:
    """A resume token (``Joined.k``): its secret is 32 bytes from the OS's CSPRNG in
    base64url, whose ``-`` and ``_`` cut it into pieces, and a two-character piece spells
    a card by chance ("…-AC_…") about once in a few dozen tokens. Nothing in it comes
    from a board, so it is not scanned."""
    try:
        parse_token(text)
    except ProtocolError:
        return False
    return True


def leaks(frame: bytes, hidden: frozenset[str], secrets: tuple[int, str]) -> list[Any]:
    """The hidden cards (and secrets) a frame contains."""
    values = _walk(msgpack.unpackb(frame, raw=False, strict_map_key=False))
    found: list[Any] = []
    for v in values:
        if isinstance(v, str) and _is_token(v):
            continue
        if isinstance(v, str):
            # Token by token, so a card named inside a text ("a group from 9D") counts and
            # a room code that happens to contain "9D" ("E59D44") does not.
            found += [t for t in re.findall(r"[A-Za-z0-9]+", v) if t in hidden]
            if v in secrets:
                found.append(v)
        elif not isinstance(v, bool) and v in secrets:
            found.append(v)
    return found


def test_the_detector_detects() -> None:
    game = engine.new_game("brisbane", seed=7)
    hidden = frozenset(_face_down(game))
    card = sorted(hidden)[0]
    frame = msgpack.packb({"t": "joined", "bd": [{"w": {"tableau": [{"up": [card]}]}}]})
    assert leaks(frame, hidden, (7, "ab")) == [card]
    assert leaks(msgpack.packb({"sd": 7}), hidden, (7, "ab")) == [7]
    assert leaks(msgpack.packb({"w": game.view()}), hidden, (7, "ab")) == []
    assert leaks(msgpack.packb({"m": f"a group from {card} does not fit"}), hidden,
                 (7, "ab")) == [card]
    assert leaks(msgpack.packb({"c": f"E5{card}44"}), hidden, (7, "ab")) == []
    assert leaks(msgpack.packb({"sl": "ab"}), hidden, (7, "ab")) == ["ab"]
    # a token's random secret may hold a card's name between "-" and "_": not a leak
    token = make_token("E59D44", 2, f"x1-{card}_" + "y" * 20)
    assert leaks(msgpack.packb({"k": token}), hidden, (7, "ab")) == []
    assert leaks(msgpack.packb({"m": token + " " + card}), hidden, (7, "ab")) == [card, card]


@pytest.mark.parametrize("delay", [0, 1, 10])
async def test_no_frame_names_a_card_face_down_for_its_receiver(
    server_factory: ServerFactory, delay: int
) -> None:
    # A fixed deal and seeded move choices: the same race every run.
    server = await server_factory(seed_source=lambda: 20261122 + delay, rate_burst=100_000,
                                  rate_per_s=100_000.0)
    records: list[tuple[str, bytes, frozenset[str] | None]] = []

    def hook(conn: Connection, frame: bytes) -> None:
        records.append((f"conn{conn.id}", frame, hidden_for(conn)))

    server.frame_hook = hook
    rng = random.Random(delay)
    players = [await TestClient.connect(server.url, f"p{i}", bot=i == 2) for i in range(3)]
    joined = await players[0].create(variant="brisbane", countdown_s=0, max_players=3,
                                     spectator_delay_s=delay)
    for p in players[1:]:
        await p.join(joined.code)
    # one spectator taking Diffs frames (hello.ds), the late one a P and a D per move
    watcher = await TestClient.connect(server.url, "watcher", batched=True)
    await watcher.join(joined.code, role="spectator")
    for p in players:
        await p.send(m.Ready())
    boards = [Board((await p.expect(m.Started)).boards[0].view) for p in players]

    async def race(i: int) -> None:
        await play_moves(players[i], boards[i], 15, random.Random(rng.random()).choice)

    await asyncio.gather(*(race(i) for i in range(3)))
    # A late spectator, and a player who drops and resumes mid-race.
    late = await TestClient.connect(server.url, "late")
    await late.join(joined.code, role="spectator")
    await players[1].close()
    resumed = await TestClient.connect(server.url, "p1b", token=players[1].token, seen=3)
    await resumed.expect(m.Joined)
    resumed.seq = players[1].seq
    await play_moves(resumed, boards[1], 10, rng.choice)
    await play_moves(players[0], boards[0], 10, rng.choice)
    for p in (players[0], resumed, players[2]):
        await p.send(m.Resign())
    results = await watcher.expect(m.Results)
    await late.expect(m.Results)
    secrets = (results.seed, results.salt)
    checked = 0
    for who, frame, hidden in records:
        if hidden is None:
            continue
        assert leaks(frame, hidden, secrets) == [], (who, msgpack.unpackb(frame))
        checked += 1
    assert checked > 50
    assert watcher.received(m.Diffs)  # the ticks were among the frames scanned
    # Sanity: the race did reveal cards, so there was something to leak.
    assert any(msg.revealed for p in (*players, resumed) for _, msg in p.history
               if isinstance(msg, m.Accepted))
