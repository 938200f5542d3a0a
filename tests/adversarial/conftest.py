"""Fixtures for the adversarial tests: a real ``solrace serve`` process (the attack kit's
``ServerProc``) on 127.0.0.1, stopped by its handle after the test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.attack.harness import ServerProc


@pytest.fixture
def fast_server() -> Iterator[ServerProc]:
    """A server whose rate limit lets a test client play as fast as it can."""
    server = ServerProc(extra=["--rate", "1000000", "--burst", "1000000"])
    server.start_stderr_drain()
    yield server
    server.stop()
