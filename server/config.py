"""Every limit and timeout of the server, in one dataclass with documented defaults.

Nothing here is read from the environment: ``solrace serve`` builds a ``ServerConfig`` from
its flags, tests build one with small timeouts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from protocol.limits import MAX_FRAME


def wall_ms() -> int:
    """The server's wall clock in Unix milliseconds (the default ``ServerConfig.clock``)."""
    return time.time_ns() // 1_000_000


@dataclass
class ServerConfig:
    """Limits and timeouts. Every queue and every per-client allowance is bounded here."""

    host: str = "127.0.0.1"
    port: int = 8765
    node_id: str = ""  # defaults to "<hostname>-<pid>" in Server
    store_url: str | None = None  # None: in-memory store

    # -- frames
    max_frame: int = MAX_FRAME  # protocol limit: larger frames get frame_too_large
    # The websocket layer refuses (close code 1009) frames beyond this, before we see them;
    # between max_frame and ws_max_size a client gets a frame_too_large error instead.
    ws_max_size: int = 64 * 1024

    # -- rate limit (lila-ws style credits): every client message costs one credit
    rate_burst: int = 20
    rate_per_s: float = 10.0
    # create, join, resume and list make the server read or write several store keys
    # (and create may run the solver): they cost this many credits instead of one.
    rate_cost_heavy: int = 5

    # -- per connection
    max_connections: int = 10_000  # beyond it, new websocket handshakes get HTTP 503
    outbound_queue: int = 512  # frames waiting to be written; beyond it: slow_consumer
    # Frames a connection holds, in order, while its move on Redis awaits the store's
    # reply (connection.py, ``take``); beyond it they go to websockets' assembler, which
    # pauses reading past its own high-water mark (backpressure, as before).
    held_frames: int = 8
    hello_timeout_s: float = 10.0  # before hello
    idle_timeout_s: float = 120.0  # after hello, while in no room (rooms are kept alive by pings)
    ping_interval_s: float | None = 20.0  # websocket keepalive pings
    ping_timeout_s: float | None = 20.0
    max_rooms_per_connection: int = 32  # creates + joins over a connection's life
    # Bytes waiting to reach one client: the transport's write buffer plus our queue.
    # Beyond it the connection is closed (1008 slow_consumer): one connection that does
    # not read cannot hold more than this much of the server's memory (the largest frame
    # we send, a spectator's Joined with eight boards, is a few KB).
    max_outbound_bytes: int = 256 * 1024
    # websockets writes a pong for every ping, read or not: pings are budgeted like
    # messages (our clients ping every 20 s; browsers never do). Beyond the budget the
    # connection is closed (1008 control_flood). The ping flood grew a node by 1.4 GB/min.
    ping_burst: int = 10
    ping_per_s: float = 1.0

    # -- node-wide admission (server/credits.py ``Handshakes``). The per-address caps do
    # not bound many addresses: 3,000 connections from 50 addresses (60 each, under every
    # cap) were all admitted in ~3 s, ~1,000 handshakes a second, and an honest player's
    # p99 went from 5.4 to 223 ms (docs/SECURITY.md). Each admitted connection costs the
    # event loop its handshake (~0.5-1 ms); beyond this budget a connection is refused at
    # TCP accept with HTTP 503 ("server busy or shutting down; retry"), which costs what
    # a 429 costs. A quarter of it is kept for addresses with few recent handshakes (a
    # reconnecting player, a health probe). At the default, 10,000 players reconnecting
    # to one node at once are all admitted in about (10,000 - 100) / 300 = 33 s, longer
    # than the SDK's automatic resume keeps trying (~8-16 s): docs/SECURITY.md,
    # "Node-wide admission rate".
    handshakes_per_s: float = 300.0
    handshake_burst: int = 100
    # A burst of admitted handshakes (the burst above arrives in one read of the sockets)
    # ran back to back in one loop iteration, ~1 ms each: iterations of 40-106 ms while
    # an honest move waited to be read. At most this many admitted connections start
    # their handshake per loop iteration, the rest wait their turn with their reading
    # paused (server/admission.py); and at most handshake_refusals_per_turn refusals
    # (write and close, ~20-60 us each) are answered per iteration. 4 a turn still
    # admits far faster than handshakes_per_s (an idle iteration is well under 1 ms).
    handshakes_per_turn: int = 4
    handshake_refusals_per_turn: int = 32

    # -- per client address (server/addresses.py). The global cap alone let one address
    # take all 10,000 connections; one address made 20,006 rooms in 142 s; codes could be
    # guessed at 2/s per connection over unlimited connections (docs/SECURITY.md).
    # Proxies whose X-Forwarded-For is believed (CIDRs; `solrace serve --trusted-proxy`).
    # Empty: the TCP peer is the client, whatever headers say.
    trusted_proxies: tuple[str, ...] = ()
    # A household or a small LAN event behind one NAT fits; a flood from one host does not.
    max_connections_per_address: int = 64
    # Handshakes a minute: a client that reconnects in a loop (to shed a per-connection
    # limit) makes the server pay a handshake each time.
    connects_per_minute: int = 120
    room_creates_per_minute: int = 20  # a person creates a room every few minutes at most
    max_seats_per_address: int = 16  # seats held at once (lobby or racing) on this node
    # Joins naming no room: a person mistypes a code a few times, a guesser needs ~2**36
    # tries per hit (10-character codes, docs/SECURITY.md "Room codes").
    failed_joins_per_minute: int = 10
    # A hidden-information room (face-down cards, e.g. Brisbane): one seat per client
    # address, so a second seat cannot reveal the deal's hidden cards (issue 17). True
    # relaxes it: LAN events behind one NAT, the embedded demo server, tests.
    shared_address_seats: bool = False

    # -- rooms
    snapshot_after: int = 64  # a resume further behind gets the whole board
    # A room that never starts disappears after this (store TTL and the core's lobby
    # deadline). 6 h let one client keep 20,000 abandoned lobbies; a real lobby fills in
    # minutes. `solrace serve --lobby-ttl`.
    lobby_ttl_s: int = 15 * 60
    results_ttl_s: int = 3600  # a finished room (and its results) stays this long
    abandon_after_s: float = 300.0  # untimed races: a seat offline this long is resigned
    solver_budget_s: float = 5.0  # deal=winnable: time to find a winnable seed
    results_solver_s: float = 1.0  # per deal: was a random deal winnable, and par
    # The verdict's solver runs in worker processes (server/verdicts.py), never on the
    # event loop nor on the results path, in the idle scheduling class (only CPU time the
    # loop leaves: a node has one core); these bound what a flood of rooms can queue.
    verdict_workers: int = 1  # processes (each one a CPU core while it searches)
    verdict_queue: int = 32  # searches waiting or running; beyond it: verdict unknown
    verdict_per_client: int = 4  # of those, for rooms created from one client address
    verdict_max_nodes: int = 50_000  # the search's node budget (about 50 MB)
    hint_budget_s: float = 0.5  # solver time for one hint (hints cost heavy credits)
    # Rooms this node holds (connections in them, or a deadline firing); beyond it a
    # create gets node_full: it was never enforced, and one client made 20,006 rooms.
    max_live_rooms: int = 10_000
    # Spectators of one room on this node (beyond: room_full). Each move is sent to every
    # one of them in one burst on the event loop; nothing bounded them, and 1,500 on one
    # mover pushed an honest player's ack 37 times up (docs/SECURITY.md). The fan-out
    # benchmark watches one room with 1,000 (docs/BENCHMARKS.md); a larger audience
    # spreads over nodes (the limit is per node). `--max-spectators`.
    max_spectators_per_room: int = 2_000
    # Of those, spectators whose hello did not set `ds` (older clients, or a hostile one
    # skipping it on purpose): each costs the node a Progress and a Diff frame per move,
    # where a `ds` spectator costs one Diffs frame per tick (~60 a second at most). 1,500
    # of them on one mover pushed an honest player's ack p99 57 times up (docs/SECURITY.md,
    # "Spectator fan-out"); beyond this, a spectator join without `ds` gets room_full.
    max_legacy_spectators_per_room: int = 100
    # Lobby operations (create, join, leave, list) in progress on this node at once; more
    # wait their turn (FIFO). A flood's burst of creations (50 connections from 10
    # addresses, each a create and a leave of ~15 store round trips) had up to 50 in
    # flight: their continuations, woken together by the Redis replies of one read, filled
    # each loop iteration, and an honest move, which takes ~16 iterations on Redis, waited
    # up to 67-114 ms at the flood's opening (docs/SECURITY.md, "Where the honest
    # player's time goes"). Moves and resumes never wait here; the address and node caps
    # refuse before it.
    lobby_concurrency: int = 8
    # Rooms in one `list` reply (a page; RoomList.next asks for the next). Listing all
    # rooms took 778 ms at 20,000 rooms and exhausted the Redis pool at 300.
    list_page: int = 50
    # events a room waits to publish while the store refuses them (retried in order);
    # beyond it the oldest go (a resume or the next event brings receivers up to date)
    room_outbox: int = 4096
    # -- snapshots (docs/SERVER.md, "Snapshots"): a board is rebuilt from its seat's
    # latest checkpoint plus the log's tail, never the whole log (a spectator join
    # replayed 160,000 moves on the event loop: a 1.1 s stall per join).
    # The seat's holder stores its board every this many moves: a rebuild replays at
    # most about this many moves (~0.6 ms); each checkpoint is ~330 B, ~1.3 B a move.
    checkpoint_every: int = 256
    # A rebuild that must replay more (checkpoints missing, a delayed view's window)
    # replays this many moves, then lets the event loop run others (a slice is 0.6 ms,
    # ~2 ms when it also builds the slice's diffs: well under a 10 ms stall).
    rebuild_slice: int = 256
    # The results carry every seat's whole log: it is read in one store round trip and
    # decoded (and checked for bot-like play) this many entries at a time, letting the
    # event loop run others between slices (~2 ms a slice: building the results of two
    # seats of 160,000 moves stalled the loop for 0.3 s in one go; now ~5 ms at most on
    # the memory store, 5-20 ms on Redis, where the reply itself is parsed in one piece).
    results_slice: int = 4096
    # Events buffered for a member while its Joined (or revealed boards) are being
    # built. A join takes a few store round trips; a room makes at most a few hundred
    # events in that time. Beyond it the member is closed (slow_consumer: it resumes or
    # joins again and gets a fresh snapshot), never silently short of an event.
    member_pending_max: int = 4096
    # Out-of-order diffs a spectator holds per seat while a gap is filled from the log.
    # Beyond it they are dropped and the fill reads them from the log too (every move is
    # there), so nothing a client waits on is lost.
    member_held_max: int = 1024
    # Diffs a room keeps for its spectators until their delay passes (all seats; only
    # while a spectator is in the room). Honest play makes a few moves a second per seat
    # (16 seats at 10/s for a 60 s delay: 9,600). Beyond it a diff is not kept: each
    # spectator fills the gap from the log when that diff falls due.
    delay_buffer_max: int = 20_000
    # Spectators get the moves of a room as one ``Diffs`` frame per tick, encoded once
    # (docs/SERVER.md, "Who sees what"). A tick is at most this long: the first move after
    # a quiet spell goes out at once (a paced room adds no delay), later ones wait for
    # the tick, so a busy room costs each spectator at most ~60 frames/s whatever its
    # move rate (Colyseus patches every 16 ms; a screen refreshes at 60 Hz).
    spectator_tick_ms: int = 16
    # Moves one Diffs frame holds at most (PROTOCOL.md promises 256): a tick with that
    # many goes out at once, unless the last tick is still being written to the
    # spectators. Keeps a frame small (~60 bytes a move: ~16 KiB).
    spectator_frame_max: int = 256
    # Moves one tick holds at most while the last one is still going out (it then goes
    # at its last slice as several frames, each spectator written them at once): 4
    # frames. Past it the last tick is finished in one callback and this one goes out:
    # the bound on what a room holds for its spectators. A saturated room's spectators
    # get fewer writes, each of more moves, and the node the CPU they would have taken
    # (docs/BENCHMARKS.md, "Ticks of several frames").
    spectator_tick_max: int = 1024

    # -- deadlines (in the store; every node sweeps them: docs/SERVER.md, "Deadlines")
    sweep_interval_s: float = 0.25  # how late a deadline armed on another node may fire
    deadline_lease_ms: int = 1_000  # a claimed deadline falls due again after this (a
    # firing that outlasts it may run twice: harmless, firing is idempotent)
    sweep_batch: int = 100  # deadlines claimed per sweep (more: sweep again at once)
    max_firing_deadlines: int = 32  # deadlines fired at once by this node
    max_deadline_wakes: int = 10_000  # precise wake-ups queued; beyond: the periodic sweep

    # -- durability: a store that may lose acknowledged moves on a restart (Redis without
    # AOF) is refused at the start unless the operator accepts it (then /healthz says
    # "degraded" and solrace_store_durable is 0). `solrace serve --allow-volatile-store`.
    allow_volatile_store: bool = False
    # acknowledge a move only once this many Redis replicas have it (WAIT; standalone
    # Redis only); with it, replicas make a Redis without AOF durable
    redis_wait_replicas: int = 0

    # -- shutdown
    shutdown_grace_s: float = 5.0  # time for writers to flush before connections are cut

    clock: Callable[[], int] = field(default=wall_ms)  # wall clock, Unix ms (injectable)
    # Seconds for rate-limit credits (injectable, so tests refill credits by moving time,
    # not by waiting for it).
    monotonic: Callable[[], float] = field(default=time.monotonic)
    # Where room seeds come from. None: ``secrets.randbits(64)``. Tests and reproducible
    # demos inject a fixed source; a public server must never (seeds must be unguessable).
    seed_source: Callable[[], int] | None = None


# Per-address settings for one host that plays every client (tests, the embedded demo
# server, benchmarks): all clients share 127.0.0.1, so the per-address caps and the one
# seat per address rule would count them as one client. Never for a public server.
ONE_HOST: dict[str, Any] = {
    "shared_address_seats": True,
    "max_connections_per_address": 1_000_000,
    "connects_per_minute": 1_000_000,
    "room_creates_per_minute": 1_000_000,
    "max_seats_per_address": 1_000_000,
    "failed_joins_per_minute": 1_000_000,
    # Test suites and benchmarks open hundreds of connections in a burst from one host;
    # the node's handshake budget is tested on its own (tests/adversarial/test_admission.py).
    "handshakes_per_s": 1_000_000.0,
    "handshake_burst": 1_000_000,
}
