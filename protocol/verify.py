"""Checking a race's results from the ``Results`` message alone: anyone can run this after
a race (``solrace verify``, the client's seed check, the server's tests).

``verify_results`` recomputes the commitment from the revealed seed and salt, deals the
board again, replays every seat's log through the engine and recomputes each seat's
progress, move count, win, stuck state and — from the move clocks (``SeatLog.clocks``) —
its finish time, the time it reached its progress and whether its play was bot-like
(``ranking.bot_like``); then recomputes the ranking from those and compares it with the
published one.

What the results cannot prove: that the clocks are the times the server really received
the moves, and ``resigned``/``timeout``, which are the server's word.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import msgspec

import engine

from .codec import decode_server
from .errors import DecodeError
from .messages import RankEntry, Results, SeatLog
from .ranking import bot_like, rank


@dataclass
class SeatReplay:
    """One seat's log replayed: the board it reaches, and what is wrong with the log."""

    seat: int
    game: engine.Game
    problems: list[str]
    finish_ms: int | None = None
    progress_ms: int | None = None


@dataclass
class Verification:
    """The verdict. ``problems`` empty means everything checked out; ``lines`` summarise
    what was checked, for people."""

    commitment_ok: bool
    commitment_problems: list[str] = field(default_factory=list)
    replay_problems: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        """Every problem found: the commitment's, then the replay's."""
        return self.commitment_problems + self.replay_problems

    @property
    def replay_ok(self) -> bool:
        """The logs replay to the published ranking, progress and times."""
        return not self.replay_problems

    @property
    def ok(self) -> bool:
        """True when every check passed."""
        return self.commitment_ok and not self.problems


@dataclass(frozen=True)
class _Standing:
    seat: int
    name: str
    bot: bool
    status: str
    progress: int
    moves: int
    finish_ms: int | None
    progress_ms: int | None


def load_results(data: bytes) -> Results:
    """A ``Results`` message from JSON (wire keys, as ``msgspec.json`` writes it) or
    MessagePack bytes. Raises ``ValueError`` saying what is wrong."""
    text = data.lstrip()
    try:
        if text.startswith(b"{"):
            return msgspec.json.decode(text, type=Results)
        message = decode_server(data)
    except (msgspec.DecodeError, msgspec.ValidationError, DecodeError) as exc:
        raise ValueError(f"not a results message: {exc}") from None
    if not isinstance(message, Results):
        raise ValueError(f"not a results message but {type(message).__name__}")
    return message


def replay_log(fresh: engine.Game, log: SeatLog) -> SeatReplay:
    """Replay one seat's log on a copy of the fresh deal, with its clocks if present."""
    game = fresh.copy()
    problems: list[str] = []
    clocks = log.clocks
    if clocks and len(clocks) != len(log.moves):
        problems.append(f"{len(clocks)} clocks for {len(log.moves)} moves")
        clocks = []
    if any(b < a for a, b in itertools.pairwise(clocks)):
        problems.append("the move clocks go backwards")
    replay = SeatReplay(log.seat, game, problems)
    reached: dict[int, int] = {}  # progress -> clock when first reached (PROTOCOL.md)
    for number, move in enumerate(log.moves, 1):
        before = game.progress
        try:
            game.play(move)
        except engine.EngineError as exc:
            problems.append(f"move {number} {move!r} is illegal: {exc}")
            break
        if clocks:
            if game.progress != before:
                replay.progress_ms = reached.setdefault(game.progress, clocks[number - 1])
            if game.won:
                replay.finish_ms = clocks[number - 1]
    return replay


def verify_results(results: Results, committed: str | None = None) -> Verification:
    """Every inconsistency found in ``results`` (see the module docstring). ``committed``
    is the commitment a client was shown before the race; if given, it must match too
    (else a server could have picked seed and commitment after the race)."""
    try:
        commitment_ok = engine.verify_commitment(results.seed, results.salt, results.commitment)
    except engine.EngineError as exc:
        return Verification(False, [f"bad seed or salt: {exc}"])
    out = Verification(commitment_ok)
    if committed is not None and committed.lower() != results.commitment.lower():
        out.commitment_ok = False
        out.commitment_problems.append(
            "the commitment differs from the one published before the race")
    elif not commitment_ok:
        out.commitment_problems.append(
            "the seed and salt do not match the commitment published before the race")
    out.lines.append(f"seed {results.seed}: " + (
        "matches the commitment" if out.commitment_ok else "DOES NOT match the commitment"))
    try:
        fresh = engine.new_game(results.variant, seed=results.seed, **results.options)
    except engine.EngineError as exc:
        out.replay_problems.append(f"cannot deal the race's board: {exc}")
        return out
    entries = {e.seat: e for e in results.ranking}
    if sorted(entries) != sorted(log.seat for log in results.logs):
        out.replay_problems.append("the ranking and the logs name different seats")
    standings: list[_Standing] = []
    flagged: set[int] = set()
    for log in results.logs:
        replay = replay_log(fresh, log)
        entry = entries.get(log.seat)
        seat_problems = [f"seat {log.seat}: {p}" for p in replay.problems]
        if log.clocks and bot_like(log.moves, log.clocks):
            flagged.add(log.seat)
        if entry is not None:
            seat_problems += _compare(entry, replay, len(log.moves), bool(log.clocks))
            if log.clocks and entry.bot_like != (log.seat in flagged and not entry.bot):
                seat_problems.append(f"seat {log.seat}: bot-like reported {entry.bot_like}, "
                                     f"the clocks give {not entry.bot_like}")
            standings.append(_Standing(
                log.seat, entry.name, entry.bot, entry.status, replay.game.progress,
                len(log.moves),
                replay.finish_ms if log.clocks else entry.finish_ms,
                replay.progress_ms if log.clocks else entry.progress_ms,
            ))
        out.replay_problems += seat_problems
        game = replay.game
        name = entry.name if entry else f"seat {log.seat}"
        verdict = "ok" if not seat_problems else "MISMATCH"
        bot_note = " (bot-like)" if entry is not None and entry.bot_like else ""
        out.lines.append(f"{name}: {len(log.moves)} moves replayed → {game.progress} cards"
                         f"{' (won)' if game.won else ''}{bot_note} — {verdict}")
    expected = [(e.rank, e.seat) for e in rank(standings, results.rank_by, flagged)]
    actual = [(e.rank, e.seat) for e in results.ranking]
    if not out.replay_problems and expected != actual:
        out.replay_problems.append(f"the ranking should be {expected} (rank, seat), not {actual}")
    return out


def _compare(entry: RankEntry, replay: SeatReplay, moves: int, timed: bool) -> list[str]:
    game, seat = replay.game, entry.seat
    problems = []

    def check(what: str, reported: object, actual: object) -> None:
        if reported != actual:
            problems.append(f"seat {seat}: {what} reported {reported}, the log gives {actual}")

    check("progress", entry.progress, game.progress)
    check("moves", entry.moves, moves)
    if game.won != (entry.status == "won"):
        problems.append(f"seat {seat}: status {entry.status!r} but the board is "
                        f"{'won' if game.won else 'not won'}")
    if entry.status == "stuck" and not game.stuck:
        problems.append(f"seat {seat}: status 'stuck' but moves remain")
    if timed:
        check("finish time", entry.finish_ms, replay.finish_ms)
        check("progress time", entry.progress_ms, replay.progress_ms)
    return problems
