"""Fixtures for the browser tests: one real solrace server (in-process, on its own loop
in a thread, on 127.0.0.1) and one headless Debian chromium driven by Playwright, both
shared by the whole session; a fresh browser context (its own storage) per page.

The chromium binary is the system's (``/usr/bin/chromium``: Playwright's own browser
download is not reachable here); ``scripts/_venv.sh`` installs it when missing. Without
it the browser tests are skipped with that reason, never silently passed.

SDK clients (the terminal client's library) run on an asyncio loop in a background
thread (``sdk.run(coro)``), because Playwright's sync API owns the test's thread.
Screenshots go to ``SOLRACE_WEB_SHOTS`` (default: the session's pytest temp dir).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
from collections.abc import Coroutine, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

import pytest

import engine
from server.app import Server
from server.config import ONE_HOST, ServerConfig

CHROMIUM = os.environ.get("SOLRACE_CHROMIUM", "/usr/bin/chromium")
T = TypeVar("T")


def playable_seeds(count: int) -> list[int]:
    """Seeds whose deal, in every variant, has a legal move and stays unstuck after any
    first move: the tests play the first legal moves they find, so a deal that is stuck
    at once would end a race before the test could look at it."""
    seeds = []
    seed = 0
    while len(seeds) < count:
        seed += 1
        games = [engine.new_game(v, seed=seed) for v in engine.VARIANTS]
        if all(_lively(game) for game in games):
            seeds.append(seed)
    return seeds


def _lively(game: engine.Game) -> bool:
    moves = game.legal_moves()
    for move in moves:
        after = game.copy()
        after.play(move)
        if after.stuck:
            return False
    return bool(moves)


class Node:
    """The test server and the loop it runs on."""

    def __init__(self, server: Server, loop: SdkLoop) -> None:
        self.server, self.loop = server, loop
        self.base = f"http://127.0.0.1:{server.port}"

    def drop(self, name: str) -> int:
        """Close, from the server's side, every websocket of the player called ``name``
        (a dropped network, as the page sees it); returns how many were closed."""

        async def close() -> int:
            conns = [c for c in self.server.connections if c.name == name]
            for conn in conns:
                await conn.ws.close(1011, "test: dropped")
            return len(conns)

        return self.loop.run(close())


@pytest.fixture(scope="session")
def web_node() -> Iterator[Node]:
    """A real solrace ``Server`` on 127.0.0.1, on its own asyncio loop in a thread (rate
    limit raised so SDK bots do not pace themselves). Room seeds cycle through
    ``playable_seeds`` so every run races the same deals."""
    seeds = itertools.cycle(playable_seeds(8))
    config = ServerConfig(host="127.0.0.1", port=0, rate_burst=100_000, rate_per_s=100_000.0,
                          seed_source=lambda: next(seeds), **ONE_HOST)
    loop = SdkLoop()
    server = Server(config)
    loop.run(server.start())
    try:
        yield Node(server, loop)
    finally:
        loop.run(server.stop())
        loop.stop()


@pytest.fixture(scope="session")
def web_server(web_node: Node) -> str:
    """``http://127.0.0.1:PORT`` of the test server."""
    return web_node.base


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    """One headless chromium for tests/web. Package scope, not session: Playwright's sync
    API runs its event loop in the main thread while it is open, so it must be closed
    whenever the (randomly ordered) suite moves on to asyncio tests elsewhere."""
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: scripts/check installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=args, headless=True)
        yield chromium
        chromium.close()


class Pages:
    """Opens pages, each in its own context (its own sessionStorage and localStorage: a
    separate person), closes them after the test, and fails the test on any page error."""

    def __init__(self, browser: Any, base: str, shots: Path) -> None:
        self.browser, self.base, self.shots = browser, base, shots
        self.contexts: list[Any] = []
        self.errors: list[str] = []

    def open(self, path: str = "/", *, width: int = 1100, height: int = 850,
             name: str | None = None) -> Any:
        """A new page at ``path`` (its own context); ``name`` is put in localStorage."""
        context = self.browser.new_context(viewport={"width": width, "height": height})
        self.contexts.append(context)
        if name is not None:
            context.add_init_script(f"localStorage.setItem('solrace.name', {name!r});")
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        page.on("dialog", lambda dialog: dialog.accept())
        page.goto(self.base + path)
        return page

    def shot(self, page: Any, name: str) -> Path:
        """Save a screenshot of ``page`` as ``name``.png."""
        path = self.shots / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    def close(self) -> None:
        for context in self.contexts:
            context.close()


@pytest.fixture(scope="session")
def shots_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the tests' screenshots go."""
    folder = os.environ.get("SOLRACE_WEB_SHOTS")
    path = Path(folder) if folder else tmp_path_factory.mktemp("web-shots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def pages(browser: Any, web_server: str, shots_dir: Path) -> Iterator[Pages]:
    """Page factory for one test (see ``Pages``)."""
    opened = Pages(browser, web_server, shots_dir)
    yield opened
    opened.close()
    assert opened.errors == [], f"errors in the page: {opened.errors}"


class SdkLoop:
    """An asyncio loop in a thread, for the Python SDK clients a test drives."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        """Run ``coro`` on the SDK loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def spawn(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        """Start ``coro`` on the SDK loop; the future gives its result later."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


@pytest.fixture(scope="session")
def sdk() -> Iterator[SdkLoop]:
    """The session's SDK loop."""
    loop = SdkLoop()
    yield loop
    loop.stop()


@pytest.fixture(scope="session")
def ws_url(web_server: str) -> str:
    """The websocket URL of the test server (same host and port as the page)."""
    return "ws://" + web_server.removeprefix("http://")
