"""``RedisStore``: the store on Redis, so several server nodes act as one service.

Layout (every key of a room shares the hash tag ``{CODE}``, so on Redis Cluster a room
lives in one slot and every multi-key script is legal):

- ``solrace:{CODE}:room``    hash: one MessagePack value per RoomRecord field, ``_op``
- ``solrace:{CODE}:seats``   hash: ``N:field`` per SeatRecord field; ``N:epoch`` a plain int
- ``solrace:{CODE}:log:N``   list: seat N's accepted moves (MessagePack LogEntry each)
- ``solrace:{CODE}:cp:N``    sorted set: seat N's checkpoints (MessagePack Checkpoint),
  scored by seq; ``solrace:{CODE}:cpt:N`` the same checkpoints' seqs (zero-padded text)
  scored by race clock (docs/SERVER.md, "Snapshots")
- ``solrace:{CODE}:results`` string: the encoded results message
- ``solrace:{CODE}:events``  pub/sub channel (sharded pub/sub on Cluster)
- ``solrace:{CODE}:evseq``, ``solrace:{CODE}:evlog``  event counter and capped history
  (see ``redis_bus``: subscribers that reconnect catch up, nothing is lost)
- ``solrace:rooms:open``     sorted set of room codes not finished (score: created_ms);
  one key, touched only by single-key commands, so it is fine on Cluster too.
- ``solrace:deadlines``      sorted set, node-wide: member ``CODE|kind``, score the wall
  ms it falls due (countdown end, time limit, abandon, results due, lobby expiry). Every
  node sweeps it (``claim_deadlines``: one single-key script, so legal on Cluster; its
  slot is on one master, which sees a few small scripts per node per sweep interval).

One move is one script call (``APPEND_MOVE``: the fenced append, the seat's fields and
the move's event, numbered, kept and published); on a standalone Redis the calls of one
loop tick go out as one pipeline (``redis_commit.GroupCommit``: group commit), so a busy
node pays one round trip for many moves.

Failures: every Redis error or timeout — anything a redis-py call raises, including the
``RuntimeError`` of a connection closed under it during a Cluster failover — becomes
``StoreUnavailable``. Timeouts are short
(1 s socket, 3 s per operation) so an outage is reported quickly; connections are
re-established automatically when Redis is back. A write whose reply was lost is
ambiguous (it may have been applied); every write script is idempotent per call (see
``redis_scripts``), and ``append_move`` in particular treats "the log already ends with
this move at this ``seq``, same epoch" as success, so a retried append never doubles.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import secrets
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

import msgspec
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError, ResponseError

from . import redis_scripts as lua
from .base import (
    Cursor,
    Deadline,
    Durability,
    EventHandler,
    Listed,
    StoreUnavailable,
)
from .records import (
    NEW_ROUND_SEAT,
    Checkpoint,
    LogColumns,
    LogEntry,
    RoomRecord,
    SeatRecord,
)
from .redis_bus import HISTORY_LEN, Bus, Numbered, split_message
from .redis_commit import GroupCommit, bulk
from .redis_keys import (
    ROOM_FIELDS,
    SEAT_FIELD_SET,
    SEAT_FIELDS,
    AppendAnswer,
    RoomKeys,
    append_failed,
    as_text,
    check_fields,
    deadline_member,
    room_from_hash,
    seat_field_pairs,
    seat_from_fields,
    seats_from_hash,
)

log = logging.getLogger("solrace.store.redis")

OPEN_ROOMS_KEY = "solrace:rooms:open"
# Public rooms not finished, scored by created_ms: `list` reads one page of it.
PUBLIC_ROOMS_KEY = "solrace:rooms:public"
# Members read past the cursor's score to skip rooms created in the same millisecond
# that the previous page already showed (more than this many in one ms: a short page).
_TIE_SLACK = 16
DEADLINES_KEY = "solrace:deadlines"
PRIMARIES = RedisCluster.PRIMARIES
SOCKET_TIMEOUT_S = 1.0
# Connections to a standalone Redis, per node. redis-py's default pool holds 100 and
# refuses the 101st operation at once ("Too many connections"): 1,500 spectators joining
# one room (100 handshakes at a time) failed a few joins store_unavailable. This pool
# makes an operation beyond it wait for a free connection instead (within the
# operation's OP_TIMEOUT_S); Redis itself accepts 10,000 clients by default, and each
# node's pool stays far under that. A URL's ``max_connections`` overrides it.
POOL_MAX = 256
WAIT_TIMEOUT_MS = 500  # --redis-wait-replicas: a move waits this long for its replicas
# (below SOCKET_TIMEOUT_S, so the answer is "too few replicas", not a socket timeout)
OP_TIMEOUT_S = 3.0

_encode = msgspec.msgpack.encode
_decode = msgspec.msgpack.decode
_LOG_DECODER = msgspec.msgpack.Decoder(LogEntry)
# A slice of log entries under one MessagePack array32 header (``read_logs``).
_LOGS_DECODER = msgspec.msgpack.Decoder(list[tuple[str, int]])
_CHECKPOINT_DECODER = msgspec.msgpack.Decoder(Checkpoint)

_LOBBY = _encode("lobby")
# append_move's script keys per (room, seat), kept for the move path; cleared when full
# (a node holds far fewer live seats: this only bounds a long-lived node's memory).
MAX_CACHED_SEAT_KEYS = 8192
# The token naming a room's event numbering (APPEND_MOVE's ARGV) only has to be unique,
# not secret: drawn from a generator seeded once from os.urandom, not a system call per
# move.
_TOKENS = random.Random()


class RedisStore:
    """The ``Store`` on Redis (standalone or Cluster). Create with ``from_url``."""

    def __init__(
        self, client: Redis | RedisCluster, *, cluster: bool,
        node_auth: dict[str, Any] | None = None, wait_replicas: int = 0,
    ) -> None:
        self._client: Any = client
        self._cluster = cluster
        self._wait_replicas = wait_replicas  # append_move: WAIT for this many replicas
        # (room, seat) -> (APPEND_MOVE's keys, the room's channel, the keys packed for the
        # group commit: ``bulk(keys)``, not packed again per move): see MAX_CACHED_SEAT_KEYS
        self._seat_keys: dict[tuple[str, int], tuple[list[str], str, bytes]] = {}
        self._scripts = {
            name: client.register_script(getattr(lua, name))
            for name in (
                "CREATE_ROOM", "SET_PHASE", "ADD_SEAT", "REMOVE_SEAT", "TAKE_SEAT", "UPDATE_SEAT",
                "APPEND_MOVE", "PUT_RESULTS", "EXPIRE_ROOM", "PUBLISH", "HISTORY", "NEW_ROUND",
                "CLAIM_DEADLINES", "DONE_DEADLINE", "PUT_CHECKPOINT", "GET_CHECKPOINT",
                "CHECKPOINT_AND_TAIL",
            )
        }
        # options of the per-master subscriber connections on Cluster
        node_options = {
            "socket_timeout": SOCKET_TIMEOUT_S, "socket_connect_timeout": SOCKET_TIMEOUT_S,
            "retry": Retry(NoBackoff(), 1), **(node_auth or {}),
        }
        self._bus = Bus(client, cluster, self._event_history, node_options)
        # Group commit of appends (standalone Redis; a Cluster pipeline would be split
        # per master anyway, and each append is one round trip there already).
        self._committer = GroupCommit(
            client.connection_pool, self._scripts["APPEND_MOVE"], wait_replicas,
            OP_TIMEOUT_S, WAIT_TIMEOUT_MS) if isinstance(client, Redis) and not cluster else None

    @classmethod
    def from_url(cls, url: str, wait_replicas: int = 0) -> RedisStore:
        """A store for ``redis://host:port/db`` (``rediss://`` for TLS); add ``?cluster=1``
        for Redis Cluster (any node's address; the others are discovered). redis-py URL
        options such as ``socket_timeout`` override the short defaults. With
        ``wait_replicas`` N > 0 (standalone only) a move is stored only once N replicas
        have it (``WAIT``)."""
        parts = urlsplit(url)
        query = parse_qsl(parts.query)
        cluster = any(k == "cluster" and v.lower() in ("1", "true", "yes") for k, v in query)
        rest = urlencode([(k, v) for k, v in query if k != "cluster"])
        clean = urlunsplit(parts._replace(query=rest))
        options: dict[str, Any] = {
            "socket_timeout": SOCKET_TIMEOUT_S,
            "socket_connect_timeout": SOCKET_TIMEOUT_S,
            # one quick retry heals a pooled connection that died with a Redis restart;
            # safe because every write script is idempotent per call
            "retry": Retry(NoBackoff(), 1),
        }
        if cluster and wait_replicas:
            raise ValueError("waiting for replicas (WAIT) needs a standalone Redis with "
                             "replicas, not a Cluster URL")
        if cluster:
            auth: dict[str, Any] = {"ssl": parts.scheme == "rediss"}
            if parts.username:
                auth["username"] = unquote(parts.username)
            if parts.password:
                auth["password"] = unquote(parts.password)
            return cls(RedisCluster.from_url(clean, **options), cluster=True, node_auth=auth)
        pool = BlockingConnectionPool.from_url(clean, max_connections=POOL_MAX,
                                               timeout=OP_TIMEOUT_S, **options)
        return cls(Redis.from_pool(pool), cluster=False, wait_replicas=wait_replicas)

    # ------------------------------------------------------------------ plumbing

    async def _run(self, what: str, call: Callable[[], Awaitable[Any]]) -> Any:
        """Await ``call()`` within the operation timeout; Redis trouble → StoreUnavailable."""
        for attempt in (1, 2):
            try:
                async with asyncio.timeout(OP_TIMEOUT_S):
                    return await call()
            except (RedisError, OSError, TimeoutError) as exc:
                detail = str(exc) or type(exc).__name__
                raise StoreUnavailable(f"redis {what} failed: {detail}") from exc
            except AttributeError as exc:
                # redis-py's async cluster client, under load, can hand a command a
                # connection whose setup another task tore down ("'NoneType' object has
                # no attribute 'writelines'"). Every call here is idempotent (see
                # redis_scripts), so it is safe to send it once more.
                if attempt == 2:
                    raise StoreUnavailable(f"redis {what} failed: {exc}") from exc
                log.warning("redis %s: client error %r; retrying once", what, exc)
            except Exception as exc:
                # Anything else out of a redis-py call is the backend failing too: during
                # a Cluster failover redis-py raises RuntimeError("handler is closed"),
                # and a slot map being rebuilt can surface as KeyError or IndexError.
                # The client hears store_unavailable (retryable), never internal.
                log.warning("redis %s: %s: %s", what, type(exc).__name__, exc)
                raise StoreUnavailable(f"redis {what} failed: {type(exc).__name__}: {exc}"
                                       ) from exc
        raise AssertionError("unreachable")

    async def _script(self, name: str, keys: list[str], args: list[Any]) -> Any:
        script = self._scripts[name]
        return await self._run(name.lower(), lambda: script(keys=keys, args=args))

    # ------------------------------------------------------------------ rooms

    async def create_room(self, room: RoomRecord) -> bool:
        """Store a new room; False (and nothing changed) if the code is taken."""
        keys = RoomKeys(room.code)
        pairs: list[Any] = []
        for name in RoomRecord.__struct_fields__:
            pairs += [name, _encode(getattr(room, name))]
        created = await self._script("CREATE_ROOM", [keys.room], [secrets.token_hex(8), *pairs])
        if not created:
            return False
        try:
            score = {room.code: room.created_ms}
            await self._run("index room", lambda: self._client.zadd(OPEN_ROOMS_KEY, score))
            if room.settings.get("pu", True):
                await self._run("index room",
                                lambda: self._client.zadd(PUBLIC_ROOMS_KEY, score))
        except StoreUnavailable:
            # keep "nothing changed" as far as Redis lets us
            try:
                await self._run("undo room", lambda: self._client.delete(keys.room))
            except StoreUnavailable:
                log.warning("room %s created but not listed (redis failed twice)", room.code)
            raise
        return True

    async def get_room(self, code: str) -> RoomRecord | None:
        """The room, or None if there is none (or it expired)."""
        data = await self._run("get room", lambda: self._client.hgetall(RoomKeys(code).room))
        return room_from_hash(data) if data else None

    async def list_rooms(self) -> list[RoomRecord]:
        """Rooms not finished, oldest first. Codes whose room expired or finished are
        dropped from the index on the way."""
        raw = await self._run("list rooms", lambda: self._client.zrange(OPEN_ROOMS_KEY, 0, -1))
        codes = [c.decode() for c in raw]
        found = await self._run(
            "list rooms",
            lambda: asyncio.gather(*(self._client.hgetall(RoomKeys(c).room) for c in codes)),
        )
        rooms, stale = [], []
        for code, data in zip(codes, found, strict=True):
            room = room_from_hash(data) if data else None
            if room is None or room.phase == "finished":
                stale.append(code)
            else:
                rooms.append(room)
        if stale:
            await self._run("prune rooms", lambda: self._client.zrem(OPEN_ROOMS_KEY, *stale))
        return rooms

    async def list_public(self, before: Cursor | None,
                          limit: int) -> tuple[list[Listed], Cursor | None]:
        """Public rooms not finished, newest first, older than ``before`` — see
        ``Store``. Two round trips: one page of the index, then one pipeline reading
        the page's rooms and seats (a third drops stale codes from the index)."""
        top: Any = before[0] if before is not None else "+inf"
        raw = await self._run("list rooms", lambda: self._client.zrevrangebyscore(
            PUBLIC_ROOMS_KEY, top, "-inf", start=0, num=limit + _TIE_SLACK, withscores=True))
        page = [(int(score), member.decode()) for member, score in raw]
        if before is not None:
            page = [key for key in page if key < before]
        more = len(page) > limit or len(raw) == limit + _TIE_SLACK
        page = page[:limit]
        if not page:
            return [], None

        async def read() -> list[Any]:
            pipe = self._client.pipeline(transaction=False)
            for _, code in page:
                keys = RoomKeys(code)
                pipe.hgetall(keys.room)
                pipe.hgetall(keys.seats)
            return list(await pipe.execute())

        found = await self._run("list rooms", read)
        out: list[Listed] = []
        stale: list[str] = []
        for i, (_, code) in enumerate(page):
            data, seat_data = found[2 * i], found[2 * i + 1]
            room = room_from_hash(data) if data else None
            if room is None or room.phase == "finished":
                stale.append(code)
            else:
                out.append((room, seats_from_hash(seat_data)))
        if stale:
            with contextlib.suppress(StoreUnavailable):  # the next listing prunes them
                await self._run("prune rooms",
                                lambda: self._client.zrem(PUBLIC_ROOMS_KEY, *stale))
        return out, (page[-1] if more else None)

    async def unlist_room(self, code: str) -> None:
        """Drop the room from both indexes — see ``Store``."""
        await self._run("unlist room", lambda: self._client.zrem(OPEN_ROOMS_KEY, code))
        await self._run("unlist room", lambda: self._client.zrem(PUBLIC_ROOMS_KEY, code))

    async def set_phase(self, code: str, expect: str, phase: str, **fields: Any) -> bool:
        """Compare-and-set of the room's phase (and ``fields``) in one script."""
        check_fields(fields, ROOM_FIELDS - {"code", "phase"})
        pairs: list[Any] = []
        for name, value in fields.items():
            pairs += [name, _encode(value)]
        args = [secrets.token_hex(8), _encode(expect), _encode(phase), *pairs]
        won = bool(await self._script("SET_PHASE", [RoomKeys(code).room], args))
        if won and phase == "finished":
            # if this fails, list_rooms still skips the room and prunes the index itself
            with contextlib.suppress(StoreUnavailable):
                await self.unlist_room(code)
        return won

    async def new_round(self, code: str, keep: list[int], **fields: Any) -> bool:
        """A rematch in one script (see ``Store.new_round``); the room is listed again."""
        check_fields(fields, ROOM_FIELDS - {"code", "phase"})
        keys = RoomKeys(code)
        all_keys = [keys.room, keys.seats, keys.results, *keys.seat_keys()]
        seat_pairs = seat_field_pairs(NEW_ROUND_SEAT, None)
        room_pairs: list[Any] = []
        for name, value in fields.items():
            room_pairs += [name, _encode(value)]
        args = [secrets.token_hex(8), _encode("finished"), _LOBBY, len(keep), *keep,
                len(seat_pairs), *seat_pairs, *room_pairs]
        won = bool(await self._script("NEW_ROUND", all_keys, args))
        if won:  # listed again, like a new room (if this fails it still works by code)
            score = {code: int(fields.get("created_ms") or 0)}
            with contextlib.suppress(StoreUnavailable):
                await self._run("index room", lambda: self._client.zadd(OPEN_ROOMS_KEY, score))
                room = await self.get_room(code)
                if room is not None and room.settings.get("pu", True):
                    await self._run("index room",
                                    lambda: self._client.zadd(PUBLIC_ROOMS_KEY, score))
        return won

    async def expire_room(self, code: str, ttl_s: int) -> None:
        """EXPIRE every key of the room (keys created later inherit the TTL). The room
        stays listed while it lasts; ``list_rooms`` drops it from the index once gone."""
        keys = RoomKeys(code)
        all_keys = [keys.room, keys.seats, keys.results, keys.event_counter, keys.event_history]
        all_keys += keys.seat_keys()
        await self._script("EXPIRE_ROOM", all_keys, [int(ttl_s)])

    # ------------------------------------------------------------------ seats

    async def add_seat(self, code: str, seat: SeatRecord, max_players: int) -> int | None:
        """The next free seat number while the room is in the lobby, or None."""
        keys = RoomKeys(code)
        fields = {name: getattr(seat, name) for name in SEAT_FIELDS}
        args = [secrets.token_hex(8), _LOBBY, int(max_players), int(seat.epoch)]
        args += seat_field_pairs(fields, None)
        number = await self._script("ADD_SEAT", [keys.room, keys.seats], args)
        return int(number) or None

    async def remove_seat(self, code: str, seat: int, epoch: int) -> bool:
        """Free the seat while the room is in the lobby — see ``Store``."""
        keys = RoomKeys(code)
        done = await self._script("REMOVE_SEAT", [keys.room, keys.seats],
                                  [_LOBBY, int(seat), int(epoch)])
        return bool(done)

    async def get_seats(self, code: str) -> list[SeatRecord]:
        """Every seat of the room, by seat number."""
        data = await self._run("get seats", lambda: self._client.hgetall(RoomKeys(code).seats))
        return seats_from_hash(data)

    async def get_seat(self, code: str, seat: int) -> SeatRecord | None:
        """One seat, or None."""
        names = ("epoch", *SEAT_FIELDS)
        values = await self._run(
            "get seat",
            lambda: self._client.hmget(RoomKeys(code).seats, [f"{seat}:{n}" for n in names]),
        )
        if values[0] is None:
            return None
        present = {n: v for n, v in zip(names[1:], values[1:], strict=True) if v is not None}
        return seat_from_fields(seat, values[0], present)

    async def update_seat(self, code: str, seat: int, **fields: Any) -> None:
        """Set some SeatRecord attributes (not ``epoch``); a missing seat is left alone."""
        check_fields(fields, SEAT_FIELDS)
        if fields:
            args = [seat, *seat_field_pairs(fields, seat)]
            await self._script("UPDATE_SEAT", [RoomKeys(code).seats], args)

    async def take_seat(self, code: str, seat: int) -> int:
        """Increment the seat's epoch and return it; KeyError if there is no such seat."""
        epoch = int(await self._script("TAKE_SEAT", [RoomKeys(code).seats], [seat]))
        if epoch == 0:
            raise KeyError(f"room {code} has no seat {seat}")
        return epoch

    # ------------------------------------------------------------------ move logs

    async def append_move(
        self, code: str, seat: int, epoch: int, seq: int, entry: LogEntry, *,
        event: bytes | None = None, **seat_fields: Any,
    ) -> None:
        """Append, update the seat and publish ``event`` in one script, fenced by epoch
        and seq (see the module docstring). On a standalone Redis the call joins the
        node's next group commit (``redis_commit.GroupCommit``): one pipelined round trip for every
        move of the loop tick; on Cluster it is its own call (still one round trip)."""
        script_keys, args, packed_keys = self._append_args(code, seat, epoch, seq, entry,
                                                           event, seat_fields)
        if self._committer is not None:
            reply = await self._committer.submit(script_keys, args, packed_keys)
        else:
            reply = await self._script("APPEND_MOVE", script_keys, args)
        failed = append_failed(reply, code, seat, epoch)
        if failed is not None:
            raise failed

    def appends_later(self) -> bool:
        """True when ``append_move_later`` may stand for ``append_move``: a standalone
        Redis (the group commit answers each call from its reply) and ``append_move``
        this class's own (a subclass that overrides it is not bypassed)."""
        return self._committer is not None and type(self).append_move is RedisStore.append_move

    def append_move_later(
        self, code: str, seat: int, epoch: int, seq: int, entry: LogEntry,
        done: Callable[[Exception | None], None], *, event: bytes | None = None,
        **seat_fields: Any,
    ) -> None:
        """``append_move`` without a coroutine (only where ``appends_later``): the call
        joins the next group commit, and ``done`` is called once, with None when the
        move is stored (the same guarantees: fenced, durable as ``append_move`` makes
        it) or with the exception ``append_move`` would raise (a ``StoreError``: then
        nothing was stored) — from the reply's ``data_received``, outside any task, never before
        this returns."""
        script_keys, args, packed_keys = self._append_args(code, seat, epoch, seq, entry,
                                                           event, seat_fields)
        committer = self._committer
        assert committer is not None  # (appends_later)
        committer.submit_later(script_keys, args, packed_keys,
                               AppendAnswer(done, code, seat, epoch))

    def _append_args(self, code: str, seat: int, epoch: int, seq: int, entry: LogEntry,
                     event: bytes | None, seat_fields: dict[str, Any],
                     ) -> tuple[list[str], list[Any], bytes]:
        """APPEND_MOVE's keys, arguments and packed keys for one move."""
        if not SEAT_FIELD_SET.issuperset(seat_fields):
            check_fields(seat_fields, SEAT_FIELDS)  # raises, naming the unknown fields
        cached = self._seat_keys.get((code, seat))
        if cached is None:
            if len(self._seat_keys) >= MAX_CACHED_SEAT_KEYS:
                self._seat_keys.clear()
            keys = RoomKeys(code)
            seat_keys = [keys.seats, keys.log(seat), keys.event_counter,
                         keys.event_history, keys.room]
            cached = self._seat_keys[(code, seat)] = (seat_keys, keys.events, bulk(seat_keys))
        script_keys, channel, packed_keys = cached
        args: list[Any] = [seat, str(int(epoch)), int(seq), _encode(entry), entry.move]
        if event is None:
            args += ["", "", "", 0, ""]
        else:
            args += [event, channel, "1" if self._cluster else "0", HISTORY_LEN,
                     f"{_TOKENS.getrandbits(32):08x}"]
        args += seat_field_pairs(seat_fields, seat)
        return script_keys, args, packed_keys

    async def read_log(self, code: str, seat: int, after: int = 0,
                       limit: int | None = None) -> list[LogEntry]:
        """The seat's log entries after the first ``after`` ones, at most ``limit``."""
        key = RoomKeys(code).log(seat)
        start = max(after, 0)
        if limit is not None and limit <= 0:
            return []
        stop = -1 if limit is None else start + limit - 1
        raw = await self._run("read log", lambda: self._client.lrange(key, start, stop))
        return [_LOG_DECODER.decode(item) for item in raw]

    async def read_logs(self, code: str, seats: Sequence[int],
                        slice_entries: int) -> dict[int, LogColumns]:
        """The seats' whole logs as columns — see ``Store.read_logs``. One pipeline of
        an ``LRANGE`` per seat (the keys share the room's hash tag: one round trip on a
        Cluster too); then each slice of entries is decoded by one msgspec call (the
        entries are MessagePack arrays: joined under one array header they are a
        MessagePack list), the event loop free between slices."""
        keys = RoomKeys(code)
        wanted = list(seats)
        if not wanted:
            return {}

        async def read() -> list[Any]:
            pipe = self._client.pipeline(transaction=False)
            for seat in wanted:
                pipe.lrange(keys.log(seat), 0, -1)
            return list(await pipe.execute())

        found = await self._run("read logs", read)
        step = max(slice_entries, 1)
        out: dict[int, LogColumns] = {}
        decoded = 0
        for seat, raw in zip(wanted, found, strict=True):
            columns = out[seat] = LogColumns([], [])
            for start in range(0, len(raw), step):
                if decoded:
                    await asyncio.sleep(0)  # let the loop serve others between slices
                chunk = raw[start : start + step]
                pairs = _LOGS_DECODER.decode(
                    b"\xdd" + len(chunk).to_bytes(4, "big") + b"".join(chunk))
                columns.moves.extend([move for move, _ in pairs])
                columns.clocks.extend([clock for _, clock in pairs])
                decoded += 1
        return out

    # ------------------------------------------------------------------ checkpoints

    async def put_checkpoint(self, code: str, seat: int, checkpoint: Checkpoint) -> None:
        """Keep the checkpoint while the seat exists, with the room's TTL (one script)."""
        keys = RoomKeys(code)
        args: list[Any] = [int(checkpoint.seq), int(checkpoint.clock_ms), _encode(checkpoint),
                f"{int(seat)}:epoch"]
        await self._run("put checkpoint", lambda: self._scripts["PUT_CHECKPOINT"](
            keys=[keys.room, keys.seats, *keys.checkpoints(seat)], args=args))

    async def get_checkpoint(self, code: str, seat: int, max_seq: int | None = None,
                             max_clock_ms: int | None = None) -> Checkpoint | None:
        """The latest checkpoint within both bounds, in one script — see ``Store``."""
        keys = RoomKeys(code).checkpoints(seat)
        args = ["+inf" if max_seq is None else int(max_seq),
                "+inf" if max_clock_ms is None else int(max_clock_ms)]
        raw = await self._run("get checkpoint", lambda: self._scripts["GET_CHECKPOINT"](
            keys=keys, args=args))
        return _CHECKPOINT_DECODER.decode(raw) if raw else None

    async def checkpoint_and_tail(
        self, code: str, seat: int, limit: int, max_seq: int | None = None,
        max_clock_ms: int | None = None,
    ) -> tuple[Checkpoint | None, list[LogEntry]]:
        """``get_checkpoint`` and the ``limit`` log entries after it, in one script —
        see ``Store``."""
        keys = RoomKeys(code)
        args = ["+inf" if max_seq is None else int(max_seq),
                "+inf" if max_clock_ms is None else int(max_clock_ms), max(int(limit), 0)]
        raw, tail = await self._run("read checkpoint", lambda: self._scripts["CHECKPOINT_AND_TAIL"](
            keys=[*keys.checkpoints(seat), keys.log(seat)], args=args))
        saved = _CHECKPOINT_DECODER.decode(raw) if raw else None
        return saved, [_LOG_DECODER.decode(item) for item in tail]

    # ------------------------------------------------------------------ results

    async def put_results(self, code: str, results: bytes) -> bytes:
        """Keep the results unless there are some (with the room's TTL, if it has one);
        returns the results stored."""
        keys = RoomKeys(code)
        stored = await self._script("PUT_RESULTS", [keys.room, keys.results], [results])
        return bytes(stored)

    # ------------------------------------------------------------------ deadlines

    async def set_deadline(self, code: str, kind: str, at_ms: int) -> None:
        """ZADD to the node-wide deadline set (see the module docstring)."""
        member = deadline_member(code, kind)
        await self._run("set deadline",
                        lambda: self._client.zadd(DEADLINES_KEY, {member: int(at_ms)}))

    async def clear_deadline(self, code: str, kind: str) -> None:
        """ZREM from the deadline set."""
        member = deadline_member(code, kind)
        await self._run("clear deadline", lambda: self._client.zrem(DEADLINES_KEY, member))

    async def claim_deadlines(self, now_ms: int, lease_ms: int, limit: int) -> list[Deadline]:
        """Take due deadlines with a lease, in one script on one key."""
        lease = int(now_ms) + int(lease_ms)
        raw = await self._script("CLAIM_DEADLINES", [DEADLINES_KEY],
                                 [int(now_ms), lease, int(limit)])
        out = []
        for member, score in zip(raw[::2], raw[1::2], strict=True):
            code, _, kind = member.decode().rpartition("|")
            out.append(Deadline(code, kind, int(float(score)), lease))
        return out

    async def done_deadline(self, deadline: Deadline) -> None:
        """Remove the deadline unless it was set again since the claim."""
        member = deadline_member(deadline.code, deadline.kind)
        await self._script("DONE_DEADLINE", [DEADLINES_KEY], [member, deadline.lease_ms])

    async def get_results(self, code: str) -> bytes | None:
        """The encoded results, or None."""
        key = RoomKeys(code).results
        data: bytes | None = await self._run("get results", lambda: self._client.get(key))
        return data

    # ------------------------------------------------------------------ events

    async def publish(self, code: str, event: bytes) -> None:
        """Number the event, keep it in the room's history, and PUBLISH it (SPUBLISH on
        Cluster) — one script. A retried publish may deliver the event twice."""
        keys = RoomKeys(code)
        args = [event, keys.events, "1" if self._cluster else "0", HISTORY_LEN]
        args.append(secrets.token_hex(4))
        await self._script("PUBLISH", [keys.event_counter, keys.event_history, keys.room], args)

    async def _event_history(self, channel: str) -> tuple[bytes, int, list[Numbered]]:
        prefix = channel.removesuffix("events")
        keys = [prefix + "evseq", prefix + "evlog"]
        numbering, counter, raw = await self._script("HISTORY", keys, [])
        history = []
        for item in raw:
            try:
                history.append(split_message(item))
            except ValueError:
                log.error("malformed event in %s skipped", keys[1])
        return bytes(numbering), int(counter), history

    async def subscribe(self, code: str, handler: EventHandler) -> None:
        """Register ``handler``; the first handler of a room subscribes this process to
        it and returns once Redis confirmed (StoreUnavailable if it could not)."""
        await self._bus.subscribe(RoomKeys(code).events, handler)

    async def unsubscribe(self, code: str, handler: EventHandler) -> None:
        """Forget ``handler``; the last one of a room unsubscribes from its channel."""
        await self._bus.unsubscribe(RoomKeys(code).events, handler)

    # ------------------------------------------------------------------ life cycle

    async def durability(self) -> Durability:
        """Durable when every master has AOF on (``appendonly yes``): a restart replays
        every acknowledged write. Replicas alone are not enough (a failover may lose the
        writes not yet copied), so they count only with ``wait_replicas`` (every move
        waits for that many). None when CONFIG is refused (a managed Redis)."""
        try:
            if self._cluster:
                nodes = self._client.get_primaries()
                found = [await self._node_persistence(node) for node in nodes]
            else:
                found = [await self._node_persistence(None)]
        except StoreUnavailable as exc:
            if isinstance(exc.__cause__, ResponseError):  # CONFIG renamed or refused
                return Durability(None, f"persistence not readable: {exc.__cause__}")
            raise
        details = [detail for _, _, detail in found]
        wait = self._wait_replicas
        durable = all(aof or (wait and replicas >= wait) for aof, replicas, _ in found)
        if wait:
            details.append(f"moves acknowledged after WAIT {wait}")
        return Durability(durable, "; ".join(details))

    async def _node_persistence(self, node: Any) -> tuple[bool, int, str]:
        """(AOF on, connected replicas, a description) for one master (``None``: the
        standalone server)."""
        target = {"target_nodes": node} if node is not None else {}
        config = await self._run("config get", lambda: self._client.execute_command(
            "CONFIG", "GET", "appendonly", **target))
        info = await self._run("info", lambda: self._client.execute_command(
            "INFO", "replication", **target))
        pairs = config if isinstance(config, dict) else dict(zip(config[::2], config[1::2],
                                                                 strict=True))
        values = {as_text(k): as_text(v) for k, v in pairs.items()}
        aof = values.get("appendonly", "no") == "yes"
        replicas = int(info.get("connected_slaves", 0)) if isinstance(info, dict) else 0
        name = f"{node.host}:{node.port}" if node is not None else "redis"
        return aof, replicas, (
            f"{name}: appendonly {'yes' if aof else 'no'}, {replicas} replica(s)")

    async def healthy(self) -> bool:
        """True when Redis (every Cluster master) answers PING now."""
        try:
            if self._cluster:
                await self._run("ping", lambda: self._client.ping(target_nodes=PRIMARIES))
            else:
                await self._run("ping", self._client.ping)
        except StoreUnavailable:
            return False
        return True

    async def close(self) -> None:
        """Stop the subscribers and close every connection."""
        if self._committer is not None:
            await self._committer.close()
        await self._bus.close()
        await self._client.aclose()
