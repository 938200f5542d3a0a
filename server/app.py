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
from collections.abc import Callable, Coroutine
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST
from websockets.asyncio.server import Server as WsServer
from websockets.asyncio.server import ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from protocol import Code

from . import gctune, http_static, logs, race
from .addresses import AddressBook, client_address, is_trusted, parse_networks
from .admission import Turns
from .config import ServerConfig
from .connection import Connection
from .core.machine import Due
from .credits import Handshakes
from .guard import (
    Admitted,
    DoorTurns,
    GuardedConnection,
    connection_builder,
    doors,
    guarded,
)
from .keepalive import Keepalive
from .lobby import LobbyGate
from .metrics import Metrics, instrument_store
from .room import Room
from .store import Deadline, Durability, RoomRecord, Store, StoreUnavailable, open_store
from .sweeper import Sweeper
from .verdicts import VerdictPool

# Part of the public entry point (with Server and ServerConfig): ``solrace serve`` sets up
# the process's log lines through it rather than importing server internals.
configure_logging = logs.configure

log = logging.getLogger(__name__)
# Each stop step that waits on others (websocket closes) waits at most this long: past
# it the node goes on stopping rather than hang a drain (websockets' own close timeout
# is 10 s per connection, so this is a backstop, not the usual path).
STOP_STEP_S = 15.0
CLOSE_TIMEOUT_S = 2.0  # websockets' closing handshake, before the TCP connection is dropped

FrameHook = Callable[[Connection, bytes], None]


class VolatileStore(RuntimeError):
    """The store may lose acknowledged moves on a restart and the operator did not
    accept that (``ServerConfig.allow_volatile_store``); the message names the fix."""


class Server:
    """A solrace node. ``await start()``, then ``url``; ``await stop()`` to shut down."""

    def __init__(self, config: ServerConfig | None = None, store: Store | None = None) -> None:
        self.config = config or ServerConfig()
        self.node_id = self.config.node_id or f"{socket.gethostname()}-{os.getpid()}"
        self.metrics = Metrics(self.node_id, self, self.config.clock)
        self.store: Store = instrument_store(
            store if store is not None
            else open_store(self.config.store_url, self.config.redis_wait_replicas),
            self.metrics)
        self.rooms: dict[str, Room] = {}
        self._opening: dict[str, asyncio.Future[Room]] = {}
        self.connections: set[Connection] = set()
        self.admitted = 0  # TCP connections admitted (handshakes included) and not ended
        self.addresses = AddressBook(self.config)  # per client address caps
        # At most lobby_concurrency lobby operations in progress at once (lobby.py).
        self.lobby_gate = LobbyGate(self.config.lobby_concurrency)
        # the node's rate of admitted connections, whatever their address (admit)
        if not (self.config.handshakes_per_s > 0 and self.config.handshake_burst >= 1):
            # either would refuse every connection for ever: a setting, not a policy
            raise ValueError("handshakes_per_s must be > 0 and handshake_burst >= 1, not "
                             f"{self.config.handshakes_per_s} and "
                             f"{self.config.handshake_burst}")
        self.handshakes = Handshakes(self.config.handshake_burst,
                                     self.config.handshakes_per_s, self.config.monotonic)
        self.trusted_proxies = parse_networks(self.config.trusted_proxies)
        self.door_turns: DoorTurns | None = None  # made with the listening socket (start)
        self._handlers: set[asyncio.Task[None]] = set()
        # Tests set this to see every frame sent to every connection (leak checks).
        self.frame_hook: FrameHook | None = None
        self._ws: WsServer | None = None
        self.port = 0
        self.stopping = False
        self.durability = Durability(None, "not checked yet")
        self.solver_slot = asyncio.Semaphore(1)  # deal=winnable searches, one at a time
        config = self.config
        self.verdicts = VerdictPool(config, self.store, self.metrics)
        self.sweeper = Sweeper(
            self.store, config.clock, self.fire_deadline, interval_s=config.sweep_interval_s,
            lease_ms=config.deadline_lease_ms, batch=config.sweep_batch,
            max_firing=config.max_firing_deadlines, max_wakes=config.max_deadline_wakes,
        )
        # One timer pings every connection (keepalive.py) instead of a websockets task
        # per connection (~1.7 KiB each): serve() below gets ping_interval=None.
        self.keepalive = (
            None if config.ping_interval_s is None else
            Keepalive(self._pingable, config.ping_interval_s, config.ping_timeout_s))

    def _pingable(self) -> list[GuardedConnection]:
        """The connections the keepalive pings: every websocket handed to a handler."""
        return [c.ws for c in self.connections if isinstance(c.ws, GuardedConnection)]

    @property
    def url(self) -> str:
        """``ws://host:port`` of the listening socket."""
        return f"ws://{self.config.host}:{self.port}"

    async def start(self) -> None:
        """Check the store's durability, then listen (``port`` 0 picks a free port; read
        ``self.port`` afterwards). Raises ``VolatileStore`` for a store that may lose
        acknowledged moves, unless ``allow_volatile_store``."""
        config = self.config
        await self._check_durability()
        # ping budget and write-buffer cap (server/guard.py)
        connection_class = guarded(config, self)
        ws = serve(
            self._handler,
            config.host,
            config.port,
            process_request=self._http,
            max_size=config.ws_max_size,
            ping_interval=None,  # self.keepalive pings, from one timer for the node
            ping_timeout=None,
            close_timeout=CLOSE_TIMEOUT_S,
            compression=None,  # frames are small MessagePack: deflate costs more than it saves
            server_header=None,
            create_connection=connection_class,
        )
        # Admission before websockets builds anything (server/guard.py, ``Door``): the
        # socket listens with a door per accepted connection instead of websockets'
        # own factory, and only an admitted one gets websockets' objects, built as
        # serve() would build them (the same settings as above).
        build = connection_builder(connection_class, ws, max_size=config.ws_max_size,
                                   close_timeout=CLOSE_TIMEOUT_S)

        async def listen() -> asyncio.Server:
            loop = asyncio.get_running_loop()
            # Door work in bounded turns per loop iteration (server/admission.py)
            self.door_turns = DoorTurns(
                Turns(config.handshakes_per_turn, loop.call_soon),
                Turns(config.handshake_refusals_per_turn, loop.call_soon))
            return await loop.create_server(doors(self, build, self.door_turns),
                                            config.host, config.port)

        ws.create_server = listen
        self._ws = await ws
        self.port = self._ws.sockets[0].getsockname()[1]
        self.sweeper.start()
        if self.keepalive is not None:
            self.keepalive.start()
        self.metrics.start()  # GC and event-loop lag probes
        log.info("node %s listening on %s", self.node_id, self.url)

    async def _check_durability(self) -> None:
        try:
            found = await self.store.durability()
        except StoreUnavailable as exc:
            # The store is down now: serve (requests get store_unavailable meanwhile),
            # but say so until a start finds it durable.
            found = Durability(None, f"not checked, the store was unreachable: {exc}")
        self.durability = found
        self.metrics.store_durable.set(1 if found.durable else 0)
        if found.durable is False and not self.config.allow_volatile_store:
            raise VolatileStore(
                f"the store does not persist acknowledged moves ({found.detail}): a Redis "
                "restart would lose moves players were told were stored, and the races "
                "they were in. Fix: turn on AOF on every Redis master (appendonly yes, "
                "appendfsync everysec or always; CONFIG SET appendonly yes for a running "
                "server), or start with --allow-volatile-store to accept the risk "
                "(/healthz then says degraded)."
            )
        if not found.durable:
            log.warning("store durability: %s", found.detail)

    async def _handler(self, ws: ServerConnection) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        conn = Connection(self, ws)
        headers = ws.request.headers if ws.request else None
        conn.address = client_address(ws.remote_address, headers, self.trusted_proxies)
        logs.bind_request(headers or {}, ws.remote_address, conn.id)
        # The handshake's headers (two Headers, a list per header: ~45 tracked objects,
        # ~2.5 KiB) are read only above, but websockets keeps them for the connection's
        # life (the request also in its parser generator's frame; and ``ws.request``
        # must stay set: None means "handshake not received" to websockets). Emptied,
        # an idle connection is that much smaller (conns row, docs/BENCHMARKS.md).
        if headers is not None:
            headers.clear()
        ws.response = None
        self.connections.add(conn)
        self.addresses.add(conn.address, conn)
        try:
            if self.stopping:
                conn.close_with(Code.SHUTTING_DOWN, "the server is shutting down")
            await conn.run()
        finally:
            log.debug("connection closed")  # tagged with conn, request_id, peer, room, seat
            self.connections.discard(conn)
            self.addresses.remove(conn.address, conn)
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
                if not self.durability.durable:  # serving, but a restart may lose moves
                    return connection.respond(200, f"degraded: {self.durability.detail}\n")
                return connection.respond(200, "ok\n")
            return connection.respond(503, "unhealthy\n" if not ok else "shutting down\n")
        if path == "/metrics":
            headers = Headers([("Content-Type", CONTENT_TYPE_LATEST)])
            return Response(200, "OK", headers, self.metrics.render())
        if (page := http_static.respond(request)) is not None:  # the browser client
            return page
        if self.admitted > self.config.max_connections or self.stopping:
            # Refused before the upgrade: a load balancer or client retries elsewhere.
            # (Checked here, not at admission: /healthz must answer on a full node.)
            return connection.respond(503, "server full or shutting down; retry\n")
        if isinstance(connection, GuardedConnection) and connection.charged is None:
            # From a trusted proxy: the client's address is in the request, so its
            # allowance is charged here rather than at admission.
            address = client_address(connection.remote_address, request.headers,
                                     self.trusted_proxies)
            if not self.addresses.admit(address):
                return connection.respond(429, "too many connections from your address\n")
            connection.charged = address
        return None

    def admit(self, conn: Admitted, peer: Any) -> int | None:
        """The gate (server/guard.py ``Door``), as a TCP connection is accepted, before
        websockets builds anything for it, whatever it will ask for: 503 while stopping,
        429 past the peer address's allowance (addresses.py), 503 past the node's
        handshake budget (``handshakes_per_s``, credits.py ``Handshakes``: an address's
        refusal spends none of it). A trusted proxy's connections take from the budget
        as light ones (the client behind is not known yet) and are charged to the
        forwarded address in ``_http``. O(1)."""
        if self.stopping:
            return 503
        ip = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        if self.trusted_proxies and is_trusted(ip, self.trusted_proxies):
            if not self.handshakes.take(0):
                return 503
        else:
            recent = self.addresses.allowed(ip)
            if recent is None:  # one address may not take the node
                return 429
            if not self.handshakes.take(recent):  # nor many addresses at once
                return 503
            self.addresses.charge(ip)
            conn.charged = ip
        self.admitted += 1
        return None

    def release(self, conn: Admitted) -> None:
        """An admitted connection ended: its slot (and its address's) is free."""
        self.admitted -= 1
        if conn.charged is not None:
            self.addresses.release(conn.charged)

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

    def wake_at(self, at_ms: int) -> None:
        """Sweep deadlines at ``at_ms`` (a room of this node armed one for then)."""
        self.sweeper.wake_at(at_ms)

    async def fire_deadline(self, deadline: Deadline) -> None:
        """Feed a due deadline to its room's core (the room is opened on this node for
        the time it takes; a room that is gone has nothing left to do)."""
        record = await self.store.get_room(deadline.code)
        if record is None:
            return
        room = await self.local_room(record)
        try:
            await race.run(room, Due(deadline.kind))
        finally:
            await self.release_room(room)

    async def release_room(self, room: Room) -> None:
        """Forget ``room`` on this node if it has nothing more to do here."""
        if room.idle and self.rooms.get(room.code) is room:
            del self.rooms[room.code]
            self.metrics.rooms.set(len(self.rooms))
            await room.close()

    # ------------------------------------------------------------------ shutdown
    async def _bounded(self, step: str, work: Coroutine[Any, Any, object]) -> None:
        """Run one stop step for at most ``STOP_STEP_S``, then go on without it.

        Not ``asyncio.wait_for``: on a timeout that waits until the step has finished
        cancelling, and a step that swallows the cancellation would hang the stop (and a
        SIGTERM drain, and a test's teardown) for ever. Here the step is cancelled and
        left behind; a failure is logged, never raised (the next steps still run)."""
        task = asyncio.ensure_future(work)
        done, _ = await asyncio.wait({task}, timeout=STOP_STEP_S)
        if not done:
            task.cancel()
            log.warning("node %s: %s took over %s s; going on", self.node_id, step,
                        STOP_STEP_S)
        elif not task.cancelled() and (exc := task.exception()) is not None:
            log.warning("node %s: %s failed: %r", self.node_id, step, exc)

    async def stop(self) -> None:
        """Graceful shutdown (see the module docstring). Safe to call twice."""
        if self.stopping:
            return
        self.stopping = True
        if self._ws is not None:
            self._ws.close(close_connections=False)  # stop accepting
        if self.keepalive is not None:
            self.keepalive.stop()
        for conn in list(self.connections):
            conn.close_with(Code.SHUTTING_DOWN, "the server is shutting down: reconnect and resume")
        handlers = list(self._handlers)
        if handlers:
            _, pending = await asyncio.wait(handlers, timeout=self.config.shutdown_grace_s + 1)
            for task in pending:
                task.cancel()
        if self._ws is not None:
            self._ws.close()
            await self._bounded("closing the websockets", self._ws.wait_closed())
        await self._bounded("stopping the sweeper", self.sweeper.stop())
        await self._bounded("closing the verdict pool", self.verdicts.close())
        for room in list(self.rooms.values()):
            await self._bounded(f"closing room {room.code}", room.close())
        self.rooms.clear()
        await self._bounded("closing the store", self.store.close())
        await self._bounded("stopping the metrics probes", self.metrics.stop())
        log.info("node %s stopped", self.node_id)


def tune_gc(server: Server) -> gctune.Tuning:
    """``solrace serve``, once listening: a quieter GC (server/gctune.py), its fall-back
    full collection weighing the frozen heap against ``server``'s open connections and
    the rooms it holds. Part of the public entry point, as ``configure_logging``."""
    return gctune.tune_after_start(
        live=lambda: gctune.Live(len(server.connections), len(server.rooms)))
