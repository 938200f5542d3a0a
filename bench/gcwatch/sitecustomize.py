"""Times every garbage collection of a benchmarked server without touching its code.

``bench/servers.py`` puts this directory on the server's ``PYTHONPATH`` with
``BENCH_GC_LOG=FILE``; Python imports ``sitecustomize`` at start-up, and this one hooks
``gc.callbacks``: each collection appends ``<generation> <pause seconds> <CPU seconds>``
to FILE. The pause is wall time, which on a shared machine includes time the process
waited for a core; the collecting thread's CPU time does not. The line is written from
the callback, after a collection, never on the move path. Without ``BENCH_GC_LOG`` it
does nothing.
"""

from __future__ import annotations

import gc
import os
import time

_path = os.environ.get("BENCH_GC_LOG")

if _path:
    _log = open(_path, "a", buffering=1, encoding="ascii")  # noqa: SIM115 - the process's life
    _started = [0.0, 0.0]

    def _timer(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            _started[:] = time.perf_counter(), time.thread_time()
        else:
            wall = time.perf_counter() - _started[0]
            cpu = time.thread_time() - _started[1]
            _log.write(f"{info['generation']} {wall:.6f} {cpu:.6f}\n")

    gc.callbacks.append(_timer)
