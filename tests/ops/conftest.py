"""Fixtures for the deployment tests: a loopback DNS server a test can re-point."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .procs import Dns


@pytest.fixture
def dns() -> Iterator[Dns]:
    """A DNS server on 127.0.0.1 (``.port``); ``dns.set(name, address)`` changes it."""
    server = Dns().start()
    yield server
    server.stop()
