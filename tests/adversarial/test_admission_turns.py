"""Door work in bounded turns (server/admission.py): a burst of admitted connections
starts at most ``handshakes_per_turn`` websocket handshakes per loop iteration, a burst
of refusals gets at most ``handshake_refusals_per_turn`` answers per iteration, and
between two turns the loop reads its sockets again.

The turns are driven by hand: the test puts its own scheduler in place of the loop's
``call_soon`` and runs each scheduled turn itself, so "per iteration" is exact and no
clock or sleep is involved. The connections are real (TCP on 127.0.0.1, a node in this
process)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from server.admission import Turns
from server.app import Server
from server.config import ServerConfig
from server.guard import GuardedConnection

from ..clocks import HandClock
from .test_admission_door import BEFORE_503, HANDSHAKE

pytestmark = pytest.mark.filterwarnings(
    "ignore:Overriding the \"event_loop_policy\" fixture:DeprecationWarning")

# --------------------------------------------------------------------------- Turns


def test_turns_run_at_most_per_turn_jobs_in_order_and_never_at_once() -> None:
    scheduled: list[Callable[[], None]] = []
    turns = Turns(4, scheduled.append)
    ran: list[int] = []
    for i in range(10):
        turns.add(lambda i=i: ran.append(i))  # type: ignore[misc]
    assert ran == [] and len(turns) == 10 and len(scheduled) == 1  # one turn, none run
    sizes = []
    while scheduled:
        before = len(ran)
        scheduled.pop(0)()
        sizes.append(len(ran) - before)
    assert sizes == [4, 4, 2] and ran == list(range(10)) and turns.ran == 10
    turns.add(lambda: ran.append(10))  # an idle queue schedules a turn again
    assert len(scheduled) == 1
    scheduled.pop()()
    assert ran[-1] == 10 and not scheduled


def test_a_failing_job_does_not_cost_the_others_their_turn() -> None:
    scheduled: list[Callable[[], None]] = []
    turns = Turns(2, scheduled.append)
    ran: list[str] = []

    def boom() -> None:
        raise RuntimeError("job failed")

    for job in (boom, lambda: ran.append("b"), lambda: ran.append("c")):
        turns.add(job)
    with pytest.raises(RuntimeError, match="job failed"):
        scheduled.pop()()
    assert ran == ["b"] and len(scheduled) == 1  # the next turn is still scheduled
    scheduled.pop()()
    assert ran == ["b", "c"] and not scheduled


def test_a_turn_must_do_something() -> None:
    with pytest.raises(ValueError):
        Turns(0, lambda job: None)


# --------------------------------------------------------------------------- the node


@pytest.fixture(params=["asyncio", "uvloop"])
def event_loop_policy(request: pytest.FixtureRequest) -> asyncio.AbstractEventLoopPolicy:
    """The node's tests on both loops: ``solrace serve`` runs uvloop, which starts
    reading a connection after its ``connection_made`` even if it paused (the door keeps
    that first read for the connection)."""
    if request.param == "uvloop":
        import uvloop

        return uvloop.EventLoopPolicy()
    return asyncio.DefaultEventLoopPolicy()


class Counted:
    """Calls of a method of ``server``, with an event once ``target`` is reached."""

    def __init__(self, server: Server, name: str) -> None:
        self.n = 0
        self.target = 0
        self.reached = asyncio.Event()
        original = getattr(server, name)

        def counted(*args: Any) -> Any:
            self.n += 1
            if self.n >= self.target:
                self.reached.set()
            return original(*args)

        setattr(server, name, counted)  # the door calls the gate's bound attribute

    async def until(self, target: int) -> None:
        """Wait (bounded) for the ``target``-th call."""
        self.target = target
        if self.n >= target:
            return
        self.reached.clear()
        await asyncio.wait_for(self.reached.wait(), 10)


@pytest.fixture
async def node(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[Server, list[Any]]]:
    """A node in this process (budget on a hand clock: 6 handshakes, no refill) whose door
    turns are held by the test, and the list of connections it has built."""
    built: list[GuardedConnection] = []
    connection_init = GuardedConnection.__init__

    def count_connection(self: GuardedConnection, *args: Any, **kwargs: Any) -> None:
        built.append(self)
        connection_init(self, *args, **kwargs)

    monkeypatch.setattr(GuardedConnection, "__init__", count_connection)
    server = Server(ServerConfig(
        host="127.0.0.1", port=0, allow_volatile_store=True, handshake_burst=8,
        handshakes_per_s=8.0, connects_per_minute=1000, handshakes_per_turn=2,
        handshake_refusals_per_turn=3, monotonic=HandClock()))
    await server.start()
    yield server, built
    await server.stop()


async def _open(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(HANDSHAKE)
    await writer.drain()
    return reader, writer


async def test_a_burst_of_admissions_starts_two_handshakes_per_turn(
        node: tuple[Server, list[Any]]) -> None:
    server, built = node
    turns = server.door_turns
    assert turns is not None
    held: list[Callable[[], None]] = []
    turns.handshakes.call_soon = held.append
    admitted = Counted(server, "admit")
    clients = [await _open(server.port) for _ in range(6)]
    await admitted.until(6)
    # All six admitted at accept (the node's budget is spent), none built: each waits
    # its turn with its request head unread (or kept by its door)
    assert server.admitted == 6 and built == [] and len(turns.handshakes) == 6
    assert len(held) == 1  # one turn scheduled for the lot
    per_turn = []
    while held:
        before = len(built)
        held.pop(0)()
        per_turn.append(len(built) - before)
    assert per_turn == [2, 2, 2]
    # Every one of them completes its handshake (nothing it sent was lost meanwhile)
    for reader, _ in clients:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        assert head.startswith(b"HTTP/1.1 101 ")
    for _, writer in clients:
        writer.close()


async def test_an_admission_that_ends_before_its_turn_is_released_once(
        node: tuple[Server, list[Any]]) -> None:
    server, _ = node
    turns = server.door_turns
    assert turns is not None
    held: list[Callable[[], None]] = []
    turns.handshakes.call_soon = held.append
    admitted = Counted(server, "admit")
    released = Counted(server, "release")
    _, writer = await _open(server.port)
    await admitted.until(1)
    assert server.admitted == 1 and released.n == 0
    writer.transport.abort()  # the client goes away while its door waits (not reading)
    held.pop()()  # its turn: the node reads again and sees the end
    await released.until(1)
    assert server.admitted == 0 and released.n == 1 and not held
    assert len(turns.handshakes) == 0


async def test_a_burst_of_refusals_is_answered_three_per_turn(
        node: tuple[Server, list[Any]]) -> None:
    server, _ = node
    turns = server.door_turns
    assert turns is not None
    admitted = Counted(server, "admit")
    # Spend the budget (8) on connections opened normally, then hold the refusals' turns
    keep = [await _open(server.port) for _ in range(8)]
    await admitted.until(8)
    held: list[Callable[[], None]] = []
    turns.refusals.call_soon = held.append
    # Each refused door adds its answer once it has read the request head
    heads = asyncio.Event()
    add = turns.refusals.add

    def counted_add(job: Callable[[], None]) -> None:
        add(job)
        if len(turns.refusals) >= 7:
            heads.set()

    turns.refusals.add = counted_add  # type: ignore[method-assign]
    refused = [await _open(server.port) for _ in range(7)]
    await asyncio.wait_for(heads.wait(), 10)
    assert admitted.n == 15  # 8 admitted, 7 refused 503 (the budget is spent)
    assert len(held) == 1 and len(turns.refusals) == 7
    per_turn = []
    while held:
        before = turns.refusals.ran
        held.pop(0)()
        per_turn.append(turns.refusals.ran - before)
    assert per_turn == [3, 3, 1]
    for reader, _ in refused:  # each got the node's 503, byte for byte
        assert await asyncio.wait_for(reader.read(), 10) == BEFORE_503
    for _, writer in keep + refused:
        writer.close()
