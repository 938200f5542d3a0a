"""Admission work in bounded turns: at most so many admitted handshakes started, and so
many refusals answered, per event-loop iteration.

An event loop runs every callback that is ready, then reads its sockets again. Under a
connection flood the TCP connections and their request heads arrive in bursts: one read
of the sockets could find ~100 request heads (the node's handshake burst), and the next
iteration then ran ~100 websocket handshakes (~1 ms of the loop each) back to back,
while an honest player's move, already in its socket, waited for the iteration's end
(`bench/attack`'s conn-flood, 3,000 connections from 50 addresses: iterations of
40-106 ms with no other work in them; docs/SECURITY.md, "Admission in turns").

``Turns`` is the queue that spreads such a burst: jobs added during an iteration run in
the following ones, at most ``per_turn`` per iteration, first come first served; between
two turns the loop reads its sockets, so a move that arrived meanwhile is read and acked
after at most one turn's work. An admitted connection waits its turn with its reading
paused (``server/guard.py``, ``Door``): its request head stays in the kernel until its
handshake may start. A refused one waits only for its canned answer (write and close).

The scheduler is injected (``call_soon``: the running loop's in the server, a list in
the tests), so the bound is checked without a clock or a socket.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any


class Turns:
    """At most ``per_turn`` jobs per loop iteration (module docstring)."""

    def __init__(self, per_turn: int, call_soon: Callable[[Callable[[], None]], Any]) -> None:
        if per_turn < 1:
            raise ValueError(f"per_turn must be >= 1, not {per_turn}")
        self.per_turn = per_turn
        # Schedules the next turn (the loop's call_soon; a test holds the turns by
        # putting its own here before the burst).
        self.call_soon = call_soon
        self._jobs: deque[Callable[[], None]] = deque()
        self._scheduled = False
        self.ran = 0  # jobs run so far (tests and the kit's probes read it)

    def __len__(self) -> int:
        """Jobs waiting their turn."""
        return len(self._jobs)

    def add(self, job: Callable[[], None]) -> None:
        """Run ``job`` in a later loop iteration, after the jobs added before it. Never
        runs it now: the caller's iteration has its own work."""
        self._jobs.append(job)
        if not self._scheduled:
            self._scheduled = True
            self.call_soon(self._turn)

    def _turn(self) -> None:
        """One iteration's share: the first ``per_turn`` jobs; if any are left, the next
        turn is scheduled (after the loop has read its sockets again). A job that raises
        does not stop the others (it is logged by the loop's handler after the turn)."""
        jobs = self._jobs
        error: BaseException | None = None
        for _ in range(min(self.per_turn, len(jobs))):
            job = jobs.popleft()
            self.ran += 1
            try:
                job()
            except Exception as exc:  # the next jobs still get their turn
                error = error or exc
        if jobs:
            self.call_soon(self._turn)
        else:
            self._scheduled = False
        if error is not None:
            raise error
