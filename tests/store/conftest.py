"""Store fixtures: the same contract tests run on every backend.

``store`` is parametrized: ``memory`` (MemoryStore), ``redis`` (a private standalone
redis-server) and ``cluster`` (a private 3-master Redis Cluster). ``store_pair`` gives two
store instances on the same backend, as two server nodes would have (for memory: one
instance twice, since memory is one process by definition).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from server.store import Store, open_store

BACKENDS = ["memory", "redis", "cluster"]


def _url(request: pytest.FixtureRequest) -> str:
    if request.param == "memory":
        return ""
    if request.param == "redis":
        url: str = request.getfixturevalue("redis_url")
        return url
    return str(request.getfixturevalue("redis_cluster").url)


@pytest.fixture(params=BACKENDS)
async def store(request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    """One store on each backend."""
    opened = open_store(_url(request))
    yield opened
    await opened.close()


@pytest.fixture(params=BACKENDS)
async def store_pair(request: pytest.FixtureRequest) -> AsyncIterator[tuple[Store, Store]]:
    """Two stores on the same backend: two "nodes"."""
    url = _url(request)
    first = open_store(url)
    second = open_store(url) if url else first
    yield first, second
    await first.close()
    if second is not first:
        await second.close()
