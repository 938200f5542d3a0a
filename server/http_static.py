"""The browser client's files, served as plain HTTP on the websocket port.

``respond(request)`` is called by ``Server``'s ``process_request`` hook for every request;
it answers page loads and leaves websocket upgrades (``Upgrade: websocket``, any path, as
before) to the handshake by returning None.

- ``/``, ``/r/CODE`` (join a room), ``/w/CODE`` (watch a room) → the app's HTML; the page
  reads the path itself. ``Cache-Control: no-cache`` with an ``ETag``: a browser always
  revalidates the page (a 304 when unchanged), so a new release is seen at once.
- ``/s/BUILD/...`` → the app's scripts, styles and the vendored MessagePack library.
  ``BUILD`` is a digest of every static file, so an asset's URL changes whenever any file
  does and the assets can be cached for a year (``immutable``) without a build step: the
  page's relative module imports inherit the versioned prefix.
- Anything else: 404. Files are read once from the installed package (package data of
  ``client_web``) into memory, so a request never touches the filesystem and no path a
  client sends can name a file outside the static tree.

Every response carries a strict Content-Security-Policy: scripts, styles and connections
only from this origin, no inline script or style, no plugins; ``/w/`` pages may be framed
by any site (embedding a race), the others by none.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from websockets.datastructures import Headers
from websockets.http11 import Request, Response

# The page's own markers, replaced when the files are loaded.
_BUILD_MARKER = b"__BUILD__"
_PRELOAD_MARKER = b"<!-- __PRELOAD__ -->\n"
_TYPES = {
    "html": "text/html; charset=utf-8",
    "js": "text/javascript; charset=utf-8",
    "mjs": "text/javascript; charset=utf-8",
    "css": "text/css; charset=utf-8",
    "svg": "image/svg+xml",
    "png": "image/png",
}
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors {frame}"
)
_APP_PATH = re.compile(r"^/(?:(?:r|w)/[A-Za-z0-9_-]{1,16}/?)?$")
_ASSET_CACHE = "public, max-age=31536000, immutable"  # the URL changes with the content


@dataclass(frozen=True)
class _File:
    body: bytes
    content_type: str
    etag: str


@dataclass(frozen=True)
class Site:
    """The static files, loaded: ``index`` (the page) and ``assets`` by path under
    ``/s/BUILD/``."""

    build: str
    index: _File
    assets: dict[str, _File]


def _file(body: bytes, name: str) -> _File:
    kind = _TYPES.get(name.rsplit(".", 1)[-1], "application/octet-stream")
    return _File(body, kind, '"' + hashlib.sha256(body).hexdigest()[:20] + '"')


@lru_cache(maxsize=1)
def site() -> Site:
    """The client's files from the installed ``client_web`` package (read once)."""
    root = resources.files("client_web") / "static"
    raw: dict[str, bytes] = {}
    pending = [("", root)]
    while pending:
        prefix, folder = pending.pop()
        for entry in folder.iterdir():
            if entry.is_dir():
                pending.append((f"{prefix}{entry.name}/", entry))
            elif not entry.name.startswith("."):
                raw[prefix + entry.name] = entry.read_bytes()
    digest = hashlib.sha256()
    for name in sorted(raw):
        digest.update(name.encode() + b"\0" + raw[name] + b"\0")
    build = digest.hexdigest()[:12]
    # Every module is announced up front, so the browser fetches them in parallel instead
    # of discovering the import graph one level at a time.
    preload = "".join(f'<link rel="modulepreload" href="/s/{build}/{name}">\n'
                      for name in sorted(raw) if name.endswith((".js", ".mjs")))
    page = raw.pop("index.html").replace(_PRELOAD_MARKER, preload.encode())
    page = page.replace(_BUILD_MARKER, build.encode())
    return Site(build, _file(page, "index.html"),
                {name: _file(body, name) for name, body in raw.items()})


def is_upgrade(request: Request) -> bool:
    """True for a websocket handshake (``Upgrade: websocket``)."""
    return any(v.strip().lower() == "websocket"
               for value in request.headers.get_all("Upgrade") for v in value.split(","))


def respond(request: Request) -> Response | None:
    """The HTTP response for a page or asset request; None for a websocket upgrade."""
    if is_upgrade(request):
        return None
    path = request.path.split("?", 1)[0]
    files = site()
    frame = "'none'"
    if _APP_PATH.match(path):
        found: _File | None = files.index
        cache = "no-cache"
        if path.startswith("/w/"):
            frame = "*"  # spectator pages are made to be embedded
    else:
        prefix = f"/s/{files.build}/"
        found = files.assets.get(path[len(prefix):]) if path.startswith(prefix) else None
        cache = _ASSET_CACHE
    headers = Headers([
        ("Content-Security-Policy", _CSP.format(frame=frame)),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),  # room codes live in the path
    ])
    if found is None:
        headers["Content-Type"] = "text/plain; charset=utf-8"
        headers["Cache-Control"] = "no-store"
        return Response(404, "Not Found", headers, b"not found\n")
    headers["Cache-Control"] = cache
    headers["ETag"] = found.etag
    if found.etag in request.headers.get("If-None-Match", ""):
        return Response(304, "Not Modified", headers, b"")
    headers["Content-Type"] = found.content_type
    headers["Content-Length"] = str(len(found.body))
    return Response(200, "OK", headers, found.body)
