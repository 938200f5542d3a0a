"""Every race learns whether its deal was winnable, and its par, even when the deal was
random: the server asks the solver in a worker process from the room's creation; the
verdict goes out with the results when known by then, else in a ``Verdict`` after them
(the results never wait for the solver)."""

from __future__ import annotations

import pytest

import engine
from engine.solver import solve
from protocol import messages as m
from protocol.verify import verify_results

from .client import TestClient
from .conftest import ServerFactory


@pytest.mark.parametrize(("seed", "winnable"), [(5, True), (3, False)])
async def test_results_of_a_random_deal_say_if_it_was_winnable(
    server_factory: ServerFactory, seed: int, winnable: bool
) -> None:
    server = await server_factory(seed_source=lambda: seed)
    one = await TestClient.connect(server.url, "one")
    await one.create(variant="fortress", countdown_s=0)  # deal=random, the default
    await one.send(m.Ready())
    await one.expect(m.Started)
    await one.send(m.Resign())
    results = await one.expect(m.Results)
    assert results.seed == seed
    if results.winnable is None:
        verdict = await one.expect(m.Verdict, wait=30)
        assert verdict.code == results.code
        said, par = verdict.winnable, verdict.par
    else:
        said, par = results.winnable, results.par
    assert said is winnable
    expected = solve(engine.new_game("fortress", seed=seed), max_seconds=10)
    assert expected.winnable is winnable  # the fixed seeds are what the test assumes
    if winnable:
        assert par == len(expected.moves) > 0
    else:
        assert par is None
    assert verify_results(results).problems == []
    # a late spectator gets the results and the verdict
    late = await TestClient.connect(server.url, "late")
    await late.join(results.code, role="spectator")
    assert await late.expect(m.Results) == results
    assert (await late.expect(m.Verdict)).winnable is winnable
