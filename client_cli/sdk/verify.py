"""The seed check a client runs on ``Results``: was the deal the one committed to before
the race, and do the published move logs replay to the published ranking?

1. ``engine.verify_commitment(seed, salt, commitment)`` — and the commitment must be the
   one this client was shown when it joined (else the server could pick both after).
2. Each seat's log is replayed from ``new_game(variant, seed, **options)``: every move
   must be legal, and the replayed progress (and won or not) must equal the ranking's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import engine
from protocol import messages as M


@dataclass
class SeedCheck:
    """The verdict: ``ok`` only if every check passed; ``lines`` say what was checked."""

    ok: bool
    commitment_ok: bool
    replay_ok: bool
    lines: list[str] = field(default_factory=list)


def check_results(results: M.Results, committed: str | None = None) -> SeedCheck:
    """Check ``results`` (see the module docstring). ``committed`` is the commitment the
    client saw before the race (``Joined.commitment``); None skips that comparison."""
    lines: list[str] = []
    try:
        commitment_ok = engine.verify_commitment(results.seed, results.salt, results.commitment)
    except engine.EngineError as exc:
        commitment_ok = False
        lines.append(f"commitment: bad seed or salt ({exc})")
    if committed is not None and committed.lower() != results.commitment.lower():
        commitment_ok = False
        lines.append("commitment: differs from the one published before the race")
    lines.insert(
        0,
        f"seed {results.seed}: "
        + ("matches the commitment" if commitment_ok else "DOES NOT match the commitment"),
    )
    replay_ok = True
    by_seat = {r.seat: r for r in results.ranking}
    for log in results.logs:
        entry = by_seat.get(log.seat)
        try:
            game = engine.new_game(results.variant, seed=results.seed, **results.options)
            for number, move in enumerate(log.moves, 1):
                try:
                    game.play(move)
                except engine.EngineError as exc:
                    raise ValueError(f"move {number} {move!r} is illegal: {exc}") from None
        except (engine.EngineError, ValueError) as exc:
            replay_ok = False
            lines.append(f"seat {log.seat}: replay failed: {exc}")
            continue
        name = entry.name if entry else f"seat {log.seat}"
        problems = []
        if entry is not None and entry.progress != game.progress:
            problems.append(f"ranking says {entry.progress} cards")
        if entry is not None and (entry.status == "won") != game.won:
            problems.append(f"ranking says {entry.status}")
        if problems:
            replay_ok = False
        verdict = "ok" if not problems else "MISMATCH: " + ", ".join(problems)
        lines.append(
            f"{name}: {len(log.moves)} moves replayed → {game.progress} cards"
            f"{' (won)' if game.won else ''} — {verdict}"
        )
    return SeedCheck(commitment_ok and replay_ok, commitment_ok, replay_ok, lines)
