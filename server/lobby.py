"""Entering and leaving rooms: create, join, resume (tokens), leave, disconnect, list.

Tokens are ``"<code>.<seat>.<secret>"``; the store keeps only SHA-256 of the secret.
Resuming takes the seat (epoch + 1), which fences off the previous holder wherever it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import unicodedata
from collections.abc import AsyncIterator
from typing import Any, Protocol

import msgspec

import engine
from protocol import Code, ProtocolError, tokens
from protocol.messages import (
    CreateRoom,
    Hello,
    RoomList,
    RoomSettings,
    RoomSummary,
    Verdict,
)

from . import events as ev
from . import logs, race
from .addresses import AddressBook
from .core import machine as core
from .room import Host, Member, Room
from .room import Peer as Connection
from .seeds import choose_seed
from .store import RoomRecord, SeatRecord
from .store.base import Cursor
from .verdicts import VerdictPool

log = logging.getLogger(__name__)


class Server(Host, Protocol):
    """The node as the lobby sees it (``app.Server`` is one)."""

    node_id: str
    verdicts: VerdictPool
    addresses: AddressBook
    rooms: dict[str, Room]
    lobby_gate: LobbyGate  # the node's one gate for lobby operations

    async def local_room(self, record: RoomRecord) -> Room:
        """This node's room for ``record.code``, opened once and shared."""


class LobbyGate:
    """At most ``limit`` lobby operations (create, join, leave, list) of a node in
    progress at once; the others wait their turn, first come first served. A burst of
    lobby work then cannot fill every loop iteration with its store round trips'
    continuations while a racer's move waits for its own few iterations
    (``ServerConfig.lobby_concurrency``). ``changed`` is set whenever a slot is taken
    or given back (for observers: tests, metrics)."""

    def __init__(self, limit: int) -> None:
        self._slots = asyncio.Semaphore(max(1, limit))
        self.inside = 0  # operations holding a slot
        self.waiting = 0  # operations waiting for one
        self.changed = asyncio.Event()

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold a slot for the body (waiting for one first, if none is free)."""
        self.waiting += 1
        self.changed.set()
        try:
            await self._slots.acquire()
        finally:
            self.waiting -= 1
        self.inside += 1
        self.changed.set()
        try:
            yield
        finally:
            self.inside -= 1
            self._slots.release()
            self.changed.set()


CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"  # no 0/O, 1/I/L: codes are read aloud
# 31**10 = 2**49.5 codes; with at most max_live_rooms (10,000) rooms live a guess hits
# with odds 2**-36.2, and an address gets failed_joins_per_minute (10) guesses a minute:
# docs/SECURITY.md, "Room codes".
CODE_LENGTH = 10


def validate_settings(settings: RoomSettings) -> RoomSettings:
    """The settings with every option of the variant resolved, or ``bad_settings`` with
    the engine's message."""
    try:
        variant = engine.get_variant(settings.variant)
        options = variant.resolve_options(settings.options)
    except engine.EngineError as exc:
        raise ProtocolError(Code.BAD_SETTINGS, str(exc)) from None
    if settings.spectator_delay_s and not settings.spectators:
        raise ProtocolError(Code.BAD_SETTINGS, "a spectator delay needs spectators on")
    return msgspec.structs.replace(settings, options=options)


async def create(server: Server, conn: Connection, msg: CreateRoom) -> None:
    """Create a room and enter it as its first player (or as a spectator). The
    address's creation cap and the node's room cap refuse first, before any other work
    (a flood of creates past them costs two comparisons each); a creation is counted
    against the address once it passed every check, just before the store."""
    server.addresses.check_create(conn.address)
    if len(server.rooms) >= server.config.max_live_rooms:
        raise ProtocolError(Code.NODE_FULL)
    conn.count_room()
    settings = validate_settings(msg.settings)
    if msg.as_player:  # before the room exists: a refused seat leaves no empty room
        server.addresses.check_seat(conn.address, _holds_seat)
    if not msg.as_player and not settings.spectators:
        raise ProtocolError(Code.SPECTATORS_OFF, "a room without spectators needs a player creator")
    server.addresses.count_create(conn.address)
    async with server.lobby_gate.slot():  # the store work waits its turn (LobbyGate)
        await _create(server, conn, msg, settings)


async def _create(server: Server, conn: Connection, msg: CreateRoom,
                  settings: RoomSettings) -> None:
    """``create`` once every check passed: the seed, the room, its first member."""
    seed, winnable, par = await choose_seed(server, settings)
    salt = engine.new_salt()
    for _ in range(20):
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
        record = RoomRecord(
            code=code, settings=msgspec.to_builtins(settings), seed=seed, salt=salt,
            commitment=engine.commitment(seed, salt), creator=1 if msg.as_player else 0,
            created_ms=server.config.clock(), winnable=winnable, par=par,
        )
        if await server.store.create_room(record):
            break
    else:  # pragma: no cover - 31**6 codes
        raise ProtocolError(Code.INTERNAL, "could not allocate a room code")
    # A room that never starts must not live for ever; the start extends the TTL to
    # cover the race and its results (race.carry_out, at the countdown).
    await server.store.expire_room(record.code, server.config.lobby_ttl_s)
    await server.store.set_deadline(record.code, "lobby",
                                    record.created_ms + server.config.lobby_ttl_s * 1000)
    if winnable is None:  # a random deal: its verdict is searched off the loop meanwhile
        # Counted per client address: one client opening many connections gets no more
        # searches than one connection would (loopback without an address: the conn).
        server.verdicts.request(record, settings.variant, dict(settings.options),
                                client=conn.address or f"{server.node_id}/{conn.id}")
    if msg.as_player:
        # The room is this connection's, made a moment ago under a fresh secret code:
        # no seat to read (a store round trip saved on every creation).
        await _join_player(server, conn, record, seats=[])
    else:
        await _enter(server, conn, record, Member(conn, 0, created=True))


async def join(server: Server, conn: Connection, code: str, role: str) -> None:
    """Join a room by code as a player (lobby only) or a spectator. An address that
    named too many unknown rooms in the last minute is refused before the lookup."""
    server.addresses.check_join_allowed(conn.address)
    async with server.lobby_gate.slot():  # the store work waits its turn (LobbyGate)
        await _join(server, conn, code, role)


async def _join(server: Server, conn: Connection, code: str, role: str) -> None:
    """``join`` past the address's cap."""
    record = _watched_here(server, code.upper()) if role == "spectator" else None
    if record is None:
        record = await server.store.get_room(code.upper())
    if record is None:
        server.addresses.failed_join(conn.address)
        raise ProtocolError(Code.NO_SUCH_ROOM, f"no room {code!r}")
    conn.count_room()
    if role == "player":
        if record.phase != "lobby":
            raise ProtocolError(Code.ROOM_CLOSED, f"room {record.code} is {record.phase}")
        await _join_player(server, conn, record)
        return
    settings = msgspec.convert(record.settings, RoomSettings)
    if not settings.spectators:
        raise ProtocolError(Code.SPECTATORS_OFF)
    _check_spectators(server, record.code, batched=bool(getattr(conn, "batched", False)))
    await _enter(server, conn, record, Member(conn, 0))


def _watched_here(server: Server, code: str) -> RoomRecord | None:
    """The record of a race this node holds (countdown or running), for a spectator's
    join: its lookup then costs no store round trip (joins in a loop are a flood,
    docs/SECURITY.md). Safe because
    ``_enter`` reads the record from the store again once the spectator is attached,
    and a race's record outlives the race in the store; a lobby (which may expire) or a
    finished room (whose results expire) is looked up in the store as before."""
    room = server.rooms.get(code)
    if room is None or room.closed or room.phase not in ("countdown", "running"):
        return None
    return room.record


def _check_spectators(server: Server, code: str, *, batched: bool) -> None:
    """``room_full`` if the room already has ``max_spectators_per_room`` spectators on
    this node: every move goes to each of them, in one burst on the event loop
    (ServerConfig); or, for a spectator whose hello did not set ``ds`` (it takes a
    ``Progress`` and a ``Diff`` frame per move instead of one ``Diffs`` frame per tick),
    if the room has ``max_legacy_spectators_per_room`` such spectators: a crowd of them
    would cost the node two frames per move each. O(1) while the room's members are
    fewer than the cap that applies, O(members) from there (bounded by the cap plus
    its seats)."""
    room = server.rooms.get(code)
    if room is None:
        return
    cap = server.config.max_spectators_per_room
    legacy_cap = server.config.max_legacy_spectators_per_room
    # No count while the room's members (players included) are fewer than the cap that
    # applies: neither can be reached then. Counting on every join made a crowd's joins
    # quadratic (1,500 joins into one room scanned 1.1 million members).
    if len(room.members) < (cap if batched else min(cap, legacy_cap)):
        return
    spectators = [m for m in room.members.values() if not m.is_player]
    if len(spectators) >= cap:
        raise ProtocolError(Code.ROOM_FULL,
                            f"room {code} has {cap} spectators on this node; try later")
    if not batched and sum(not m.batched for m in spectators) >= legacy_cap:
        raise ProtocolError(Code.ROOM_FULL,
                            f"room {code} has {legacy_cap} spectators taking a frame per "
                            "move on this node; a client that takes Diffs frames (hello "
                            "ds) may still join")


async def _reclaim_offline_seat(server: Server, code: str) -> bool:
    """A full lobby frees one seat whose holder is offline (disconnected; its token can
    no longer resume it): join-and-disconnect must not squat public rooms. The removal
    is fenced by the seat's epoch, so a holder resuming at that moment keeps it."""
    for seat in await server.store.get_seats(code):
        if not seat.connected and await server.store.remove_seat(code, seat.seat, seat.epoch):
            return True
    return False


def _holds_seat(conn: Any) -> bool:
    """The connection holds a seat in a room that is not finished."""
    member, room = conn.member, conn.room
    return bool(member is not None and member.is_player and room is not None
                and room.phase != "finished")


def _check_address(server: Server, conn: Connection, seats: list[SeatRecord],
                   settings: RoomSettings) -> None:
    """One seat per address in a hidden-information room (face-down cards) unless
    ``shared_address_seats``: a second seat on the same deal would show the first one's
    face-down cards (issue 17). ``seats``: the room's."""
    if server.config.shared_address_seats or not hides_cards(settings):
        return
    if any(s.address == conn.address for s in seats):
        raise ProtocolError(Code.SAME_ADDRESS)


def hides_cards(settings: RoomSettings) -> bool:
    """True if the room's deal has face-down cards (the same deal on every seat: a card
    one seat has turned up is face down on another's board)."""
    variant = engine.get_variant(settings.variant)
    return bool(variant.make_rules(settings.options).has_face_down)


def same_name(name: str) -> str:
    """A seat name as compared for uniqueness in a room: NFC-normalised, spaces trimmed,
    case-folded ("Ann " and "ann" are the same name)."""
    return unicodedata.normalize("NFC", name).strip().casefold()


async def _join_player(server: Server, conn: Connection, record: RoomRecord,
                       seats: list[SeatRecord] | None = None) -> None:
    """Take a seat in ``record``'s lobby. ``seats``: the room's seats when the caller
    knows them (a room it created a moment ago has none), else they are read once for
    both checks below."""
    settings = msgspec.convert(record.settings, RoomSettings)
    # The address's seat cap first: a refused seat costs no store round trip.
    server.addresses.check_seat(conn.address, _holds_seat)
    if seats is None:
        seats = await server.store.get_seats(record.code)
    _check_address(server, conn, seats, settings)
    # Names are unique among a room's seats (a resume keeps its seat's name; spectators
    # have no seat). The checks and add_seat are two steps: two joins with one name (or
    # from one address) at the same instant can still both get a seat.
    wanted = same_name(conn.name)
    if any(same_name(s.name) == wanted for s in seats):
        raise ProtocolError(Code.NAME_TAKEN,
                            f"the name {conn.name.strip()} is taken in room {record.code}: "
                            "pick another")
    secret = tokens.new_secret()
    seat = SeatRecord(seat=0, name=conn.name, bot=conn.bot, token_hash=tokens.secret_hash(secret),
                      address=conn.address)
    number = await server.store.add_seat(record.code, seat, settings.max_players)
    if number is None and await _reclaim_offline_seat(server, record.code):
        number = await server.store.add_seat(record.code, seat, settings.max_players)
    if number is None:
        now = await server.store.get_room(record.code)
        if now is None or now.phase != "lobby":
            raise ProtocolError(Code.ROOM_CLOSED, f"room {record.code} has started")
        raise ProtocolError(Code.ROOM_FULL, f"room {record.code} has {settings.max_players} seats")
    member = Member(conn, number, epoch=seat.epoch)
    token = tokens.make_token(record.code, number, secret)
    try:
        room = await _enter(server, conn, record, member, token=token)
    except BaseException:
        # The seat exists but nobody got its token: mark it offline, so it does not hold
        # up the start (best effort: the store may be what failed).
        with contextlib.suppress(Exception):
            await server.store.update_seat(record.code, number, connected=False)
        raise
    await room.publish_seats()


async def resume(server: Server, conn: Connection, hello: Hello) -> None:
    """Resume a seat with its token: take it over (epoch + 1; the previous connection is
    closed with ``taken_over``) and send ``Joined``: without the seat's board and then
    the diffs after ``hello.seen`` when the client is within ``snapshot_after`` moves
    (``0 < seen ≤ n``), else with the board as of now and no diff."""
    code, seat_no, secret = tokens.parse_token(hello.token or "")
    record = await server.store.get_room(code)
    seat = await server.store.get_seat(code, seat_no) if record else None
    if record is None or seat is None or not tokens.secret_matches(secret, seat.token_hash):
        raise ProtocolError(Code.BAD_TOKEN, "unknown or expired resume token")
    if record.phase == "finished":
        raise ProtocolError(Code.BAD_TOKEN, "the race is over: join as a spectator for results")
    conn.count_room()
    epoch = await server.store.take_seat(code, seat_no)
    server.metrics.resumes.inc()
    await server.store.update_seat(code, seat_no, connected=True)
    conn.name, conn.bot = seat.name, seat.bot
    member = Member(conn, seat_no, epoch=epoch)
    room = await _enter(server, conn, record, member, seen=hello.seen)
    await room.publish(ev.TakenOver(seat_no, epoch))
    await race.run(room, core.Resumed(seat_no))


async def _enter(
    server: Server, conn: Connection, record: RoomRecord, member: Member,
    token: str | None = None, seen: int | None = None,
) -> Room:
    """Put ``member`` in the room and send its ``Joined`` (and resume diffs, results)."""
    room = await server.local_room(record)
    room.attach(member)
    conn.room, conn.member = room, member
    logs.bind(room=room.code, seat=member.seat)  # tags this connection's later log lines
    try:
        await room.refresh()  # after subscribing: nothing published from now on is missed
        phase = room.phase
        resume_msgs: list[Any] = []
        near = False  # a resume within reach: the client keeps its board, the D's follow
        if member.is_player and phase in ("running", "finished"):
            seat = await server.store.get_seat(room.code, member.seat)
            n = seat.moves if seat else 0  # the log's length (stored with each move)
            # s = 0 is a client without a board (a new process, a desync): it gets one.
            near = (seen is not None and 0 < seen <= n
                    and n - seen <= server.config.snapshot_after)
            # from the seat's checkpoint, not the whole log (docs/SERVER.md "Snapshots")
            rebuilt = await room.rebuild_seat(member.seat, upto=n,
                                              diffs_after=seen if near else None)
            member.game, member.seq = rebuilt.game, rebuilt.seq
            member.status = seat.status if seat else "playing"
            member.progress_ms = seat.progress_ms if seat else None
            member.reached = rebuilt.reached
            if near:
                resume_msgs = list(rebuilt.diffs)
        seats = await server.store.get_seats(room.code)
        boards = [] if near else await room.boards_for(member, seats)
        member.started_sent = phase in ("running", "finished")
        for s in seats:
            member.progress_seen[s.seat] = s.moves
        conn.send(room.joined_message(member, seats, boards, token))
        for message in resume_msgs:
            conn.send(message)
        if phase == "finished":
            results = await server.store.get_results(room.code)
            if results is not None:
                member.results_sent = True
                conn.send_frame(results)
                record = room.record
                if record.winnable is not None:  # it may have been decided after them
                    conn.send(Verdict(code=room.code, winnable=record.winnable,
                                      par=record.par))
        room.ready(member)
    except BaseException:
        room.detach(conn)
        conn.room = conn.member = None
        await server.release_room(room)
        raise
    return room


async def leave(server: Server, conn: Connection) -> None:
    """Leave the room (the connection stays open). A lobby seat is freed; a seat in a
    race stays, and its token can resume it until the results."""
    room, member = conn.room, conn.member
    if room is None or member is None:
        raise ProtocolError(Code.NOT_IN_ROOM)
    async with server.lobby_gate.slot():  # lobby work: waits its turn (LobbyGate)
        await drop(server, conn, give_up_seat=True)


async def drop(server: Server, conn: Connection, give_up_seat: bool = False) -> None:
    """The connection left its room (leave or disconnect). A lobby seat left on
    purpose (``give_up_seat``) is freed; otherwise the core marks the seat offline (if
    the connection still holds it) and arms the abandon deadline for a seat still
    racing an untimed race."""
    room, member = conn.room, conn.member
    conn.room = conn.member = None
    if room is None or member is None:
        return
    room.detach(conn)
    try:
        if (give_up_seat and member.is_player and room.phase == "lobby"
                and await server.store.remove_seat(room.code, member.seat, member.epoch)):
            # A seat left in the lobby is freed (join-and-leave squatted public rooms
            # full); its token is void. The others may all be ready now.
            await room.publish_seats()
            await race.run(room, core.Check())
        elif member.is_player:  # after the results too: a leaver cannot ask for a rematch
            await race.run(room, core.Left(member.seat, member.epoch))
    finally:
        await server.release_room(room)


async def list_rooms(server: Server, before: str | None = None) -> RoomList:
    """One page (``list_page`` rooms) of the open public rooms, newest first, after the
    cursor ``before``; a fixed number of store round trips whatever the room count."""
    cursor: Cursor | None = None
    if before is not None:
        ms, _, code = before.partition(".")
        cursor = (int(ms), code)  # the decoder checked the form
    async with server.lobby_gate.slot():  # lobby work: waits its turn (LobbyGate)
        listed, after = await server.store.list_public(cursor, server.config.list_page)
    out = []
    for record, seats in listed:
        settings = msgspec.convert(record.settings, RoomSettings)
        out.append(RoomSummary(
            code=record.code, variant=settings.variant, options=dict(settings.options),
            rank_by=settings.rank_by, phase=record.phase,
            players=len(seats), max_players=settings.max_players,
            bots=sum(s.bot for s in seats), spectators=settings.spectators,
        ))
    return RoomList(rooms=out, next=None if after is None else f"{after[0]}.{after[1]}")
