"""Replaying a finished race from its results alone: the seed gives the deal (the same
one the server dealt), each seat's log gives its moves and their race clocks, so every
board can be rebuilt at any moment of the race with the engine.

``Replay`` is pure (no I/O, no clock of its own): the replay screen and the tests move
it forward by race time (``advance_to``) or move by move (``step``).
"""

from __future__ import annotations

from dataclasses import dataclass

import engine
from protocol import messages as M


@dataclass(frozen=True)
class Step:
    """One move of the race: when (race clock, ms), whose seat, which move."""

    clock_ms: int
    seat: int
    move: str


class Replay:
    """Every board of a finished race, at a point of its timeline."""

    def __init__(self, results: M.Results) -> None:
        self.results = results
        self.fresh = engine.new_game(results.variant, seed=results.seed, **results.options)
        steps: list[tuple[int, int, int, Step]] = []
        for log in results.logs:
            for index, move in enumerate(log.moves):
                # Logs saved without clocks still replay: one move a second, in turn.
                clock = log.clocks[index] if index < len(log.clocks) else index * 1000
                steps.append((clock, index, log.seat, Step(clock, log.seat, move)))
        self.timeline = [s for *_, s in sorted(steps, key=lambda t: t[:3])]
        self.names = {e.seat: e.name + ("*" if e.bot else "") for e in results.ranking}
        self.seats = sorted(log.seat for log in results.logs)
        self.reset()

    def reset(self) -> None:
        """Back to the deal, before the first move."""
        self.games = {seat: self.fresh.copy() for seat in self.seats}
        self.moves = dict.fromkeys(self.seats, 0)
        self.position = 0
        self.clock_ms = 0

    @property
    def end_ms(self) -> int:
        """The race clock of the last move."""
        return self.timeline[-1].clock_ms if self.timeline else 0

    @property
    def done(self) -> bool:
        """Every move has been replayed."""
        return self.position >= len(self.timeline)

    def step(self) -> Step | None:
        """Play the next move of the race (None when there is none)."""
        if self.done:
            return None
        step = self.timeline[self.position]
        self.games[step.seat].play(step.move)
        self.moves[step.seat] += 1
        self.position += 1
        self.clock_ms = max(self.clock_ms, step.clock_ms)
        return step

    def advance_to(self, clock_ms: int) -> int:
        """Play every move made up to race time ``clock_ms``; returns how many."""
        played = 0
        while not self.done and self.timeline[self.position].clock_ms <= clock_ms:
            self.step()
            played += 1
        self.clock_ms = max(self.clock_ms, min(clock_ms, self.end_ms))
        return played

    def seek_end(self) -> None:
        """Play every remaining move."""
        while self.step() is not None:
            pass

    def status(self, seat: int) -> str:
        """The seat's status now: won, stuck, or its final status once its log is
        done (resigned, timeout...), else playing."""
        game = self.games[seat]
        if game.won:
            return "won"
        log_done = self.moves[seat] == next(
            len(log.moves) for log in self.results.logs if log.seat == seat
        )
        if log_done and self.done:
            final = next((e.status for e in self.results.ranking if e.seat == seat), "playing")
            return str(final)
        return "stuck" if game.stuck else "playing"
