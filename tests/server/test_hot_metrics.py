"""The move path's own counters and histograms (``server.metrics.HotCounter`` /
``HotHistogram``) render exactly what prometheus_client's ``Counter`` / ``Histogram``
render for the same updates (the reference here is prometheus_client itself, in a
registry of its own), apart from the ``_created`` samples they do not keep."""

from __future__ import annotations

import random

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from server.metrics import Metrics


def samples(text: bytes, family: str) -> list[str]:
    """The sample lines of one family, node label removed, ``_created`` left out."""
    out = []
    for line in text.decode().splitlines():
        if line.startswith(family) and "_created" not in line:
            out.append(line.replace('node="n",', "").replace(',node="n"', "")
                       .replace('{node="n"}', ""))
    return sorted(out)


def test_hot_metrics_render_as_prometheus_client_does() -> None:
    ours = Metrics("n")
    reference = CollectorRegistry()
    accepted = Counter("solrace_moves_accepted", "Moves accepted", registry=reference)
    latency = Histogram("solrace_move_ack_seconds", "x", registry=reference,
                        buckets=ours.move_latency.bounds)
    store = Histogram("solrace_store_op_seconds", "x", ["op"], registry=reference,
                      buckets=ours.store_latency.bounds)
    rng = random.Random(5)
    bounds = list(ours.move_latency.bounds)
    for _ in range(500):
        # values on the bounds too: a bound is inclusive (le)
        value = rng.choice([rng.random() * 2, rng.choice(bounds), 0.0])
        ours.move_latency.observe(value)
        latency.observe(value)
        op = rng.choice(["append_move", "get_room"])
        ours.store_latency.labels(op).observe(value / 3)
        store.labels(op).observe(value / 3)
        n = rng.randint(0, 3)
        ours.moves_accepted.inc(n)
        accepted.inc(n)
    mine, theirs = ours.render(), generate_latest(reference)
    for family in ("solrace_moves_accepted", "solrace_move_ack_seconds",
                   "solrace_store_op_seconds"):
        got = samples(mine, family)
        assert got and got == samples(theirs, family), family
