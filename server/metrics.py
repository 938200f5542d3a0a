"""Prometheus metrics, one registry per ``Server`` (several servers may share a process,
as in tests), served at ``GET /metrics`` on the websocket port.

Every sample carries a ``node`` label (the node id), so one Prometheus can tell the nodes
of a service apart without relabelling. Besides the counters the room logic bumps, a
node exports:

- ``solrace_store_op_seconds{op}`` and ``solrace_store_errors_total{op,kind}``: every
  store call, timed (see ``InstrumentedStore``);
- ``solrace_resumes_total`` / ``solrace_takeovers_total``: seats resumed with a token,
  and older connections closed because their seat was resumed elsewhere;
- ``solrace_rooms_by_state{state}``, ``solrace_connections_by_kind{kind}`` and
  ``solrace_rooms_overdue``, computed when scraped from what the node holds;
- ``solrace_gc_pause_seconds{generation}`` (``gc.callbacks``) and
  ``solrace_event_loop_lag_seconds`` (a periodic task measuring how late it wakes up).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import inspect
import time
from bisect import bisect_left
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import Any, Protocol, cast

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from .store.base import SeqConflict, StaleEpoch, Store, StoreUnavailable

# Move→ack latency buckets (seconds): the interesting range is 50 µs .. 50 ms.
_LATENCY_BUCKETS = (
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1.0
)
# Store calls: memory ~µs, Redis ~0.2-2 ms, and a Redis outage or Cluster failover shows
# as seconds (each operation is bounded at 3 s by the Redis store).
_STORE_BUCKETS = (
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
    2.5, 5.0,
)
# GC pauses: young collections take tens of µs, a full one on a big heap tens of ms.
_GC_BUCKETS = (0.00001, 0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5)
_LAG_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

# How often the loop-lag probe wakes up. Its lateness is the lag: a callback queued now
# waits about that long. Twice a second costs nothing and catches stalls >= 1 ms.
LOOP_LAG_INTERVAL_S = 0.5
# A timed race whose end is this far in the past and still running is overdue: the node
# holding its timer should have finished it (see the ResultsOverdue alert).
OVERDUE_GRACE_MS = 30_000

# Store exceptions by the kind label they get (anything else is "other": the label set
# stays bounded whatever a backend raises).
_ERROR_KINDS: tuple[tuple[type[BaseException], str], ...] = (
    (StoreUnavailable, "unavailable"),
    (StaleEpoch, "stale_epoch"),
    (SeqConflict, "seq_conflict"),
    (TimeoutError, "timeout"),
)


def error_kind(exc: BaseException) -> str:
    """The ``kind`` label of a store failure."""
    for cls, kind in _ERROR_KINDS:
        if isinstance(exc, cls):
            return kind
    return "other"


class NodeView(Protocol):
    """What the scrape-time gauges read from a server node."""

    @property
    def rooms(self) -> Mapping[str, Any]:
        """Rooms held by the node, by code."""

    @property
    def connections(self) -> Collection[Any]:
        """Open connections."""


class _NodeRegistry(CollectorRegistry):
    """A registry that adds ``node="<id>"`` to every sample it exposes."""

    def __init__(self, node: str) -> None:
        super().__init__(auto_describe=True)
        self.node = node

    def collect(self) -> Iterator[Metric]:
        for metric in super().collect():
            labelled = Metric(metric.name, metric.documentation, metric.type, metric.unit)
            labelled.samples = [
                s._replace(labels={**s.labels, "node": self.node}) for s in metric.samples
            ]
            yield labelled


# prometheus_client's own rendering of a bucket bound (``le="5e-05"``, ``"+Inf"``).
_le: Callable[[float], str] = floatToGoString


class HotCounter:
    """A counter bumped for every move (frames in, moves accepted): a plain number, no
    lock and one call, where ``prometheus_client.Counter.inc`` takes a lock and makes
    three. Only the event loop's thread bumps it, and ``/metrics`` is rendered on that
    thread too. Exposed as a Prometheus counter (``<name>_total``) by ``_HotCollector``."""

    __slots__ = ("documentation", "name", "value")

    def __init__(self, name: str, documentation: str) -> None:
        self.name, self.documentation, self.value = name, documentation, 0

    def inc(self, amount: int = 1) -> None:
        """Add ``amount`` (>= 0)."""
        self.value += amount


class HotHistogram:
    """A histogram observed for every move (move→ack latency, store calls): counts by
    bucket in a list and their sum, found with one ``bisect`` (``prometheus_client``'s
    ``Histogram.observe`` walks the bounds and takes a lock per bucket and per sum). Same
    rules as ``HotCounter``: the loop's thread only. ``labels(value)`` gives the child of
    a one-label histogram, made on first use (as prometheus_client does)."""

    __slots__ = ("_children", "bounds", "counts", "documentation", "label", "name", "sum")

    def __init__(self, name: str, documentation: str, buckets: tuple[float, ...],
                 label: str = "") -> None:
        self.name, self.documentation, self.label = name, documentation, label
        self.bounds = buckets
        self.counts = [0] * (len(buckets) + 1)  # the last one: above every bound (+Inf)
        self.sum = 0.0
        self._children: dict[str, HotHistogram] = {}

    def observe(self, amount: float) -> None:
        """Count ``amount``: in the first bucket whose bound is >= it (Prometheus's
        ``le``)."""
        self.counts[bisect_left(self.bounds, amount)] += 1
        self.sum += amount

    def labels(self, value: str) -> HotHistogram:
        """The child for label value ``value``."""
        child = self._children.get(value)
        if child is None:
            child = self._children[value] = HotHistogram(self.name, self.documentation,
                                                         self.bounds)
        return child

    def family(self) -> HistogramMetricFamily:
        """The metric family as ``/metrics`` shows it (cumulative buckets, sum, count)."""
        labels = [self.label] if self.label else None
        family = HistogramMetricFamily(self.name, self.documentation, labels=labels)
        parts = sorted(self._children.items()) if self.label else [("", self)]
        for value, h in parts:
            buckets, total = [], 0
            for bound, count in zip((*h.bounds, float("inf")), h.counts, strict=True):
                total += count
                buckets.append((_le(bound), float(total)))
            family.add_metric([value] if self.label else [], buckets, h.sum)
        return family


class _HotCollector(Collector):
    """Exposes ``HotCounter``s and ``HotHistogram``s in the registry."""

    def __init__(self) -> None:
        self.counters: list[HotCounter] = []
        self.histograms: list[HotHistogram] = []

    def counter(self, name: str, documentation: str) -> HotCounter:
        """A new counter, exposed from now on."""
        counter = HotCounter(name, documentation)
        self.counters.append(counter)
        return counter

    def histogram(self, name: str, documentation: str, buckets: tuple[float, ...],
                  label: str = "") -> HotHistogram:
        """A new histogram, exposed from now on."""
        histogram = HotHistogram(name, documentation, buckets, label)
        self.histograms.append(histogram)
        return histogram

    def describe(self) -> Iterable[Metric]:
        return ()  # names checked by hand: registered once, before any is made

    def collect(self) -> Iterable[Metric]:
        for c in self.counters:
            yield CounterMetricFamily(c.name, c.documentation, value=c.value)
        for h in self.histograms:
            yield h.family()


class Metrics:
    """The server's counters, gauges and histograms (see the module docstring)."""

    def __init__(self, node: str = "", view: NodeView | None = None,
                 clock: Callable[[], int] | None = None) -> None:
        self.registry = _NodeRegistry(node)
        r = self.registry
        self.connections = Gauge("solrace_connections", "Open websocket connections", registry=r)
        self.rooms = Gauge("solrace_rooms", "Rooms with connections on this node", registry=r)
        # The metrics bumped for every move are "hot" ones (``HotCounter``): the same
        # exposition, a fraction of prometheus_client's cost per update.
        hot = _HotCollector()
        r.register(hot)
        self.frames_in = hot.counter("solrace_frames_in", "Frames received")
        self.frames_out = Counter("solrace_frames_out", "Frames sent", registry=r)
        self.errors = Counter(
            "solrace_errors", "Error replies by code", ["code"], registry=r
        )
        self.moves_accepted = hot.counter("solrace_moves_accepted", "Moves accepted")
        self.moves_rejected = Counter(
            "solrace_moves_rejected", "Moves rejected by code", ["code"], registry=r
        )
        self.move_latency = hot.histogram(
            "solrace_move_ack_seconds", "From a move frame received to its ack queued",
            _LATENCY_BUCKETS)
        self.races_finished = Counter(
            "solrace_races_finished", "Races this node finished", ["reason"], registry=r
        )
        self.verdicts = Counter(
            "solrace_verdicts", "Deal verdicts by outcome (decided, undecided, skipped: the "
            "queue or the client's share was full)", ["outcome"], registry=r
        )
        self.deadlines_fired = Counter(
            "solrace_deadlines_fired", "Store deadlines this node fired", ["kind"], registry=r
        )
        self.store_durable = Gauge(
            "solrace_store_durable", "1 when the store keeps acknowledged moves across a "
            "restart (AOF or replicas), 0 when it may lose them (volatile)", registry=r
        )
        self.store_latency = hot.histogram(
            "solrace_store_op_seconds", "Store call duration, by operation (failures too)",
            _STORE_BUCKETS, label="op")
        self.store_errors = Counter(
            "solrace_store_errors", "Store calls that raised, by operation and kind",
            ["op", "kind"], registry=r,
        )
        self.resumes = Counter(
            "solrace_resumes", "Seats resumed with a token on this node", registry=r
        )
        self.takeovers = Counter(
            "solrace_takeovers",
            "Connections on this node closed because their seat was resumed elsewhere",
            registry=r,
        )
        self.gc_pause = Histogram(
            "solrace_gc_pause_seconds", "Garbage collector pauses, by generation",
            ["generation"], buckets=_GC_BUCKETS, registry=r,
        )
        self.loop_lag = Histogram(
            "solrace_event_loop_lag_seconds",
            f"How late a callback scheduled every {LOOP_LAG_INTERVAL_S:g} s runs",
            buckets=_LAG_BUCKETS, registry=r,
        )
        self.loop_lag_last = Gauge(
            "solrace_event_loop_lag_last_seconds", "The latest event-loop lag measured",
            registry=r,
        )
        if view is not None:
            r.register(_NodeCollector(view, clock or _wall_ms))
        self._gc_started = 0.0
        self._lag_task: asyncio.Task[None] | None = None

    def render(self) -> bytes:
        """The text exposition format."""
        return generate_latest(self.registry)

    # ------------------------------------------------------------------ probes
    def start(self) -> None:
        """Start the GC and event-loop probes (call from the running loop)."""
        if self._lag_task is None:
            gc.callbacks.append(self._on_gc)
            self._lag_task = asyncio.get_running_loop().create_task(self._probe_loop())

    async def stop(self) -> None:
        """Stop the probes started by ``start``. Safe to call twice."""
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)
        task, self._lag_task = self._lag_task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        elif self._gc_started:
            self.gc_pause.labels(str(info.get("generation", "?"))).observe(
                time.perf_counter() - self._gc_started)
            self._gc_started = 0.0

    async def _probe_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + LOOP_LAG_INTERVAL_S
            await asyncio.sleep(LOOP_LAG_INTERVAL_S)
            lag = max(0.0, loop.time() - due)
            self.loop_lag.observe(lag)
            self.loop_lag_last.set(lag)


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


class _NodeCollector(Collector):
    """Gauges computed when scraped from the rooms and connections a node holds."""

    def __init__(self, view: NodeView, clock: Callable[[], int]) -> None:
        self.view, self.clock = view, clock

    def describe(self) -> Iterable[Metric]:
        # The registry would otherwise call collect() at registration, before the node
        # is built; these names are unique anyway.
        return ()

    def collect(self) -> Iterable[Metric]:
        states = GaugeMetricFamily("solrace_rooms_by_state",
                                   "Rooms held by this node, by phase", labels=["state"])
        counts = dict.fromkeys(("lobby", "countdown", "running", "finished"), 0)
        overdue = 0
        now = self.clock()
        for room in list(self.view.rooms.values()):
            record = getattr(room, "record", None)
            phase = str(getattr(record, "phase", "unknown"))
            counts[phase] = counts.get(phase, 0) + 1
            limit_s = getattr(getattr(room, "settings", None), "time_limit_s", 0) or 0
            start_ms = getattr(record, "start_ms", None)
            if (phase == "running" and limit_s and start_ms is not None
                    and now > start_ms + limit_s * 1000 + OVERDUE_GRACE_MS):
                overdue += 1
        for state, n in counts.items():
            states.add_metric([state], n)
        yield states
        yield GaugeMetricFamily(
            "solrace_rooms_overdue",
            f"Timed races held here still running {OVERDUE_GRACE_MS // 1000} s past their end",
            value=overdue)
        kinds = GaugeMetricFamily("solrace_connections_by_kind",
                                  "Open connections: players, spectators, not in a room",
                                  labels=["kind"])
        by_kind = dict.fromkeys(("player", "spectator", "none"), 0)
        for conn in list(self.view.connections):
            member = getattr(conn, "member", None)
            kind = "none" if member is None else "player" if member.is_player else "spectator"
            by_kind[kind] += 1
        for kind, n in by_kind.items():
            kinds.add_metric([kind], n)
        yield kinds


class InstrumentedStore:
    """Wraps a store: every async method call is timed into ``solrace_store_op_seconds``
    and failures counted in ``solrace_store_errors_total``; behaviour is unchanged (the
    same results, the same exceptions). Other attributes pass through."""

    def __init__(self, store: Any, metrics: Metrics) -> None:
        self._store = store
        self._metrics = metrics
        self._timed: dict[str, Any] = {}  # one wrapper per method, made on first use

    @property
    def wrapped(self) -> Any:
        """The store underneath."""
        return self._store

    def __getattr__(self, name: str) -> Any:
        cached = self._timed.get(name)
        if cached is not None:
            return cached
        attr = getattr(self._store, name)
        if name.startswith("_") or not inspect.iscoroutinefunction(attr):
            return attr
        observe = self._metrics.store_latency.labels(name).observe
        errors = self._metrics.store_errors
        clock = time.perf_counter  # (bound once: this runs for a store call per move)

        async def timed(*args: Any, **kwargs: Any) -> Any:
            started = clock()
            try:
                return await attr(*args, **kwargs)
            except Exception as exc:
                errors.labels(name, error_kind(exc)).inc()
                raise
            finally:
                observe(clock() - started)

        self._timed[name] = timed
        # Found as an attribute from now on: the next call skips __getattr__ (a store
        # call per move goes through here).
        self.__dict__[name] = timed
        return timed


def instrument_store(store: Store, metrics: Metrics) -> Store:
    """``store`` with every call timed and every failure counted in ``metrics``."""
    return cast(Store, InstrumentedStore(store, metrics))
