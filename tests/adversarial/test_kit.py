"""The attack kit's runner itself, on a short run: the honest player in its own process,
quiet and attack phases alternated, the attack run afresh each round, and the server's
per-address caps exact in its counters (no timing is asserted)."""

from __future__ import annotations

import pytest

from bench.attack.__main__ import parse, run
from bench.attack.layout import check_isolation, cpu_list


def test_the_kit_alternates_phases_and_counts_refusals() -> None:
    result = run(parse(["refusals", "--duration", "6", "--rounds", "2", "--refusals", "100",
                        "--pace", "0.2"]))
    assert result["server_alive"] and result["server_tracebacks"] == 0
    rounds = result["attack_rounds"]
    assert result["rounds"] == 2 and len(rounds) == 2
    # 64 open connections per address; 120 handshakes a minute: the second round gets
    # the 56 left of the minute, and every knock after the cap is refused (HTTP 429)
    assert [r["held"] for r in rounds] == [64, 56]
    assert [r["statuses"] for r in rounds] == [{"429": 100}] * 2
    quiet, attack = result["honest_quiet"], result["honest_attack"]
    assert quiet["n"] > 0 and attack["n"] > 0 and attack["lost"] == attack["rejected"] == 0
    assert set(result["cpu_pct"]) == {"server_quiet", "server_attack", "kit_quiet",
                                      "kit_attack"}
    # The probe section (bench/attack/probes.py): the server's own count of acked moves
    # in each kind of phase is the honest player's (it is the only one moving), up to a
    # move per phase boundary (a move sent just before a boundary is acked after it);
    # every process's run-queue wait is reported, and the loop-lag probe ran.
    probe = result["probe"]
    for kind, honest in (("quiet", quiet), ("attack", attack)):
        acked = probe[kind]["server_move_ack"]["n"]
        assert abs(acked - honest["n"]) <= 2 * result["rounds"], (kind, acked, honest)
        assert set(probe[kind]["runq_wait_ms_per_s"]) == {"server", "honest", "kit"}
        assert probe[kind]["server_loop_lag"]["n"] > 0
    assert len(result["honest_max_ms_by_round"]["attack"]) == 2
    slowest = result["honest_slowest_attack"]
    assert len(slowest) == min(5, attack["n"])
    assert [ms for ms, _ in slowest] == sorted((ms for ms, _ in slowest), reverse=True)
    assert slowest[0][0] == attack["max_ms"] and all(at >= 0 for _, at in slowest)


def test_several_honest_players_each_from_its_own_address() -> None:
    # Three players, their samples pooled: the phase counts are the sum of each one's,
    # and each player's own p99 is listed
    result = run(parse(["refusals", "--duration", "4", "--refusals", "50", "--honest", "3",
                        "--pace", "0.2"]))
    assert result["server_alive"] and result["honest_players"] == 3
    by_player = result["honest_p99_ms_by_player"]
    assert len(by_player["quiet"]) == len(by_player["attack"]) == 3
    assert all(p99 is not None for p99 in by_player["quiet"] + by_player["attack"])
    quiet, attack = result["honest_quiet"], result["honest_attack"]
    # 3 players at 5 moves a second for ~4 s of each kind of phase: far more than one
    # player's ~20 (each phase is at least 4 s; a player's first move waits for its grid)
    assert quiet["n"] >= 3 * 15 and attack["n"] >= 3 * 15
    assert attack["lost"] == attack["rejected"] == 0
    # the server acked every one of them in its phase (up to a move per phase boundary
    # per player)
    acked = result["probe"]["attack"]["server_move_ack"]["n"]
    assert abs(acked - attack["n"]) <= 2 * 3


def test_honest_addresses_and_the_pace_grid() -> None:
    from bench.attack.harness import honest_source
    from bench.attack.honest import next_tick

    assert [honest_source(i) for i in (0, 1, 2, 250, 251)] == [
        "127.0.0.1", "127.254.0.2", "127.254.0.3", "127.254.0.251", "127.254.1.2"]
    # grid points 0.05 + k * 0.15: ..., 9.95, 10.1, ...
    assert round(next_tick(10.01, 0.15, 0.05), 9) == 10.1
    assert round(next_tick(9.95, 0.15, 0.05), 9) == 9.95  # on a point: that point
    assert round(next_tick(0.0, 0.2, 0.0), 9) == 0.0


def test_the_pace_grid_never_skips_a_point_by_rounding() -> None:
    # due + pace is the next point however its float rounds (a skipped point would halve
    # a player's samples at random: seen with a bare ceil)
    from bench.attack.honest import next_tick

    for offset in (0.0, 0.025, 0.05, 0.125):
        due = next_tick(1139.327848829, 0.15, offset)  # a bare ceil skipped 919 of 2000
        for _ in range(1000):
            following = next_tick(due + 0.15, 0.15, offset)
            assert abs(following - (due + 0.15)) < 1e-6
            due = following


# Skipped only where the layout cannot exist (fewer than 2 cores in this process's
# affinity, or not root): the kit itself refuses --isolate there with the same words.
# CI runs as root on 2 cores, so it runs there.
@pytest.mark.skipif(check_isolation() is not None, reason=check_isolation() or "")
def test_the_isolated_layout_as_the_kernel_reports_it() -> None:
    # --isolate: the kernel's own answer for every process of the run (affinity and
    # nice read back per thread): the server alone on core 0 at its priority, the kit's
    # generator on core 1 at its own, the honest players on core 1 raised over it; the
    # runner's process gets its cores back afterwards (this test runs it in-process).
    import os

    cores = os.sched_getaffinity(0)
    result = run(parse(["refusals", "--duration", "4", "--refusals", "50", "--honest", "2",
                        "--pace", "0.2", "--isolate"]))
    assert result["server_alive"]
    layout = result["layout"]
    assert layout["mode"] == "isolated"
    roles = layout["roles"]
    assert roles["server"]["cpus"] == ["0"] and roles["server"]["nice"] == [0]
    assert roles["generator"] == {"processes": 1, "cpus": ["1"], "nice": [0]}
    assert roles["honest"] == {"processes": 2, "cpus": ["1"], "nice": [-10]}
    assert os.sched_getaffinity(0) == cores
    # the refusals were sent (the generator worked on its one core)
    assert result["attack"]["statuses"] == {"429": 50}
    assert "fifo" not in roles["honest"]  # a raised nice value, not the real-time class
    # --others-fifo: the honest players in the real-time class instead, as the kernel says
    fifo = run(parse(["refusals", "--duration", "2", "--refusals", "10", "--honest", "2",
                      "--pace", "0.2", "--isolate", "--others-fifo"]))
    assert fifo["layout"]["roles"]["honest"] == {"processes": 2, "cpus": ["1"],
                                                 "nice": [-10], "fifo": True}
    assert "fifo" not in fifo["layout"]["roles"]["generator"]
    assert "fifo" not in fifo["layout"]["roles"]["server"]
    # the default stays co-located: every process on every core
    colo = run(parse(["refusals", "--duration", "2", "--refusals", "10", "--pace", "0.2"]))
    assert colo["layout"]["mode"] == "co-located"
    assert colo["layout"]["roles"]["server"]["cpus"] == [cpu_list(cores)]


def test_others_fifo_needs_the_isolated_layout(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse(["refusals", "--others-fifo"])
    assert "add --isolate" in capsys.readouterr().err


def test_the_probe_counts_cores_and_redis_commands_per_phase() -> None:
    # Two windows of one kind of phase, 2 s in all: each core's busy share is the sum of
    # the busy ticks over the sum of all ticks (cpu0: (30 + 10) / (100 + 100)); Redis's
    # commands a second are the growth over the windows' seconds ((500 + 100) / 2); a
    # counter that did not answer (-1) is left out, not counted as a drop.
    from bench.attack.probes import Phases, Snapshot

    def snap(at: float, cpu0: tuple[int, int], cpu1: tuple[int, int], cmds: int) -> Snapshot:
        return Snapshot(at, {}, {}, {"cpu0": cpu0, "cpu1": cpu1}, {"redis_commands": cmds})

    phases = Phases()
    phases.add("attack", snap(0.0, (0, 0), (0, 0), 1000), snap(1.0, (30, 100), (90, 100), 1500))
    phases.add("attack", snap(5.0, (50, 200), (100, 200), 2000),
               snap(6.0, (60, 300), (200, 300), 2100))
    phases.add("attack", snap(9.0, (0, 0), (0, 0), -1), snap(9.0, (0, 0), (0, 0), 50))
    report = phases.report()["attack"]
    assert report["core_busy_pct"] == {"cpu0": 20.0, "cpu1": 95.0}
    assert report["redis_commands_per_s"] == 300.0
