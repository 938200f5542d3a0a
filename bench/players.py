"""The load generator's players: full ``websockets`` clients that send legal moves and
time what comes back (their own ``Accepted``, and the ``Progress`` of rivals).

A player alternates two moves that undo each other on a fixed Spanish deal (every card
face up), so every move is legal for as long as a run lasts, on any seat of the same deal.
Against solrace a player really plays (hello, create or join, ready, started); against
a bare baseline it sends the same ``Move`` frames after ``Join`` (the broadcast baseline
seats movers in join order) or nothing at all (the echo baselines answer any frame).
"""

from __future__ import annotations

import asyncio
import itertools
import statistics
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import engine
from protocol import PROTOCOL_VERSION, decode_server, encode
from protocol import messages as m

VARIANT = "spanish"
SEED = 1
DEAL_TRIES = 20  # random deals tried for one with a reversible move pair (most have one)
_NAMES = itertools.count(1)  # bench player names (unique within a room)
BASELINE_ROOM = "BENCH"  # the broadcast baseline has one room; the code is never checked


def find_cycle(variant: str = VARIANT, seed: int = SEED) -> tuple[str, str]:
    """Two moves that undo each other on the fresh deal ``seed`` of ``variant``."""
    pair = reversible_pair(engine.new_game(variant, seed=seed))
    if pair is None:
        raise SystemExit(f"no reversible move pair on {variant} seed {seed}")
    return pair


def reversible_pair(game: engine.Game, min_up: int = 0) -> tuple[str, str] | None:
    """Two moves that undo each other on ``game`` (the board after both equals the board
    before: same state hash), or None when the deal has none. ``min_up``: only from a
    pile with at least that many face-up cards (2 keeps a face-up card on it, so the
    pair can never turn a card up or empty the pile)."""
    tableau = game.view()["tableau"] if min_up else []
    for mv in game.legal_moves():
        text = str(mv)
        if text.count(">") != 1 or text.endswith(">f") or text.startswith("f") or ":" in text:
            continue
        src, dst = text.split(">")
        if min_up and len(tableau[int(src) - 1]["up"]) < min_up:
            continue
        after = game.copy()
        after.play(text)
        back = f"{dst}>{src}"
        try:
            after.play(back)
        except engine.EngineError:
            continue
        if after.state_hash() == game.state_hash():
            return text, back
    return None


def percentile(samples: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``samples`` (nearest rank); NaN when empty."""
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def median(samples: list[float]) -> float:
    """The median; NaN when empty."""
    return statistics.median(samples) if samples else float("nan")


@dataclass
class Clocks:
    """Send times shared by the players of one run, so a rival's ``Progress`` is timed
    from the moment the mover sent the move (all players live in this process). Times
    are ``time.monotonic()``: CLOCK_MONOTONIC, the same clock in every process."""

    sent: dict[tuple[int, int], float] = field(default_factory=dict)  # (seat, seq) -> time
    rival: list[float] = field(default_factory=list)  # seconds, send -> rival's Progress
    # When a list: every rival's ``Progress`` read, as (seat, moves, receive time), for
    # moves sent by another process (``bench/movers.py``: joined with its send times).
    receipts: list[tuple[int, int, float]] | None = None


class Player:
    """One connection playing the move cycle."""

    def __init__(self, ws: Any, cycle: tuple[str, str], clocks: Clocks | None = None) -> None:
        self.ws = ws
        self.cycle = cycle
        self.clocks = clocks or Clocks()
        self.seat = 0
        self.seq = 0
        self.acks: list[float] = []  # seconds, send -> own Accepted
        self.sent: deque[float] = deque()  # send times of moves not yet acknowledged

    @staticmethod
    async def connect(url: str) -> Any:
        """A ``websockets`` client connection (no compression, unbounded receive queue:
        the player reads everything it is sent)."""
        from websockets.asyncio.client import connect

        return await connect(url, compression=None, max_queue=None, max_size=None)

    @classmethod
    async def solo(cls, url: str, cycle: tuple[str, str], solrace: bool) -> Player:
        """A player alone in its own room (solrace) or on a bare echo baseline."""
        player = cls(await cls.connect(url), cycle)
        if not solrace:
            return player
        await player.hello()
        for _ in range(DEAL_TRIES):
            await player.ws.send(encode(m.CreateRoom(settings=m.RoomSettings(
                variant=VARIANT, countdown_s=0, spectators=False, public=False,
                max_players=1))))
            player.seat = (await player.until(m.Joined)).seat
            await player.ws.send(encode(m.Ready()))
            pair = cycle_of(await player.until(m.Started))
            if pair is not None:
                player.cycle = pair
                return player
            await player.ws.send(encode(m.Leave()))  # no cycle on this deal: another room
        raise RuntimeError(f"no reversible move pair in {DEAL_TRIES} random deals")

    async def hello(self) -> None:
        """Say hello and wait for ``Welcome``."""
        # a name of its own: names are unique within a room
        name = f"bench{next(_NAMES)}"
        await self.ws.send(encode(m.Hello(version=PROTOCOL_VERSION, name=name, bot=True)))
        await self.until(m.Welcome)

    async def until(self, kind: Any) -> Any:
        """Read frames until one of type ``kind``; an error is fatal to the run."""
        while True:
            message = decode_server(await self.ws.recv())
            if isinstance(message, kind):
                return message
            if isinstance(message, m.Error | m.Rejected | m.Closing):
                raise RuntimeError(f"bench player got {message}")

    def _move_frame(self) -> bytes:
        self.seq += 1
        now = time.monotonic()
        self.sent.append(now)
        self.clocks.sent[(self.seat, self.seq)] = now
        return encode(m.Move(seq=self.seq, move=self.cycle[(self.seq - 1) % 2]))

    def _received(self, frame: bytes) -> bool:
        """Account for one frame; True when it acknowledged one of this player's moves."""
        now = time.monotonic()
        message = decode_server(frame)
        if isinstance(message, m.Accepted):
            # Acks come in the order the moves were sent (one connection, judged in
            # order); the echo baselines answer with a fixed frame, so order, not ``seq``.
            if self.sent:
                self.acks.append(now - self.sent.popleft())
            return True
        if isinstance(message, m.Progress):
            started = self.clocks.sent.get((message.seat, message.moves))
            if started is not None and message.seat != self.seat:
                self.clocks.rival.append(now - started)
            if self.clocks.receipts is not None and message.seat != self.seat:
                self.clocks.receipts.append((message.seat, message.moves, now))
        elif isinstance(message, m.Rejected | m.Error | m.Closing):
            raise RuntimeError(f"bench player got {message}")
        return False

    async def one_move(self) -> None:
        """Send the next move and wait for its ack (one in flight)."""
        await self.ws.send(self._move_frame())
        while not self._received(await self.ws.recv()):
            pass

    async def pipelined(self, deadline: float, window: int) -> int:
        """Keep ``window`` moves in flight until ``deadline``; acks received."""
        acked = in_flight = 0
        while True:
            while in_flight < window and time.monotonic() < deadline:
                await self.ws.send(self._move_frame())
                in_flight += 1
            if in_flight == 0:
                return acked
            if self._received(await self.ws.recv()):
                in_flight -= 1
                acked += 1

    async def paced(self, first: float, interval: float, deadline: float) -> int:
        """Send one move at ``first``, ``first + interval``, … until ``deadline``, reading
        everything in between; moves sent."""
        sent = 0
        due = first
        while due < deadline:
            while (wait := due - time.monotonic()) > 0:
                try:
                    frame = await asyncio.wait_for(self.ws.recv(), wait)
                except TimeoutError:
                    break
                self._received(frame)
            await self.ws.send(self._move_frame())
            sent += 1
            due += interval
        await self.drain(0.2)
        return sent

    async def drain(self, quiet_s: float) -> None:
        """Read (and account for) frames until none came for ``quiet_s``."""
        while True:
            try:
                frame = await asyncio.wait_for(self.ws.recv(), quiet_s)
            except TimeoutError:
                return
            self._received(frame)


async def room_of_players(url: str, count: int, solrace: bool,
                          clocks: Clocks) -> tuple[list[Player], str]:
    """``count`` players seated in one racing room; the room's code. On solrace the first
    creates it (spectators allowed, no countdown), the others join, all get ``Started``
    (a deal without a reversible move pair is dropped for another room); on the broadcast
    baseline each sends ``Join`` and is seated in order."""
    if not solrace:
        players: list[Player] = []
        for i in range(count):
            player = Player(await Player.connect(url), find_cycle(), clocks)
            player.seat = i + 1
            await player.ws.send(encode(m.Join(code=BASELINE_ROOM, role="player")))
            await player.ws.send(encode(m.Ping(nonce=i + 1)))
            await player.until(m.Pong)
            players.append(player)
        return players, BASELINE_ROOM
    for _ in range(DEAL_TRIES):
        players = []
        try:
            return players, await _race_room(url, count, clocks, players)
        except NoCycle:
            for player in players:
                await player.ws.close()
    raise RuntimeError(f"no reversible move pair in {DEAL_TRIES} random deals")


async def _race_room(url: str, count: int, clocks: Clocks, players: list[Player]) -> str:
    code = ""
    for i in range(count):
        player = Player(await Player.connect(url), ("", ""), clocks)
        players.append(player)
        await player.hello()
        if i == 0:
            await player.ws.send(encode(m.CreateRoom(settings=m.RoomSettings(
                variant=VARIANT, countdown_s=0, spectators=True, public=False,
                max_players=count))))
        else:
            await player.ws.send(encode(m.Join(code=code, role="player")))
        joined = await player.until(m.Joined)
        code, player.seat = joined.code, joined.seat
    for player in players:
        await player.ws.send(encode(m.Ready()))
    for player in players:
        pair = cycle_of(await player.until(m.Started))
        if pair is None:
            raise NoCycle(code)
        player.cycle = pair
    return code


class NoCycle(RuntimeError):
    """The room's random deal has no reversible move pair: set up another room."""


def cycle_of(started: m.Started) -> tuple[str, str] | None:
    """The move cycle on the deal a solrace race started with (a random deal: the server
    picks the seed; Spanish shows every card, so the view is the whole game)."""
    return reversible_pair(engine.game_from_view(started.boards[0].view))
