"""The process around the rooms: HTTP health and metrics on the websocket port, graceful
shutdown in-process and as ``solrace serve`` under SIGTERM, the abandon grace."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys

import pytest
from websockets.exceptions import InvalidStatus

from protocol import PROTOCOL_VERSION
from protocol import messages as m
from server.app import Server

from .client import Board, TestClient, play_moves
from .conftest import ServerFactory


async def _http_get(port: int, path: str) -> tuple[int, str]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    head, _, body = data.decode().partition("\r\n\r\n")
    return int(head.split()[1]), body


async def test_health_and_metrics(server: Server) -> None:
    status, body = await _http_get(server.port, "/healthz")
    assert (status, body) == (200, "ok\n")
    status, text = await _http_get(server.port, "/metrics")
    assert "solrace_moves_accepted_total 0.0" in text and "solrace_frames_in_total 0.0" in text
    one = await TestClient.connect(server.url, "one")
    await one.create(variant="portuguese", countdown_s=0)
    await one.send(m.Ready())
    board = Board((await one.expect(m.Started)).boards[0].view)
    await play_moves(one, board, 3, lambda legal: legal[0])
    await one.move("1>1")  # a pile onto itself: never legal
    status, text = await _http_get(server.port, "/metrics")
    assert status == 200
    assert "solrace_moves_accepted_total 3.0" in text
    assert 'solrace_moves_rejected_total{code="illegal_move"} 1.0' in text
    assert "solrace_move_ack_seconds_count 3.0" in text
    assert "solrace_connections 1.0" in text and "solrace_rooms 1.0" in text
    # hello, create, ready, 3 moves and the bad one, as counted by the client that sent them
    assert one.sent == 7 and f"solrace_frames_in_total {one.sent}.0" in text


async def test_stop_tells_clients_and_finishes_writes(server_factory: ServerFactory) -> None:
    server = await server_factory()
    one = await TestClient.connect(server.url, "one")
    await one.create(variant="spanish")
    watcher = await TestClient.connect(server.url, "w")
    await server.stop()
    for client in (one, watcher):
        closing = await client.expect(m.Closing)
        assert closing.code == "shutting_down"
        assert await client.closed()
    with pytest.raises(OSError):  # stop() returns once the listener is closed
        await _http_get(server.port, "/healthz")


async def test_an_offline_seat_is_resigned_after_the_grace(server_factory: ServerFactory) -> None:
    server = await server_factory(abandon_after_s=0.2)
    one = await TestClient.connect(server.url, "one")
    two = await TestClient.connect(server.url, "two")
    joined = await one.create(variant="spanish", countdown_s=0)
    await two.join(joined.code)
    await one.send(m.Ready())
    await two.send(m.Ready())
    await one.expect(m.Started)
    await two.close()
    progress = await one.expect(m.Progress)
    assert (progress.seat, progress.status) == (2, "resigned")
    await one.send(m.Resign())
    results = await one.expect(m.Results)
    assert [e.status for e in sorted(results.ranking, key=lambda e: e.seat)] == [
        "resigned", "resigned"]


async def test_solrace_serve_prints_its_address_and_exits_0_on_sigterm() -> None:
    env = {**os.environ, "SOLRACE_REDIS_URL": ""}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client_cli.main", "serve", "--port", "0", "--rate", "40",
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 20)).decode()
        assert line.startswith("solrace listening on ws://127.0.0.1:"), line
        url = line.split()[-1]
        raw = await TestClient.connect(url, "r", hello=False)
        await raw.send(m.Hello(version=PROTOCOL_VERSION, name="r"))
        assert (await raw.expect(m.Welcome)).rate_per_s == 40.0  # --rate reaches clients
        client = await TestClient.connect(url, "c")
        await client.create(variant="fortress")
        proc.send_signal(signal.SIGTERM)
        closing = await client.expect(m.Closing)
        assert closing.code == "shutting_down"
        assert await asyncio.wait_for(proc.wait(), 20) == 0
        rest = await proc.stdout.read()
        assert rest == b""  # exactly one line on stdout
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_connections_beyond_the_limit_are_refused(server_factory: ServerFactory) -> None:
    server = await server_factory(max_connections=2)
    first = await TestClient.connect(server.url, "a")
    await TestClient.connect(server.url, "b")
    with pytest.raises(InvalidStatus) as exc:
        await TestClient.connect(server.url, "c")
    assert exc.value.response.status_code == 503
    await first.send(m.Ping(nonce=1))  # the others are unaffected
    assert (await first.expect(m.Pong)).nonce == 1
