"""Fixtures for the server's end-to-end tests: ``server_factory`` starts real servers
in-process on 127.0.0.1 (free ports) and stops them after the test.

The store defaults to memory. ``SOLRACE_E2E_STORE=redis`` runs the same suite against a
private Redis (the ``redis_url`` fixture of tests/conftest.py); a test can also pass
``store_url=`` to the factory explicitly (e.g. from the shared ``store_url`` fixture).
"""

from __future__ import annotations

import os
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from server.app import Server
from server.config import ONE_HOST, ServerConfig

ServerFactory = Callable[..., Awaitable[Server]]


@pytest.fixture
def e2e_store_url(request: pytest.FixtureRequest) -> str:
    """The store the e2e servers use: memory unless SOLRACE_E2E_STORE=redis."""
    if os.environ.get("SOLRACE_E2E_STORE", "memory") == "redis":
        url: str = request.getfixturevalue("redis_url")
        return url
    return ""


@pytest.fixture
async def server_factory(
    e2e_store_url: str, request: pytest.FixtureRequest
) -> AsyncIterator[ServerFactory]:
    """``await server_factory(**config)`` → a started ``Server`` (port 0 → a free port).
    Config keys are ``ServerConfig`` fields; ``store_url`` defaults to ``e2e_store_url``.
    Several servers with the same Redis URL act as several nodes of one service.
    Room seeds come from a generator seeded by the test's name, so every run of a test
    races the same deals (and different tests race different ones)."""
    servers: list[Server] = []
    seeds = random.Random(request.node.nodeid)

    async def start(**overrides: Any) -> Server:
        overrides.setdefault("store_url", e2e_store_url)
        overrides.setdefault("seed_source", lambda: seeds.getrandbits(64))
        overrides.setdefault("port", 0)
        overrides.setdefault("host", "127.0.0.1")
        for key, value in ONE_HOST.items():  # every test client is 127.0.0.1
            overrides.setdefault(key, value)
        server = Server(ServerConfig(**overrides))
        await server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.stop()


@pytest.fixture
async def server(server_factory: ServerFactory) -> Server:
    """One server with the default config, except a rate limit high enough for test
    clients that play as fast as they can (tests of the limit set their own)."""
    return await server_factory(rate_burst=100_000, rate_per_s=100_000.0)
