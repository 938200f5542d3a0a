"""The client address behind trusted proxies, and the per-minute windows (clock injected)."""

from __future__ import annotations

import pytest

from protocol import ProtocolError
from server.addresses import AddressBook, client_address, parse_networks
from server.config import ServerConfig

PROXIES = parse_networks(["10.1.0.0/16", "192.168.5.5"])


@pytest.mark.parametrize(("peer", "forwarded", "expected"), [
    (("203.0.113.7", 5000), "198.51.100.1", "203.0.113.7"),  # untrusted peer: header ignored
    (("10.1.2.3", 5000), "198.51.100.1", "198.51.100.1"),  # trusted proxy: its entry
    (("10.1.2.3", 5000), "6.6.6.6, 198.51.100.1", "198.51.100.1"),  # client-written left part
    (("10.1.2.3", 5000), "198.51.100.1, 192.168.5.5", "198.51.100.1"),  # two proxies
    (("10.1.2.3", 5000), "", "10.1.2.3"),  # no header: the proxy itself
    (("10.1.2.3", 5000), "not-an-ip", "not-an-ip"),  # a proxy's word, whatever it is
])
def test_client_address(peer: tuple[str, int], forwarded: str, expected: str) -> None:
    headers = {"X-Forwarded-For": forwarded} if forwarded else {}
    assert client_address(peer, headers, PROXIES) == expected


def test_without_trusted_proxies_the_peer_is_the_client() -> None:
    assert client_address(("10.1.2.3", 1), {"X-Forwarded-For": "1.2.3.4"}, ()) == "10.1.2.3"


def test_bad_cidr_is_refused() -> None:
    with pytest.raises(ValueError):
        parse_networks(["10.0.0.0/33"])


def test_windows_refill_after_a_minute_and_forget_idle_addresses() -> None:
    now = [1000.0]
    book = AddressBook(ServerConfig(room_creates_per_minute=2, failed_joins_per_minute=1),
                       clock=lambda: now[0])
    book.count_create("a")
    now[0] += 30
    book.count_create("a")
    with pytest.raises(ProtocolError) as refused:
        book.count_create("a")
    assert refused.value.code == "address_limit"
    book.count_create("b")  # per address
    now[0] += 30.5  # the first creation is now older than a minute: one more
    book.count_create("a")
    with pytest.raises(ProtocolError):
        book.count_create("a")
    book.failed_join("c")
    with pytest.raises(ProtocolError):
        book.check_join_allowed("c")
    conn = object()
    book.add("c", conn)
    now[0] += 61
    book.check_join_allowed("c")  # the failure is more than a minute old
    book.remove("c", conn)
    assert "c" not in book._entries  # nothing left to remember about c


def test_handshakes_per_minute() -> None:
    now = [0.0]
    book = AddressBook(ServerConfig(connects_per_minute=3, max_connections_per_address=2),
                       clock=lambda: now[0])
    assert [book.admit("a") for _ in range(3)] == [True, True, False]  # 2 open: the cap
    book.release("a")
    assert book.admit("a")  # the third handshake of this minute
    book.release("a")
    assert not book.admit("a")  # one open, but the minute's 3 handshakes are spent
    assert book.admit("b")  # another address has its own
    assert book.connections("a") == 1 and book.connections("b") == 1
    now[0] += 60.5
    assert book.admit("a")
    assert not book.admit("a")  # two open again
    for _ in range(2):
        book.release("a")
    book.release("b")
    now[0] += 61
    assert book.connections("a") == 0 and book.connections("b") == 0


def test_a_refused_admission_records_nothing() -> None:
    now = [0.0]
    book = AddressBook(ServerConfig(connects_per_minute=2, max_connections_per_address=10),
                       clock=lambda: now[0])
    assert book.admit("a") and book.admit("a")
    for _ in range(1000):
        assert not book.admit("a")
    assert len(book._entries["a"].connects) == 2  # the window holds the 2 admitted only
