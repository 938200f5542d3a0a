"""An in-process test client: a websocket, the protocol codec, and waiting helpers.

Every message received is kept in ``history`` with the wall time it arrived, so tests can
assert on everything a connection saw (leak checks, delays), not only what they waited
for. ``expect(T)`` returns the first not-yet-consumed message of type T.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, TypeVar

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from protocol import PROTOCOL_VERSION, decode_server, encode
from protocol import messages as m

T = TypeVar("T")
TIMEOUT = 5.0


class TestClient:
    """One connection to a server under test."""

    __test__ = False  # not a pytest test class

    def __init__(self, ws: ClientConnection, name: str) -> None:
        self.ws = ws
        self.name = name
        self.history: list[tuple[float, Any]] = []  # (time.time() ms, message)
        self.frames: list[bytes] = []  # every frame received
        self.sent = 0  # frames sent
        self.inbox: list[Any] = []
        self.seq = 0  # last move acknowledged
        self.token: str | None = None
        self.joined: m.Joined | None = None

    @classmethod
    async def connect(cls, url: str, name: str = "p", *, hello: bool = True, bot: bool = False,
                      token: str | None = None, seen: int = 0,
                      source: str | None = None, batched: bool = False) -> TestClient:
        """Connect and (by default) say hello; with a token this resumes a seat. ``source``
        is the loopback address to connect from (another client address: 127.0.0.2);
        ``batched``: as a spectator, take the moves as ``Diffs`` frames (hello.ds)."""
        # max_queue=None: keep reading (and answer the close handshake) even when a test
        # leaves messages unconsumed.
        extra: dict[str, Any] = {"local_addr": (source, 0)} if source else {}
        ws = await connect(url, max_size=None, max_queue=None, compression=None, **extra)
        client = cls(ws, name)
        if hello:
            await client.send(m.Hello(version=PROTOCOL_VERSION, name=name, bot=bot,
                                      token=token, seen=seen, batched=batched))
            if token is None:
                await client.expect(m.Welcome)
        return client

    async def send(self, message: Any) -> None:
        """Send a protocol message."""
        await self.send_raw(encode(message))

    async def send_raw(self, data: bytes | str) -> None:
        """Send arbitrary bytes (or text) as one frame (counted in ``sent``)."""
        await self.ws.send(data)
        self.sent += 1

    async def _receive(self, wait: float) -> Any:
        frame = await asyncio.wait_for(self.ws.recv(), wait)
        assert isinstance(frame, bytes), "the server sent a text frame"
        message = decode_server(frame)
        self.frames.append(frame)
        self.history.append((time.time() * 1000, message))
        return message

    async def recv(self, wait: float = TIMEOUT) -> Any:
        """The next unconsumed message."""
        if self.inbox:
            return self.inbox.pop(0)
        return await self._receive(wait)

    async def expect(self, kind: type[T], wait: float = TIMEOUT) -> T:
        """The first unconsumed message of type ``kind`` (others stay in the inbox).
        Fails on timeout, or if the server sends ``Closing`` first."""
        for i, message in enumerate(self.inbox):
            if isinstance(message, kind):
                return self.inbox.pop(i)  # type: ignore[no-any-return]
        label = getattr(kind, "__name__", str(kind))
        deadline = time.monotonic() + wait
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{self.name}: no {label}; inbox {self.inbox!r}")
            try:
                message = await self._receive(left)
            except TimeoutError:
                raise TimeoutError(
                    f"{self.name}: no {label}; inbox {self.inbox!r}"
                ) from None
            if isinstance(message, kind):
                return message
            if isinstance(message, m.Closing) and kind is not m.Closing:
                raise AssertionError(f"{self.name}: closed while waiting: {message}")
            self.inbox.append(message)

    async def expect_error(self, code: str, wait: float = TIMEOUT) -> m.Error:
        """The next ``Error``, which must have ``code``."""
        error = await self.expect(m.Error, wait)
        assert error.code == code, error
        return error

    async def closed(self, wait: float = TIMEOUT) -> bool:
        """Read until the server closes the connection; True if it did in time."""
        try:
            while True:
                await self._receive(wait)
        except ConnectionClosed:
            return True
        except TimeoutError:
            return False

    # ------------------------------------------------------------------ conveniences
    async def create(self, as_player: bool = True, **settings: Any) -> m.Joined:
        """Create a room with these settings (RoomSettings fields) and return Joined."""
        await self.send(m.CreateRoom(settings=m.RoomSettings(**settings), as_player=as_player))
        return await self._joined()

    async def join(self, code: str, role: str = "player") -> m.Joined:
        """Join a room and return Joined."""
        await self.send(m.Join(code=code, role=role))  # type: ignore[arg-type]
        return await self._joined()

    async def _joined(self) -> m.Joined:
        joined = await self.expect(m.Joined)
        self.joined = joined
        if joined.token:
            self.token = joined.token
        return joined

    async def move(self, notation: str, seq: int | None = None) -> m.Accepted | m.Rejected:
        """Play a move (``seq`` defaults to the next one) and return the reply; other
        messages stay in the inbox."""
        await self.send(m.Move(seq=self.seq + 1 if seq is None else seq, move=notation))
        reply = await self.expect(m.Accepted | m.Rejected)  # type: ignore[arg-type]
        if isinstance(reply, m.Accepted):
            self.seq = reply.seq
        return reply  # type: ignore[no-any-return]

    def received(self, kind: type[T]) -> list[T]:
        """Every message of type ``kind`` received so far (consumed or not)."""
        return [msg for _, msg in self.history if isinstance(msg, kind)]

    def diffs(self) -> list[m.Diff]:
        """Every ``Diff`` received so far, those inside ``Diffs`` frames included, in the
        order a client applies them."""
        out: list[m.Diff] = []
        for _, msg in self.history:
            if isinstance(msg, m.Diff):
                out.append(msg)
            elif isinstance(msg, m.Diffs):
                out.extend(msg.diffs)
        return out

    async def close(self) -> None:
        """Close the connection."""
        await self.ws.close()


class Board:
    """A client-side board: the view from ``Started``/``Joined``, kept current by
    applying each acknowledged move's diff (and checked against the server's hash)."""

    def __init__(self, view: dict[str, Any]) -> None:
        self.view = view

    def legal(self) -> list[str]:
        """The legal moves (from a stand-in game built from the view)."""
        import engine

        return [str(mv) for mv in engine.game_from_view(self.view).legal_moves()]

    def apply(self, move: str, revealed: list[tuple[int, str]], expect_hash: int) -> None:
        """Apply an accepted move and check the state hash."""
        import engine

        self.view = engine.apply_diff(self.view, engine.Diff(move, tuple(map(tuple, revealed))))
        assert engine.view_hash(self.view) == expect_hash, "client view desynced"


async def play_moves(client: TestClient, board: Board, count: int, pick: Any,
                     check: Any = None) -> int:
    """Play up to ``count`` legal moves chosen by ``pick(list)``; returns moves played.
    ``check(reply, board)``, if given, is called after each accepted move is applied."""
    played = 0
    for _ in range(count):
        legal = board.legal()
        if not legal:
            break
        move = pick(legal)
        reply = await client.move(move)
        assert isinstance(reply, m.Accepted), reply
        board.apply(move, reply.revealed, reply.hash)
        if check is not None:
            check(reply, board)
        played += 1
    return played


async def start_and_resign(players: list[TestClient]) -> None:
    """Every player says ready, gets ``Started`` and resigns at once: the race ends
    (with no move) and its ``Results`` follow."""
    for client in players:
        await client.send(m.Ready())
    for client in players:
        await client.expect(m.Started)
        await client.send(m.Resign())


def lasting_move(game: Any, rng: Any) -> str:
    """A random legal move of ``game`` (an ``engine.Game``) after which it is neither won
    nor stuck: a race that must keep running for a test."""
    moves = [str(mv) for mv in game.legal_moves()]
    rng.shuffle(moves)
    for move in moves:
        after = game.copy()
        after.play(move)
        if not after.won and not after.stuck:
            return move
    raise AssertionError("no move keeps the race going")

