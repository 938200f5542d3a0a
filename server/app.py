"""The server: websockets on one port, plus ``GET /healthz`` and ``GET /metrics`` on the
same port, and a graceful shutdown.

Shutdown (SIGTERM in ``solrace serve``): stop accepting, tell every client
``Closing{shutting_down}`` after the frames already queued for it (a move being judged
finishes first: a connection handles one message at a time), wait for the writers up to
``shutdown_grace_s``, then close the store.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Callable

from prometheus_client import CONTENT_TYPE_LATEST
from websockets.asyncio.server import Server as WsServer
from websockets.asyncio.server import ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from protocol import Code

from . import http_static
from .config import ServerConfig
from .connection import Connection
from .metrics import Metrics
from .room import Room
from .store import RoomRecord, Store, open_store

log = logging.getLogger(__name__)

FrameHook = Callable[[Connection, bytes], None]


class Server:
    """A solrace node. ``await start()``, then ``url``; ``await stop()`` to shut down."""

    def __init__(self, config: ServerConfig | None = None, store: Store | None = None) -> None:
        self.config = config or ServerConfig()
        self.store: Store = store if store is not None else open_store(self.config.store_url)
        self.node_id = self.config.node_id or f"{socket.gethostname()}-{os.getpid()}"
        self.metrics = Metrics()
        self.rooms: dict[str, Room] = {}
        self._opening: dict[str, asyncio.Future[Room]] = {}
        self.connections: set[Connection] = set()
        self._handlers: set[asyncio.Task[None]] = set()
        # Tests set this to see every frame sent to every connection (leak checks).
        self.frame_hook: FrameHook | None = None
        self._ws: WsServer | None = None
        self.port = 0
        self.stopping = False
        self.solver_slot = asyncio.Semaphore(1)  # deal=winnable searches, one at a time

    @property
    def url(self) -> str:
        """``ws://host:port`` of the listening socket."""
        return f"ws://{self.config.host}:{self.port}"

    async def start(self) -> None:
        """Listen (``port`` 0 picks a free port; read ``self.port`` afterwards)."""
        config = self.config
        self._ws = await serve(
            self._handler,
            config.host,
            config.port,
            process_request=self._http,
            max_size=config.ws_max_size,
            ping_interval=config.ping_interval_s,
            ping_timeout=config.ping_timeout_s,
            close_timeout=2,
            compression=None,  # frames are small MessagePack: deflate costs more than it saves
            server_header=None,
        )
        self.port = self._ws.sockets[0].getsockname()[1]
        log.info("node %s listening on %s", self.node_id, self.url)

    async def _handler(self, ws: ServerConnection) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        conn = Connection(self, ws)
        self.connections.add(conn)
        try:
            if self.stopping:
                conn.close_with(Code.SHUTTING_DOWN, "the server is shutting down")
            await conn.run()
        finally:
            self.connections.discard(conn)
            self._handlers.discard(task)

    async def _http(self, connection: ServerConnection, request: Request) -> Response | None:
        """Plain HTTP on the websocket port: health, metrics and the browser client's
        files; None lets a websocket handshake proceed."""
        path = request.path.split("?", 1)[0]
        if path == "/healthz":
            try:
                ok = await asyncio.wait_for(self.store.healthy(), 2.0)
            except Exception:
                ok = False
            if ok and not self.stopping:
                return connection.respond(200, "ok\n")
            return connection.respond(503, "unhealthy\n" if not ok else "shutting down\n")
        if path == "/metrics":
            headers = Headers([("Content-Type", CONTENT_TYPE_LATEST)])
            return Response(200, "OK", headers, self.metrics.render())
        if (page := http_static.respond(request)) is not None:  # the browser client
            return page
        if len(self.connections) >= self.config.max_connections or self.stopping:
            # Refused before the upgrade: a load balancer or client retries elsewhere.
            return connection.respond(503, "server full or shutting down; retry\n")
        return None

    # ------------------------------------------------------------------ rooms
    async def local_room(self, record: RoomRecord) -> Room:
        """This node's ``Room`` for ``record.code``, subscribed (opened once, shared)."""
        room = self.rooms.get(record.code)
        if room is not None and not room.closed:
            return room
        opening = self._opening.get(record.code)
        if opening is not None:
            return await asyncio.shield(opening)
        future: asyncio.Future[Room] = asyncio.get_running_loop().create_future()
        self._opening[record.code] = future
        try:
            room = Room(self, record)
            await room.open()
            self.rooms[record.code] = room
            self.metrics.rooms.set(len(self.rooms))
            future.set_result(room)
            return room
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: nobody else may be waiting
            raise
        finally:
            del self._opening[record.code]

    async def release_room(self, room: Room) -> None:
        """Forget ``room`` on this node if it has nothing more to do here."""
        if room.idle and self.rooms.get(room.code) is room:
            del self.rooms[room.code]
            self.metrics.rooms.set(len(self.rooms))
            await room.close()

    # ------------------------------------------------------------------ shutdown
    async def stop(self) -> None:
        """Graceful shutdown (see the module docstring). Safe to call twice."""
        if self.stopping:
            return
        self.stopping = True
        if self._ws is not None:
            self._ws.close(close_connections=False)  # stop accepting
        for conn in list(self.connections):
            conn.close_with(Code.SHUTTING_DOWN, "the server is shutting down: reconnect and resume")
        handlers = list(self._handlers)
        if handlers:
            _, pending = await asyncio.wait(handlers, timeout=self.config.shutdown_grace_s + 1)
            for task in pending:
                task.cancel()
        if self._ws is not None:
            self._ws.close()
            await self._ws.wait_closed()
        for room in list(self.rooms.values()):
            await room.close()
        self.rooms.clear()
        await self.store.close()
        log.info("node %s stopped", self.node_id)
