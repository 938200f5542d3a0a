"""Per client address: who the client is (behind trusted proxies only), and what one
address may hold or do on this node.

The address is the TCP peer's IP, unless the peer is one of ``ServerConfig.trusted_proxies``
(CIDRs): then it is the right-most ``X-Forwarded-For`` entry that is not itself a trusted
proxy (each proxy appends the address it saw; entries to the left of the first untrusted
one were written by the client and prove nothing).

``AddressBook`` keeps, per address: a count of the TCP connections admitted for it
(charged when the server admits one, before any websocket work, and released when it
ends: the connection cap is one comparison), its connections past the handshake (the
seat count is read from them) and three one-minute windows (handshakes, room creations,
failed joins by code). Every window holds at most its cap of timestamps, a refusal adds
nothing to it, and an address is forgotten once it has no connection and empty windows,
so the book is bounded by the addresses active in the last minute.
"""

from __future__ import annotations

import ipaddress
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from protocol import Code, ProtocolError

from .config import ServerConfig

WINDOW_S = 60.0  # the per-minute caps count over the last minute

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(cidrs: Iterable[str]) -> tuple[Network, ...]:
    """The CIDRs as networks (a bare address is a /32 or /128); ``ValueError`` names a
    bad one."""
    return tuple(ipaddress.ip_network(c.strip(), strict=False) for c in cidrs)


def is_trusted(ip: str, networks: tuple[Network, ...]) -> bool:
    """True if ``ip`` (a string; anything unparsable is not) is in one of ``networks``."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return False
    return any(address in net for net in networks)


def client_address(peer: Any, headers: Mapping[str, str] | None,
                   trusted: tuple[Network, ...]) -> str:
    """The client's address (module docstring): ``peer`` is the socket's remote address
    (a tuple, or None for a socket that went away), ``headers`` the handshake's."""
    ip = str(peer[0]) if isinstance(peer, tuple) and peer else str(peer or "")
    if not trusted or not is_trusted(ip, trusted) or headers is None:
        return ip
    forwarded = ",".join(v for k, v in _items(headers) if k.lower() == "x-forwarded-for")
    for hop in reversed([h.strip() for h in forwarded.split(",") if h.strip()]):
        if not is_trusted(hop, trusted):
            return hop
    return ip


def _items(headers: Mapping[str, str]) -> Iterable[tuple[str, str]]:
    raw = getattr(headers, "raw_items", None)  # websockets' Headers keep repeated headers
    return raw() if callable(raw) else headers.items()


@dataclass
class _Entry:
    admitted: int = 0  # TCP connections charged to the address and not ended
    connections: set[Any] = field(default_factory=set)
    creates: deque[float] = field(default_factory=deque)
    connects: deque[float] = field(default_factory=deque)
    failed_joins: deque[float] = field(default_factory=deque)


def _fresh(window: deque[float], now: float) -> deque[float]:
    while window and window[0] <= now - WINDOW_S:
        window.popleft()
    return window


class AddressBook:
    """What each client address holds and did in the last minute (module docstring)."""

    def __init__(self, config: ServerConfig, clock: Callable[[], float] | None = None) -> None:
        self.config = config
        self.clock = clock or config.monotonic
        self._entries: dict[str, _Entry] = {}
        self._prune_at = 1024  # prune forgotten addresses when the book grows past this

    def __len__(self) -> int:
        return len(self._entries)

    def connections(self, address: str) -> int:
        """Connections admitted for ``address`` and not ended (handshakes included)."""
        entry = self._entries.get(address)
        return entry.admitted if entry else 0

    def admit(self, address: str) -> bool:
        """Charge one connection to ``address`` if it is under its cap of open
        connections and of handshakes in the last minute (reconnecting in a loop costs a
        handshake each time); False, charging and recording nothing, if not. O(1) but
        for dropping timestamps older than a minute. Each True needs one ``release``."""
        if self.allowed(address) is None:
            return False
        self.charge(address)
        return True

    def allowed(self, address: str) -> int | None:
        """None if ``address`` is at its cap of open connections or of handshakes in the
        last minute, else its handshakes in the last minute (the node's handshake budget
        tells light addresses from busy ones by it). Charges and records nothing."""
        entry = self._entries.get(address)
        if entry is None:
            return 0
        if entry.admitted >= self.config.max_connections_per_address:
            return None
        recent = len(_fresh(entry.connects, self.clock()))
        return None if recent >= self.config.connects_per_minute else recent

    def charge(self, address: str) -> None:
        """Charge one connection (and one handshake) to ``address``, with no check (after
        ``allowed``). Each charge needs one ``release``."""
        entry = self._entry(address)
        entry.connects.append(self.clock())
        entry.admitted += 1

    def release(self, address: str) -> None:
        """A connection ``admit`` charged to ``address`` ended."""
        entry = self._entries.get(address)
        if entry is not None:
            entry.admitted = max(0, entry.admitted - 1)
            self._forget_if_idle(address, entry)

    def add(self, address: str, conn: Any) -> None:
        """``conn`` from ``address`` is open."""
        self._entry(address).connections.add(conn)

    def remove(self, address: str, conn: Any) -> None:
        """``conn`` closed."""
        entry = self._entries.get(address)
        if entry is not None:
            entry.connections.discard(conn)
            self._forget_if_idle(address, entry)

    def check_create(self, address: str) -> None:
        """``address_limit`` if the address made its per-minute cap of rooms; counts
        nothing (a create checks this before any other work, and ``count_create`` once
        the room is about to be made)."""
        self._check_window(address, "creates", self.config.room_creates_per_minute,
                           "room creations per minute")

    def count_create(self, address: str) -> None:
        """Count a room creation, or ``address_limit`` past the per-minute cap."""
        self.check_create(address)
        self._entry(address).creates.append(self.clock())

    def check_join_allowed(self, address: str) -> None:
        """``address_limit`` if the address failed too many joins by code in the last
        minute (checked before the code is looked up: a guesser learns nothing more)."""
        self._check_window(address, "failed_joins", self.config.failed_joins_per_minute,
                           "joins to unknown rooms in a minute")

    def _check_window(self, address: str, window: str, cap: int, label: str) -> None:
        entry = self._entries.get(address)
        if entry is not None and len(_fresh(getattr(entry, window), self.clock())) >= cap:
            raise ProtocolError(Code.ADDRESS_LIMIT,
                                f"more than {cap} {label} from your address; wait")

    def failed_join(self, address: str) -> None:
        """A join by code from ``address`` named no room."""
        window = _fresh(self._entry(address).failed_joins, self.clock())
        if len(window) < self.config.failed_joins_per_minute:  # bounded by the cap
            window.append(self.clock())

    def check_seat(self, address: str, seats_held: Callable[[Any], bool]) -> None:
        """``address_limit`` if the address's connections already hold the cap of seats
        (``seats_held(conn)``: the connection holds a seat in a room not finished)."""
        entry = self._entries.get(address)
        held = sum(1 for c in entry.connections if seats_held(c)) if entry else 0
        cap = self.config.max_seats_per_address
        if held >= cap:
            raise ProtocolError(Code.ADDRESS_LIMIT,
                                f"your address already holds {cap} seats on this node")

    def _entry(self, address: str) -> _Entry:
        entry = self._entries.get(address)
        if entry is None:
            if len(self._entries) >= self._prune_at:
                self._prune()
            entry = self._entries[address] = _Entry()
        return entry

    def _forget_if_idle(self, address: str, entry: _Entry) -> None:
        now = self.clock()
        if (not entry.admitted and not entry.connections and not _fresh(entry.creates, now)
                and not _fresh(entry.failed_joins, now) and not _fresh(entry.connects, now)):
            del self._entries[address]

    def _prune(self) -> None:
        for address, entry in list(self._entries.items()):
            self._forget_if_idle(address, entry)
        # amortised: the next prune comes after as many new addresses as are kept now
        self._prune_at = max(1024, 2 * len(self._entries))
