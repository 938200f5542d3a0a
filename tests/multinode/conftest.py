"""Fixtures for the multi-node tests: ``nodes(url, n)`` starts ``n`` real ``solrace
serve`` processes on one store URL; all are stopped (SIGTERM, then SIGKILL) at the end,
and their logs are printed when a test fails."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from .harness import Node

NodeFactory = Callable[[str, int], Awaitable[list[Node]]]


@pytest.fixture
async def nodes(tmp_path: Path) -> AsyncIterator[NodeFactory]:
    """``await nodes(redis_url, n)`` → ``n`` started nodes (names n1, n2, ...)."""
    started: list[Node] = []

    async def start(url: str, count: int) -> list[Node]:
        batch = [Node(url, tmp_path, f"n{len(started) + i + 1}") for i in range(count)]
        started.extend(batch)
        await asyncio.gather(*(node.start() for node in batch))
        return batch

    yield start
    await asyncio.gather(*(node.stop() for node in started))
    for node in started:
        print(f"----- {node.name} log -----\n{node.log()[-4000:]}")
