"""The browser client's files on the websocket port (server/http_static.py): routes,
caching headers, the Content-Security-Policy, 404s, the websocket upgrade beside them,
the packaging of every static file and the size budget of the page's own code."""

from __future__ import annotations

import asyncio
import fnmatch
import re
import tomllib
from pathlib import Path

from protocol import messages as m
from server.app import Server

from .client import TestClient

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "client_web" / "static"
OWN_CODE_BUDGET = 150 * 1024  # the limit on the page's own JS + CSS


async def _get(port: int, path: str, *headers: str) -> tuple[int, dict[str, str], bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    extra = "".join(f"{h}\r\n" for h in headers)
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}Connection: close\r\n\r\n"
    writer.write(request.encode())
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    fields = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.lower(): v for k, v in fields.items()}, body


async def test_pages_and_assets_with_caching_and_csp(server: Server) -> None:
    status, headers, body = await _get(server.port, "/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert headers["cache-control"] == "no-cache" and headers["etag"]
    csp = headers["content-security-policy"]
    assert "script-src 'self';" in csp and "unsafe" not in csp
    assert "frame-ancestors 'none'" in csp
    # No inline script or style in the page: every script is a file of this origin.
    page = body.decode()
    assert "<style" not in page and " style=" not in page
    assert all(re.search(r'src="/s/', tag) for tag in re.findall(r"<script[^>]*>", page))
    build = re.search(r'src="/s/([0-9a-f]+)/app\.js"', page)
    assert build is not None
    status, headers, body = await _get(server.port, f"/s/{build.group(1)}/app.js")
    assert status == 200 and headers["content-type"].startswith("text/javascript")
    assert "immutable" in headers["cache-control"]
    assert body == (STATIC / "app.js").read_bytes()
    # A revalidation with the ETag costs no body.
    status, _, body = await _get(server.port, f"/s/{build.group(1)}/app.js",
                                 f"If-None-Match: {headers['etag']}")
    assert (status, body) == (304, b"")
    vendored = f"/s/{build.group(1)}/vendor/msgpack/index.mjs"
    assert (await _get(server.port, vendored))[0] == 200


async def test_room_links_serve_the_page_and_watch_links_may_be_framed(server: Server) -> None:
    _, _, index = await _get(server.port, "/")
    for path, frame in (("/r/QX7KDP", "'none'"), ("/w/QX7KDP", "*")):
        status, headers, body = await _get(server.port, path)
        assert (status, body) == (200, index)
        assert f"frame-ancestors {frame}" in headers["content-security-policy"]


async def test_unknown_paths_are_404(server: Server) -> None:
    for path in ("/nope", "/s/000000000000/app.js", "/r/", "/r/bad.code",
                 "/s/../pyproject.toml", "/w/a/b"):
        status, headers, _ = await _get(server.port, path)
        assert status == 404, path
        assert headers["cache-control"] == "no-store"


async def test_websocket_upgrade_still_works_beside_the_page(server: Server) -> None:
    client = await TestClient.connect(server.url + "/", "ws")  # same path as the page
    await client.send(m.ListRooms())
    assert isinstance(await client.expect(m.RoomList), m.RoomList)
    await client.close()


def test_every_static_file_is_package_data() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    globs = config["tool"]["setuptools"]["package-data"]["client_web"]
    files = [p.relative_to(STATIC.parent).as_posix() for p in STATIC.rglob("*") if p.is_file()]
    assert files
    missing = [f for f in files if not any(fnmatch.fnmatch(f, g) and
                                           f.count("/") == g.count("/") for g in globs)]
    assert missing == []


def test_the_pages_own_code_fits_its_budget() -> None:
    own = [p for p in STATIC.iterdir() if p.suffix in (".js", ".css")]
    assert {p.name for p in own} >= {"app.js", "style.css"}
    assert sum(p.stat().st_size for p in own) <= OWN_CODE_BUDGET
