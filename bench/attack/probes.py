"""Where the honest player's latency goes, phase by phase: what the kernel and the server
itself say while the quiet and attack phases run.

At every phase boundary the runner takes a ``Snapshot``: each process's scheduler
accounting (``/proc/PID/schedstat``: CPU time, time spent runnable but waiting for a
core, and how many times it got one) for the server, the honest player, Redis and the
kit's own process, and the server's ``/metrics`` (its move→ack, store-call and
event-loop-lag histograms). ``Phases`` sums the differences over every quiet and every
attack window, so the report says, for each kind of phase:

- ``runq_wait_ms_per_s``: how long each process waited for a core per second of the
  phase (CPU contention: a process that waits is not running, whatever its code);
  ``runq_wait_per_wakeup_ms``: the same per time it was scheduled;
- ``server_loop_lag``: how late the server's loop-lag probe woke up (with
  ``--lag-probe-ms``, the kit starts the server with a probe every that many ms instead
  of the production 0.5 s, so short stalls are seen: a late probe means the loop was
  busy or the process was not running);
- ``server_move_ack``: the server's own move→ack time (from the frame read off the socket
  to the ack queued: the store round trip included, the wait before the read not);
- ``append_move``: the store call of a move (its group commit on Redis);
- ``server_gc_pause``: the garbage collector's pauses (all generations);
- ``core_busy_pct``: how busy each core of the machine was (``/proc/stat``: every
  process's time on it, ours and anyone else's, interrupts included), in percent of the
  phase: with ``--isolate`` the server's core minus the server's own CPU is what else ran
  on it (another user's jobs, the kernel's);
- ``redis_commands_per_s`` (``--store redis``): the commands Redis processed a second
  (its ``total_commands_processed``), everyone's: the honest moves', the flood's.

Histograms are Prometheus buckets: a count is "how many above the bucket bound", and a
quantile is the upper bound of the bucket it falls in (coarse, but from the server).
"""

from __future__ import annotations

import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCRAPE_TIMEOUT_S = 5.0  # a /metrics that does not answer in this long is left out
# Thresholds (ms) the report counts samples above (each is a bucket bound of the
# server's histograms, so the count is exact, not interpolated)
OVER_MS = (5, 10, 25, 50)
HISTOGRAMS = {  # report key → (metric family name, label filter)
    "server_loop_lag": ("solrace_event_loop_lag_seconds", {}),
    "server_move_ack": ("solrace_move_ack_seconds", {}),
    "append_move": ("solrace_store_op_seconds", {"op": "append_move"}),
    "server_gc_pause": ("solrace_gc_pause_seconds", {}),  # every generation together
}


def schedstat(pid: int) -> tuple[int, int, int] | None:
    """``(cpu ns, runnable-but-waiting ns, times scheduled)`` of ``pid``'s main thread
    (the one running an event loop), None if it is gone."""
    try:
        run, wait, slices = Path(f"/proc/{pid}/schedstat").read_text().split()[:3]
    except (OSError, ValueError):
        return None
    return int(run), int(wait), int(slices)


def scrape(port: int) -> dict[str, dict[float, float]]:
    """The server's histograms of ``HISTOGRAMS`` as ``{key: {upper bound s: cumulative
    count}}`` (empty when /metrics does not answer: the node's budget may refuse it)."""
    from prometheus_client.parser import text_string_to_metric_families

    out: dict[str, dict[float, float]] = {}
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics",
                                    timeout=SCRAPE_TIMEOUT_S) as reply:
            text = reply.read().decode()
    except OSError:
        return out
    for family in text_string_to_metric_families(text):
        for key, (name, labels) in HISTOGRAMS.items():
            if family.name != name:
                continue
            buckets = out.setdefault(key, {})
            for sample in family.samples:
                if not sample.name.endswith("_bucket"):
                    continue
                if any(sample.labels.get(k) != v for k, v in labels.items()):
                    continue
                le = float(sample.labels["le"])
                buckets[le] = buckets.get(le, 0.0) + sample.value
    return out


@dataclass
class Snapshot:
    """What a phase boundary saw (module docstring)."""

    at: float
    sched: dict[str, tuple[int, int, int] | None]
    hist: dict[str, dict[float, float]]
    cores: dict[str, tuple[int, int]] = field(default_factory=dict)
    # counters that only grow, read by the caller (Redis's commands processed)
    counts: dict[str, int] = field(default_factory=dict)


def snapshot(pids: dict[str, int], port: int | None,
             counts: dict[str, int] | None = None) -> Snapshot:
    """Read every process's scheduler accounting and (with a port) the server's
    histograms now; ``counts``: growing counters read by the caller at the same moment.
    Blocking (a scrape): call it from a thread."""
    at = time.monotonic()
    sched = {name: schedstat(pid) for name, pid in pids.items()}
    return Snapshot(at, sched, scrape(port) if port else {}, core_ticks(), counts or {})


def core_ticks() -> dict[str, tuple[int, int]]:
    """Per core (``cpu0``, ``cpu1``, …): ``(busy ticks, all ticks)`` since boot, from
    ``/proc/stat`` (busy: everything but idle and I/O wait); empty if unreadable."""
    out: dict[str, tuple[int, int]] = {}
    try:
        lines = Path("/proc/stat").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        name, *fields = line.split()
        if name.startswith("cpu") and name != "cpu":
            ticks = [int(f) for f in fields]
            idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
            out[name] = (sum(ticks) - idle, sum(ticks))
    return out


@dataclass
class _Acc:
    seconds: float = 0.0
    sched: dict[str, list[int]] = field(default_factory=dict)
    hist: dict[str, dict[float, float]] = field(default_factory=dict)
    cores: dict[str, list[int]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)


class Phases:
    """Sums the differences between two snapshots per kind of phase (``quiet``,
    ``attack``)."""

    def __init__(self) -> None:
        self._acc: dict[str, _Acc] = {}

    def add(self, kind: str, start: Snapshot, end: Snapshot) -> None:
        """Count the window from ``start`` to ``end`` for ``kind``."""
        acc = self._acc.setdefault(kind, _Acc())
        acc.seconds += end.at - start.at
        for name, before in start.sched.items():
            after = end.sched.get(name)
            if before is None or after is None:
                continue
            total = acc.sched.setdefault(name, [0, 0, 0])
            for i in range(3):
                total[i] += after[i] - before[i]
        for name, value in end.counts.items():
            if value >= 0 and start.counts.get(name, -1) >= 0:
                acc.counts[name] = acc.counts.get(name, 0) + value - start.counts[name]
        for core, (busy, total) in end.cores.items():
            if core in start.cores:
                acc_core = acc.cores.setdefault(core, [0, 0])
                acc_core[0] += busy - start.cores[core][0]
                acc_core[1] += total - start.cores[core][1]
        for key, buckets in end.hist.items():
            before_b = start.hist.get(key)
            if before_b is None:
                continue
            total_b = acc.hist.setdefault(key, {})
            for le, count in buckets.items():
                total_b[le] = total_b.get(le, 0.0) + count - before_b.get(le, 0.0)

    def report(self) -> dict[str, Any]:
        """Per kind of phase: run-queue waits and histogram summaries (module docstring)."""
        out: dict[str, Any] = {}
        for kind, acc in self._acc.items():
            secs = max(acc.seconds, 1e-9)
            entry: dict[str, Any] = {
                "cpu_pct": {n: round(100 * s[0] / 1e9 / secs, 1) for n, s in acc.sched.items()},
                "runq_wait_ms_per_s": {n: round(s[1] / 1e6 / secs, 1)
                                       for n, s in acc.sched.items()},
                "runq_wait_per_wakeup_ms": {n: round(s[1] / 1e6 / max(1, s[2]), 3)
                                            for n, s in acc.sched.items()},
                "core_busy_pct": {c: round(100 * busy / max(1, total), 1)
                                  for c, (busy, total) in sorted(acc.cores.items())},
            }
            for name, count in acc.counts.items():
                entry[f"{name}_per_s"] = round(count / secs, 1)
            for key, buckets in acc.hist.items():
                entry[key] = summarise(buckets)
            out[kind] = entry
        return out


def summarise(buckets: dict[float, float]) -> dict[str, Any]:
    """Count, counts above each of ``OVER_MS`` and the p99's bucket bound (ms) of a
    cumulative histogram."""
    bounds = sorted(buckets)
    n = buckets.get(float("inf"), 0.0)
    result: dict[str, Any] = {"n": int(n)}
    for ms in OVER_MS:
        below = buckets.get(ms / 1000)
        if below is not None:
            result[f"over_{ms}ms"] = int(n - below)
    p99 = None
    if n:
        for le in bounds:
            if buckets[le] >= 0.99 * n:
                p99 = le
                break
    result["p99_le_ms"] = (None if p99 is None
                           else "inf" if p99 == float("inf") else round(p99 * 1000, 3))
    return result
