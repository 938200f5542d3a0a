"""A real ``solrace serve`` on a private Redis: every metric the runbook and the alert
rules name is on ``/metrics`` with the node's label, the counters count what was done
to the node, and every line it writes to stderr is one JSON object."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from prometheus_client.parser import text_string_to_metric_families
from websockets.asyncio.client import ClientConnection, connect

from protocol import PROTOCOL_VERSION, decode_server, encode
from protocol import messages as m

from ..conftest import RedisProcess
from .procs import ROOT, Serve, free_port_on, wait_for

# Every family the runbook, the alert rules and the dashboard rely on (the exposition
# names: counters end in _total, histograms expose _bucket/_count/_sum).
EXPECTED = {
    "solrace_store_op_seconds": "histogram",
    "solrace_store_errors": "counter",
    "solrace_resumes": "counter",
    "solrace_takeovers": "counter",
    "solrace_rooms_by_state": "gauge",
    "solrace_rooms_overdue": "gauge",
    "solrace_connections_by_kind": "gauge",
    "solrace_gc_pause_seconds": "histogram",
    "solrace_event_loop_lag_seconds": "histogram",
    "solrace_event_loop_lag_last_seconds": "gauge",
    "solrace_move_ack_seconds": "histogram",
    "solrace_moves_accepted": "counter",
    "solrace_connections": "gauge",
}


def scrape(node: Serve) -> dict[str, Any]:
    """name → family, parsed by prometheus_client's own parser (not ours)."""
    url = node.url.replace("ws://", "http://") + "/metrics"
    with urllib.request.urlopen(url, timeout=5) as resp:
        text = resp.read().decode()
    return {family.name: family for family in text_string_to_metric_families(text)}


def value(families: dict[str, Any], name: str, sample: str, **labels: str) -> float:
    """The value of one sample (0.0 when the labelled child does not exist yet)."""
    for s in families[name].samples:
        if s.name == sample and all(s.labels.get(k) == v for k, v in labels.items()):
            return float(s.value)
    return 0.0


async def hello(url: str, token: str | None = None) -> tuple[ClientConnection, Any]:
    ws = await connect(url, open_timeout=5, compression=None)
    await ws.send(encode(m.Hello(version=PROTOCOL_VERSION, name="ops", token=token)))
    return ws, decode_server(await asyncio.wait_for(ws.recv(), 5))


async def exercise(url: str) -> ClientConnection:
    """Create a room; resume its seat from a second connection (the first one is taken
    over: Closing{taken_over}); keep one spectator-less lobby room open."""
    first, _ = await hello(url)
    await first.send(encode(m.CreateRoom(settings=m.RoomSettings(variant="brisbane"))))
    joined = decode_server(await asyncio.wait_for(first.recv(), 5))
    assert isinstance(joined, m.Joined) and joined.token, joined
    second, resumed = await hello(url, joined.token)
    assert isinstance(resumed, m.Joined), resumed
    while True:  # the first connection hears why it is closed
        closing = decode_server(await asyncio.wait_for(first.recv(), 5))
        if isinstance(closing, m.Closing):
            assert closing.code == "taken_over"
            break
    await first.close()
    return second  # a player in the room while the test scrapes


def test_metrics_exist_with_node_label_and_count_what_happened(
    tmp_path: Path, redis_server: Callable[[], RedisProcess]
) -> None:
    redis = redis_server()
    node = Serve(tmp_path, "obs-1", "127.0.0.1", free_port_on("127.0.0.1"), redis.url,
                 ("--log-format", "json")).start()
    try:
        asyncio.run(_exercise_and_hold(node, redis))
        families = scrape(node)
        for name, kind in EXPECTED.items():
            assert name in families, f"{name} missing from /metrics"
            assert families[name].type == kind, (name, families[name].type)
            for sample in families[name].samples:
                assert sample.labels.get("node") == "obs-1", sample
        assert value(families, "solrace_resumes", "solrace_resumes_total") == 1
        assert value(families, "solrace_takeovers", "solrace_takeovers_total") == 1
        # the room was created and written through the store; each call was timed
        assert value(families, "solrace_store_op_seconds", "solrace_store_op_seconds_count",
                     op="create_room") == 1
        assert value(families, "solrace_store_op_seconds", "solrace_store_op_seconds_count",
                     op="take_seat") == 1
        # Redis went away during _exercise_and_hold: the list request failed on it
        assert value(families, "solrace_store_errors", "solrace_store_errors_total",
                     op="list_public", kind="unavailable") == 1
        # the event-loop probe has run at least once (it wakes every 0.5 s)
        wait_for("a loop-lag sample", lambda: value(
            scrape(node), "solrace_event_loop_lag_seconds",
            "solrace_event_loop_lag_seconds_count") >= 1)
    finally:
        status = node.stop(signal.SIGTERM)
    assert status == 0
    _check_json_log(node.log())


async def _exercise_and_hold(node: Serve, redis: RedisProcess) -> None:
    player = await exercise(node.url)
    ws, _ = await hello(node.url)

    def by_kind() -> tuple[float, float, float]:
        families = scrape(node)
        return (value(families, "solrace_connections_by_kind", "solrace_connections_by_kind",
                      kind="player"),
                value(families, "solrace_connections_by_kind", "solrace_connections_by_kind",
                      kind="none"),
                value(families, "solrace_rooms_by_state", "solrace_rooms_by_state",
                      state="lobby"))

    # The resumed seat is the one player; this connection said hello and is in no room;
    # one lobby. The taken-over first connection's handler ends on the server's own time
    # (after our close returned), so the gauges settle rather than hold at once.
    wait_for("one player, one roomless connection, one lobby",
             lambda: by_kind() == (1, 1, 1))
    redis.stop()
    await ws.send(encode(m.ListRooms()))
    error = decode_server(await asyncio.wait_for(ws.recv(), 10))
    assert isinstance(error, m.Error) and error.code == "store_unavailable", error
    await ws.close()
    await player.close()


def _check_json_log(text: str) -> None:
    """Every stderr line is a JSON object with the fields the module promises; start-up
    and shutdown are events."""
    lines = [json.loads(line) for line in text.splitlines()]  # each line parses alone
    assert lines, "the node logged nothing"
    for line in lines:
        assert {"ts", "level", "logger", "event", "node"} <= set(line), line
        assert line["node"] == "obs-1"
    events = [line["event"] for line in lines]
    assert events.count("node started") == 1 and events[-1] == "node stopped", events
    stopping = next(line for line in lines if line["event"] == "node stopping")
    assert stopping["signal"] == "SIGTERM"


def test_rules_and_dashboard_only_name_exported_metrics() -> None:
    """The alert rules and the Grafana dashboard query metrics this test module checks
    exist (a renamed metric would silently break an alert)."""
    exported = set()
    for name, kind in EXPECTED.items():
        exported |= {name, f"{name}_total"} if kind == "counter" else {name}
        if kind == "histogram":
            exported |= {f"{name}_bucket", f"{name}_count", f"{name}_sum"}
    rules = yaml.safe_load((ROOT / "deploy" / "prometheus" / "alerts.yml").read_text())
    dashboard = json.loads((ROOT / "deploy" / "grafana" / "solrace.json").read_text())
    exprs = [rule["expr"] for group in rules["groups"] for rule in group["rules"]]
    exprs += [t["expr"] for panel in dashboard["panels"] for t in panel.get("targets", [])]
    exprs += [v["definition"] for v in dashboard["templating"]["list"] if "definition" in v]

    used = {name for expr in exprs for name in re.findall(r"\bsolrace_[a-z_]+", expr)}
    assert used, "no solrace metric referenced"
    assert used <= exported, used - exported
