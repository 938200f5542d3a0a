"""Memory housekeeping for the search: the cyclic garbage collector is paused while a
search runs, and a large search's tables are freed by a background thread, so that
neither makes a search overrun its time budget (docs/SOLVER.md, "Budget")."""

from __future__ import annotations

import gc
import queue
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_gc_lock = threading.Lock()
_idle = threading.Condition(_gc_lock)  # notified when the last pending free is done
_pending_frees = 0
_gc_pausers = 0  # holds on the paused collector: running searches, tables being freed
_gc_was_enabled = False


FREE_IN_BACKGROUND = 2_000  # stored positions from which freeing them (~0.5 us each) is
# left to a background thread, so that a search returns within its time budget

PAUSE = 0.001  # seconds between slices (~1 ms each): another search in this process
# keeps most of the interpreter lock while an earlier one's tables are freed

_free_queue: queue.SimpleQueue[tuple[list[Any], set[int]]] | None = None


def _freer() -> queue.SimpleQueue[tuple[list[Any], set[int]]]:
    """The queue of the thread that frees finished searches' tables (started once)."""
    global _free_queue
    with _gc_lock:
        if _free_queue is None:
            _free_queue = queue.SimpleQueue()
            threading.Thread(target=_free_forever, args=(_free_queue,), name="solver-free",
                             daemon=True).start()
        return _free_queue


def _free_forever(todo: queue.SimpleQueue[tuple[list[Any], set[int]]]) -> None:
    """Free the tables put on ``todo`` (a million entries take 0.2-0.5 s), a slice at a
    time with a pause after each: one ``clear()`` would hold the interpreter lock all
    along, and the caller, or the next search, would wait for it."""
    global _pending_frees
    while True:
        heap, seen = todo.get()
        try:
            while heap:
                del heap[-2000:]
                time.sleep(PAUSE)
            pop = seen.pop
            while seen:
                for _ in range(min(2000, len(seen))):
                    pop()
                time.sleep(PAUSE)
        finally:
            del heap, seen
            _gc_release()
            with _idle:
                _pending_frees -= 1
                _idle.notify_all()


def drain(timeout: float | None = None) -> bool:
    """Wait until every table handed to the freeing thread has been freed (and the
    collector restored, when no search is running); False if ``timeout`` passed first."""
    with _idle:
        return _idle.wait_for(lambda: _pending_frees == 0, timeout)


def _gc_hold() -> None:
    """Pause Python's cyclic garbage collector (until the matching ``_gc_release``).

    A search stores up to millions of small tuples, and the collector's full passes over
    them took up to 0.2 s each (18% of a 5 s search), which made budgets overrun; the
    search creates no reference cycles, so nothing is left for the collector to find,
    and reference counting still frees memory at once. Holds are counted, so
    concurrent searches (server threads) restore the collector only when the last one
    ends, and only if it was enabled before the first."""
    global _gc_pausers, _gc_was_enabled
    with _gc_lock:
        if _gc_pausers == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pausers += 1


def _gc_release() -> None:
    """End one ``_gc_hold``."""
    global _gc_pausers
    with _gc_lock:
        _gc_pausers -= 1
        if _gc_pausers == 0 and _gc_was_enabled:
            gc.enable()


@contextmanager
def gc_paused() -> Iterator[None]:
    """The collector paused for the duration of a ``with`` block (``_gc_hold``)."""
    _gc_hold()
    try:
        yield
    finally:
        _gc_release()




def free_later(heap: list[Any], seen: set[int]) -> None:
    """Hand a finished search's tables to the freeing thread; the caller must drop its
    own references to them."""
    global _pending_frees
    _gc_hold()  # released once freed: a full pass over these tables takes long too
    with _gc_lock:
        _pending_frees += 1
    _freer().put((heap, seen))
