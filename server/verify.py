"""Checking a race's results from the results alone: anyone can run this after a race.

``verify_results`` recomputes the commitment from the revealed seed and salt, deals the
board again, replays every seat's log through the engine, and recomputes the ranking;
it returns the problems found (an empty list means the results are consistent).

What the results cannot prove: the race-clock times (``finish_ms``, ``progress_ms``) are
taken as reported (the logs carry moves, not times), and ``resigned``/``timeout`` are the
server's word. Everything else — the deal, every move's legality, progress, move counts,
wins, stuck positions, and the ranking order given those times — is checked.
"""

from __future__ import annotations

from typing import Any

import msgspec

import engine
from protocol import decode_server
from protocol.messages import Results

from .ranking import rank
from .store.records import SeatRecord


def load_results(data: bytes) -> Results:
    """A ``Results`` message from JSON (wire keys, as ``msgspec.json`` writes it) or
    MessagePack bytes. Raises ``ValueError`` saying what is wrong."""
    text = data.lstrip()
    try:
        if text.startswith(b"{"):
            return msgspec.json.decode(text, type=Results)
        message = decode_server(data)
    except (msgspec.DecodeError, msgspec.ValidationError, engine.EngineError) as exc:
        raise ValueError(f"not a results message: {exc}") from None
    except Exception as exc:  # protocol DecodeError
        raise ValueError(f"not a results message: {exc}") from None
    if not isinstance(message, Results):
        raise ValueError(f"not a results message but {type(message).__name__}")
    return message


def verify_results(results: Results) -> list[str]:
    """Every inconsistency found in ``results`` (see the module docstring)."""
    problems: list[str] = []
    try:
        if not engine.verify_commitment(results.seed, results.salt, results.commitment):
            problems.append("the seed and salt do not match the commitment published before "
                            "the race")
    except engine.EngineError as exc:
        problems.append(f"bad seed or salt: {exc}")
        return problems
    try:
        fresh = engine.new_game(results.variant, seed=results.seed, **results.options)
    except engine.EngineError as exc:
        problems.append(f"cannot deal the race's board: {exc}")
        return problems
    entries = {e.seat: e for e in results.ranking}
    if sorted(entries) != sorted(log.seat for log in results.logs):
        problems.append("the ranking and the logs name different seats")
    replayed: dict[int, SeatRecord] = {}
    for log in results.logs:
        game = fresh.copy()
        for number, move in enumerate(log.moves, 1):
            try:
                game.play(move)
            except engine.EngineError as exc:
                problems.append(f"seat {log.seat}: move {number} {move!r} is illegal: {exc}")
                break
        entry = entries.get(log.seat)
        if entry is None:
            continue
        status = entry.status
        _check(problems, log.seat, "progress", entry.progress, game.progress)
        _check(problems, log.seat, "moves", entry.moves, len(log.moves))
        if game.won != (status == "won"):
            problems.append(f"seat {log.seat}: status {status!r} but the board is "
                            f"{'won' if game.won else 'not won'}")
        if status == "stuck" and not game.stuck:
            problems.append(f"seat {log.seat}: status 'stuck' but moves remain")
        replayed[log.seat] = SeatRecord(
            seat=log.seat, name=entry.name, bot=entry.bot, status=status,
            progress=game.progress, moves=len(log.moves), finish_ms=entry.finish_ms,
            progress_ms=entry.progress_ms,
        )
    expected = [(e.rank, e.seat) for e in rank(replayed.values(), results.rank_by)]
    actual = [(e.rank, e.seat) for e in results.ranking]
    if not problems and expected != actual:
        problems.append(f"the ranking should be {expected} (rank, seat), not {actual}")
    return problems


def _check(problems: list[str], seat: int, what: str, reported: Any, actual: Any) -> None:
    if reported != actual:
        problems.append(f"seat {seat}: {what} reported {reported}, the log gives {actual}")
