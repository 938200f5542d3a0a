"""Prometheus metrics, one registry per ``Server`` (several servers may share a process,
as in tests), served at ``GET /metrics`` on the websocket port."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

# Move→ack latency buckets (seconds): the interesting range is 50 µs .. 50 ms.
_LATENCY_BUCKETS = (
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1.0
)


class Metrics:
    """The server's counters and gauges."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.connections = Gauge("solrace_connections", "Open websocket connections", registry=r)
        self.rooms = Gauge("solrace_rooms", "Rooms with connections on this node", registry=r)
        self.frames_in = Counter("solrace_frames_in", "Frames received", registry=r)
        self.frames_out = Counter("solrace_frames_out", "Frames sent", registry=r)
        self.errors = Counter(
            "solrace_errors", "Error replies by code", ["code"], registry=r
        )
        self.moves_accepted = Counter("solrace_moves_accepted", "Moves accepted", registry=r)
        self.moves_rejected = Counter(
            "solrace_moves_rejected", "Moves rejected by code", ["code"], registry=r
        )
        self.move_latency = Histogram(
            "solrace_move_ack_seconds",
            "From a move frame received to its ack queued",
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
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

    def render(self) -> bytes:
        """The text exposition format."""
        return generate_latest(self.registry)
