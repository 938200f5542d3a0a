"""Fixtures for the client tests: real servers started in-process on 127.0.0.1 (free
ports, in-memory store), stopped after each test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from server.app import Server
from server.config import ONE_HOST, ServerConfig

StartServer = Callable[..., Awaitable[Server]]


@pytest.fixture
async def start_server() -> AsyncIterator[StartServer]:
    """``await start_server(seed=N, **config)`` → a started ``Server``. ``seed`` fixes
    every room's deal (the server's test hook); the rate limit is high so test clients
    are not slowed down unless a test sets its own."""
    servers: list[Server] = []

    async def start(seed: int | None = None, **overrides: Any) -> Server:
        overrides.setdefault("host", "127.0.0.1")
        for key, value in ONE_HOST.items():  # every test client is 127.0.0.1
            overrides.setdefault(key, value)
        overrides.setdefault("port", 0)
        overrides.setdefault("rate_per_s", 10_000.0)
        overrides.setdefault("rate_burst", 10_000)
        if seed is not None:
            overrides["seed_source"] = lambda: seed
        server = Server(ServerConfig(**overrides))
        await server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.stop()
