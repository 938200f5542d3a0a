"""``solrace serve``: run a server node.

On ready it prints exactly one line to stdout, ``solrace listening on ws://HOST:PORT``
(tests and scripts parse it; with ``--port 0`` the port is the one chosen). SIGTERM or
SIGINT shuts down gracefully (clients get ``Closing{shutting_down}``) and exits 0. A
Redis that does not persist acknowledged moves (no AOF) is refused: exit 2 with the fix on
stderr, unless ``--allow-volatile-store``.

Logs go to stderr, one line per event (``server.logs``): JSON by default when stderr is
not a terminal, text on a terminal; ``--log-format`` and ``--log-level`` choose. Start-up
(``node started``) and shutdown (``node stopping``, ``node stopped``) are logged at INFO.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import socket
from dataclasses import replace

log = logging.getLogger("solrace.serve")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``serve`` subcommand."""
    p = subparsers.add_parser("serve", help="run a race server node",
                              description="Run a solrace server node (websockets + /healthz "
                              "+ /metrics on one port).")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default %(default)s)")
    p.add_argument("--port", type=int, default=8765,
                   help="port (default %(default)s; 0 picks a free one)")
    p.add_argument("--redis", default=os.environ.get("SOLRACE_REDIS_URL") or None,
                   metavar="URL", help="Redis URL for a multi-node service "
                   "(default: $SOLRACE_REDIS_URL, else in-memory, one node)")
    p.add_argument("--node-id", default="", help="this node's name (default host-pid)")
    p.add_argument("--rate", type=_positive, default=10.0, metavar="PER_S",
                   help="messages a connection may send per second, sustained "
                   "(default %(default)s; bots pace themselves to it)")
    p.add_argument("--burst", type=int, default=20, metavar="N",
                   help="messages a connection may send at once (default %(default)s)")
    p.add_argument("--trusted-proxy", action="append", metavar="CIDR",
                   default=[c for c in os.environ.get("SOLRACE_TRUSTED_PROXIES", "").split(",")
                            if c.strip()],
                   help="a proxy whose X-Forwarded-For names the client (repeatable; "
                   "default: $SOLRACE_TRUSTED_PROXIES, comma-separated, else none: the TCP "
                   "peer is the client)")
    p.add_argument("--per-address-connections", type=int, default=64, metavar="N",
                   help="connections open at once from one client address (default %(default)s)")
    p.add_argument("--connects-per-minute", type=int, default=120, metavar="N",
                   help="handshakes one client address may make a minute (default %(default)s)")
    p.add_argument("--room-creates-per-minute", type=int, default=20, metavar="N",
                   help="rooms one client address may create a minute (default %(default)s)")
    p.add_argument("--seats-per-address", type=int, default=16, metavar="N",
                   help="seats one client address may hold at once (default %(default)s)")
    p.add_argument("--failed-joins-per-minute", type=int, default=10, metavar="N",
                   help="joins naming no room one client address may make a minute "
                   "(default %(default)s)")
    p.add_argument("--handshakes-per-s", type=_positive, default=300.0, metavar="PER_S",
                   help="new connections this node admits a second, from all addresses "
                   "together; beyond it HTTP 503 and clients retry (default %(default)s)")
    p.add_argument("--handshake-burst", type=_at_least_one, default=100, metavar="N",
                   help="new connections admitted at once before --handshakes-per-s "
                   "applies (default %(default)s)")
    p.add_argument("--shared-address-seats", action="store_true",
                   help="let one client address hold several seats of a room with face-down "
                   "cards (a LAN event behind one NAT); off: one seat per address")
    p.add_argument("--one-host", action="store_true",
                   help="every client runs on this host (tests, demos, benchmarks): no "
                   "per-address caps, shared-address seats; never on a public server")
    p.add_argument("--lobby-ttl", type=_positive, default=15 * 60, metavar="S",
                   help="seconds a room that never starts lives (default %(default)s)")
    p.add_argument("--max-live-rooms", type=int, default=10_000, metavar="N",
                   help="rooms this node holds at once; beyond it, create gets node_full "
                   "(default %(default)s)")
    p.add_argument("--max-spectators", type=int, default=2_000, metavar="N",
                   help="spectators of one room on this node; beyond it, a spectator join "
                   "gets room_full (default %(default)s)")
    p.add_argument("--allow-volatile-store", action="store_true",
                   help="serve even if Redis does not persist acknowledged moves (no AOF): "
                   "a Redis restart then loses moves and races; /healthz says degraded")
    p.add_argument("--redis-wait-replicas", type=int, default=0, metavar="N",
                   help="acknowledge a move only once N Redis replicas have it (WAIT; "
                   "standalone Redis; costs a replication round trip per move)")
    p.add_argument("--log-level", default=os.environ.get("SOLRACE_LOG_LEVEL") or "INFO",
                   type=_level, help="DEBUG, INFO, WARNING or ERROR "
                   "(default: $SOLRACE_LOG_LEVEL, else INFO)")
    p.add_argument("--log-format", choices=("json", "text"),
                   default=os.environ.get("SOLRACE_LOG_FORMAT") or None,
                   help="stderr log lines: json (one object per line) or text "
                   "(default: $SOLRACE_LOG_FORMAT, else json unless stderr is a terminal)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Serve until SIGTERM/SIGINT; 0 after a graceful shutdown."""
    from server.app import configure_logging

    # The node id is fixed here (not in Server) so that every log line carries it.
    args.node_id = args.node_id or f"{socket.gethostname()}-{os.getpid()}"
    configure_logging(args.log_format, args.log_level, args.node_id)
    coro = _serve(args)
    try:
        import uvloop
    except ImportError:  # optional: the standard loop works, a little slower
        return asyncio.run(coro)
    return uvloop.run(coro)


async def _serve(args: argparse.Namespace) -> int:
    from server.app import Server, VolatileStore, tune_gc
    from server.config import ONE_HOST, ServerConfig

    config = ServerConfig(host=args.host, port=args.port, store_url=args.redis,
                          node_id=args.node_id, rate_per_s=args.rate,
                          rate_burst=max(1, args.burst),
                          allow_volatile_store=args.allow_volatile_store,
                          redis_wait_replicas=max(0, args.redis_wait_replicas),
                          trusted_proxies=tuple(args.trusted_proxy),
                          max_connections_per_address=args.per_address_connections,
                          connects_per_minute=args.connects_per_minute,
                          room_creates_per_minute=args.room_creates_per_minute,
                          max_seats_per_address=args.seats_per_address,
                          failed_joins_per_minute=args.failed_joins_per_minute,
                          handshakes_per_s=args.handshakes_per_s,
                          handshake_burst=args.handshake_burst,
                          shared_address_seats=args.shared_address_seats,
                          lobby_ttl_s=int(args.lobby_ttl), max_live_rooms=args.max_live_rooms,
                          max_spectators_per_room=args.max_spectators)
    if args.one_host:
        config = replace(config, **ONE_HOST)
    try:
        server = Server(config)
    except ValueError as exc:  # --redis-wait-replicas with a Cluster URL, a bad --trusted-proxy
        log.error("bad settings: %s", exc, extra={"error": "bad_settings"})
        return 2
    try:
        await server.start()
    except VolatileStore as exc:
        log.error("refusing to start: %s", exc, extra={"error": "volatile_store"})
        await server.store.close()
        return 2
    except OSError as exc:
        log.error("cannot listen on %s:%s: %s", args.host, args.port, exc,
                  extra={"error": "listen_failed"})
        return 1
    tune_gc(server)  # GC: freeze the start-up heap, fewer collections (server/gctune.py)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    host = args.host if ":" not in args.host else f"[{args.host}]"
    print(f"solrace listening on ws://{host}:{server.port}", flush=True)
    log.info("node started", extra={
        "url": f"ws://{host}:{server.port}", "store": _store_kind(args.redis),
        "pid": os.getpid(), "loop": type(loop).__module__.split(".")[0],
    })
    received = await _first_signal(stop, loop)
    log.info("node stopping", extra={"signal": received,
                                     "connections": len(server.connections)})
    await server.stop()
    log.info("node stopped")
    return 0


async def _first_signal(stop: asyncio.Event, loop: asyncio.AbstractEventLoop) -> str:
    """Wait for SIGTERM/SIGINT; the name of the one that came."""
    received = "unknown"

    def on(sig: signal.Signals) -> None:
        nonlocal received
        received = sig.name
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, on, sig)
    await stop.wait()
    return received


def _store_kind(url: str | None) -> str:
    """The store's kind for the start-up event, without the URL (it may hold a password)."""
    if not url:
        return "memory"
    return "redis-cluster" if "cluster=1" in url else "redis"


def _level(text: str) -> str:
    """argparse type: a logging level name."""
    name = text.upper()
    if name not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        raise argparse.ArgumentTypeError(f"not a log level: {text!r}")
    return name


def _at_least_one(text: str) -> int:
    """argparse type: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, not {text}")
    return value


def _positive(text: str) -> float:
    """argparse type: a number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, not {text}")
    return value
