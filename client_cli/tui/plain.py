"""Plain-text output for scripts and pipes (no Textual): one progress line per tick, the
results table and the seed check, and JSON forms of them."""

from __future__ import annotations

from typing import Any

from client_cli.results_file import results_builtins
from client_cli.sdk import RoomState
from client_cli.sdk.verify import SeedCheck, check_results, deal_verdict

from .render import STATUS_MARK, clock_text


def progress_line(room: RoomState) -> str:
    """``[00:03.2] greedy-1* ▶ 12/52 · random-2* ▶ 4/52`` — every seat's progress."""
    seats = sorted(room.seats.values(), key=lambda s: s.seat)
    parts = [
        f"{s.name}{'*' if s.bot else ''} {STATUS_MARK.get(s.status, '?')} {s.progress}/52"
        for s in seats
    ]
    return f"[{clock_text(max(0, room.race_clock_ms()))}] " + " · ".join(parts)


def results_text(room: RoomState, committed: str | None) -> tuple[str, SeedCheck | None]:
    """The ranking table and the seed check as text lines."""
    results = room.results
    if results is None:
        return "no results", None
    lines = [
        f"Results of room {results.code} ({results.variant}, by {results.rank_by}, "
        f"ended: {results.reason})"
    ]
    lines.append(f"{'#':>2}  {'player':<18} {'status':<9} {'cards':>5} {'moves':>6} {'time':>9}")
    for r in results.ranking:
        when = clock_text(r.finish_ms) if r.finish_ms is not None else "-"
        name = r.name + ("*" if r.bot else "") + (" bot-like" if r.bot_like else "")
        lines.append(
            f"{r.rank:>2}  {name:<18} {r.status:<9} {r.progress:>5} {r.moves:>6} {when:>9}"
        )
    lines.append(deal_verdict(results))
    check = check_results(results, committed)
    lines.append("seed check: " + ("PASSED" if check.ok else "FAILED"))
    lines += ["  " + line for line in check.lines]
    return "\n".join(lines), check


def results_json(room: RoomState, committed: str | None) -> dict[str, Any]:
    """The results and the seed check as plain data; ``"results"`` is the results
    message itself with its wire keys (``solrace verify`` reads this output)."""
    results = room.results
    if results is None:
        return {"results": None}
    check = check_results(results, committed)
    return {
        "results": results_builtins(results),
        "code": results.code,
        "variant": results.variant,
        "options": results.options,
        "rank_by": results.rank_by,
        "reason": results.reason,
        "seed": results.seed,
        "commitment": results.commitment,
        "ranking": [
            {
                "rank": r.rank,
                "seat": r.seat,
                "name": r.name,
                "bot": r.bot,
                "status": r.status,
                "progress": r.progress,
                "moves": r.moves,
                "finish_ms": r.finish_ms,
            }
            for r in results.ranking
        ],
        "seed_check": {
            "ok": check.ok,
            "commitment_ok": check.commitment_ok,
            "replay_ok": check.replay_ok,
            "lines": check.lines,
        },
    }
