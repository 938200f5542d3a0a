"""The attack kit's runner itself, on a short run: the honest player in its own process,
quiet and attack phases alternated, the attack run afresh each round, and the server's
per-address caps exact in its counters (no timing is asserted)."""

from __future__ import annotations

from bench.attack.__main__ import parse, run


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
