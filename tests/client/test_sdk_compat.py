"""Forward compatibility: the SDK skips server message types it does not know (a newer
server may add them within protocol version 1) and still refuses malformed frames.

The peer is a real websockets server on 127.0.0.1 scripted to behave like such a newer
server; no server of ours sends unknown types, so this is the only way to exercise it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import msgpack
import pytest
from websockets.asyncio.server import ServerConnection, serve

from client_cli.sdk import RaceClient, RaceError
from protocol import PROTOCOL_VERSION, Code, decode_client, encode
from protocol import messages as M

FUTURE = msgpack.packb({"t": "weather", "sky": "clear"})  # a type this client never heard of
WELCOME = encode(M.Welcome(version=PROTOCOL_VERSION, server="future/2", node="n1",
                           server_ms=0, max_frame=4096, rate_per_s=1000.0))


def newer_server(first_frames: list[bytes]) -> Callable[[ServerConnection], object]:
    async def handler(ws: ServerConnection) -> None:
        hello = decode_client(await ws.recv())  # type: ignore[arg-type]
        assert isinstance(hello, M.Hello)
        for frame in first_frames:
            await ws.send(frame)
        async for data in ws:
            message = decode_client(data)  # type: ignore[arg-type]
            if isinstance(message, M.Ping):
                await ws.send(FUTURE)
                await ws.send(encode(M.Pong(server_ms=1, nonce=message.nonce)))
    return handler


@pytest.fixture
async def url_for() -> AsyncIterator[Callable[[list[bytes]], object]]:
    servers = []

    async def start(first_frames: list[bytes]) -> str:
        server = await serve(newer_server(first_frames), "127.0.0.1", 0)
        servers.append(server)
        port = next(iter(server.sockets)).getsockname()[1]
        return f"ws://127.0.0.1:{port}"

    yield start
    for server in servers:
        server.close()
        await server.wait_closed()


async def test_unknown_message_types_are_skipped(url_for) -> None:  # type: ignore[no-untyped-def]
    url = await url_for([FUTURE, WELCOME, FUTURE])
    client = RaceClient(url, "ann", reconnect=False)
    welcome = await client.connect()
    try:
        assert welcome.server == "future/2"
        assert await client.ping() >= 0  # a Pong behind an unknown frame still answers
    finally:
        await client.close()


async def test_a_malformed_frame_is_still_an_error(url_for) -> None:  # type: ignore[no-untyped-def]
    url = await url_for([b"\xc1"])  # 0xc1: never used in MessagePack
    client = RaceClient(url, "ann", reconnect=False)
    with pytest.raises(RaceError) as info:
        await client.connect()
    assert info.value.code == Code.BAD_FRAME
