"""What a client knows of its room, kept current from the server's messages. Pure data:
``RoomState.update(message)`` folds one server message in (no I/O), so UIs and tests can
drive it directly."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import msgspec

import engine
from protocol import messages as M

from .boards import BoardState


@dataclass
class RoomState:
    """One room as this client sees it. ``seat`` is 0 for a spectator. ``boards`` holds the
    boards this client may see (its own while racing; all of them when spectating or after
    the finish). ``clock_offset_ms`` converts local monotonic time to the server's clock."""

    code: str = ""
    settings: M.RoomSettings | None = None
    phase: str = "lobby"
    seat: int = 0
    creator: int = 0
    commitment: str = ""
    token: str | None = None
    seats: dict[int, M.SeatInfo] = field(default_factory=dict)
    boards: dict[int, BoardState] = field(default_factory=dict)
    ranking: list[M.RankEntry] = field(default_factory=list)
    results: M.Results | None = None
    start_ms: int | None = None
    server_offset_ms: float = 0.0  # server wall clock minus local wall clock
    last_clock_ms: int = 0
    desynced: set[int] = field(default_factory=set)
    # A Verdict that came before its room's results (the server may send it first):
    # folded into the results when they arrive.
    early_verdict: M.Verdict | None = None
    # spectators: the server withholds boards while any racing seat has face-down cards
    # (Joined/Started ``hidden``); they arrive as Snapshots, which clear this
    boards_hidden: bool = False
    # Cards on the foundations before the first move (4 in Perseverance, whose Aces start
    # there; 0 elsewhere): a seat that has not moved yet has this much progress.
    start_progress: int = 0

    # ------------------------------------------------------------------ derived
    @property
    def me(self) -> M.SeatInfo | None:
        """This client's seat, or None for a spectator."""
        return self.seats.get(self.seat) if self.seat else None

    @property
    def my_board(self) -> BoardState | None:
        """This client's own board, once the race has started."""
        return self.boards.get(self.seat) if self.seat else None

    @property
    def variant(self) -> str:
        """The room's variant name ('' before joining)."""
        return self.settings.variant if self.settings else ""

    def server_now_ms(self) -> float:
        """The server's wall clock now, estimated from the last timestamps it sent."""
        return time.time() * 1000 + self.server_offset_ms

    def race_clock_ms(self) -> int:
        """Milliseconds since the race started (negative during the countdown, 0 before)."""
        if self.start_ms is None:
            return 0
        return int(self.server_now_ms() - self.start_ms)

    # ------------------------------------------------------------------ updates
    def _sync_clock(self, server_ms: int) -> None:
        self.server_offset_ms = server_ms - time.time() * 1000

    def _set_board(self, board: M.Board) -> None:
        state = BoardState.from_board(board)
        self.boards[board.seat] = state
        if state.desynced:
            self.desynced.add(board.seat)
        else:
            self.desynced.discard(board.seat)

    def update(self, msg: Any) -> None:
        """Fold one server message into the state (messages it has no use for are
        ignored). ``Accepted`` is handled by the client, which knows the move it sent."""
        self._update(msg)
        for info in self.seats.values():
            if info.moves == 0 and info.progress < self.start_progress:
                info.progress = self.start_progress

    def _update(self, msg: Any) -> None:
        if isinstance(msg, M.Joined):
            if self.results is not None and msg.commitment != self.commitment:
                self._new_round()
            self.start_progress = start_progress(msg.settings)
            self.code, self.settings, self.phase = msg.code, msg.settings, msg.phase
            self.seat, self.creator, self.commitment = msg.seat, msg.creator, msg.commitment
            if msg.token:
                self.token = msg.token
            self.seats = {s.seat: s for s in msg.seats}
            self.start_ms = msg.start_ms
            if msg.start_ms is not None and msg.clock_ms is not None:
                self._sync_clock(msg.start_ms + msg.clock_ms)
            self.boards_hidden = msg.hidden
            for board in msg.boards:
                self._set_board(board)
        elif isinstance(msg, M.Welcome):
            self._sync_clock(msg.server_ms)
        elif isinstance(msg, M.Seats):
            self.seats = {s.seat: s for s in msg.seats}
        elif isinstance(msg, M.Countdown):
            self.phase, self.start_ms = "countdown", msg.start_ms
            self._sync_clock(msg.server_ms)
        elif isinstance(msg, M.Started):
            self.phase, self.start_ms = "running", msg.start_ms
            for seat in self.seats.values():
                if seat.status == "lobby":
                    seat.status = "playing"
            self.boards_hidden = msg.hidden
            for board in msg.boards:
                self._set_board(board)
        elif isinstance(msg, M.Diffs):
            # a spectator's tick: exactly that run of D, then the latest P per seat
            for diff in msg.diffs:
                self.update(diff)
            for progress in msg.progress:
                self.update(progress)
        elif isinstance(msg, M.Diff):
            state = self.boards.get(msg.seat)
            if state is not None and not state.apply(msg.seq, msg.move, msg.revealed, msg.hash):
                self.desynced.add(msg.seat)
            self._clock(msg.clock_ms)
        elif isinstance(msg, M.Snapshot):
            self.boards_hidden = False
            self._set_board(msg.board)
        elif isinstance(msg, M.Progress):
            info = self.seats.get(msg.seat)
            if info is not None:
                info.progress, info.moves, info.status = msg.progress, msg.moves, msg.status
            self._clock(msg.clock_ms)
        elif isinstance(msg, M.Ranking):
            self.ranking = list(msg.ranking)
            # A player gets no Progress for its own moves: the ranking carries every
            # seat's status, so the seats follow it.
            for entry in msg.ranking:
                info = self.seats.get(entry.seat)
                if info is not None:
                    info.status, info.progress, info.moves = (
                        entry.status,
                        entry.progress,
                        entry.moves,
                    )
        elif isinstance(msg, M.Results):
            self.results, self.phase = msg, "finished"
            self.ranking = list(msg.ranking)
            early, self.early_verdict = self.early_verdict, None
            if early is not None and early.code == msg.code:
                self._verdict(early)
        elif isinstance(msg, M.Verdict):
            self._verdict(msg)
        elif isinstance(msg, M.Pong):
            self._sync_clock(msg.server_ms)

    def _verdict(self, msg: M.Verdict) -> None:
        """The deal's verdict, decided after the results went out: the results now say
        whether the deal was winnable, and its par (kept for the results still to come)."""
        if msg.code != self.code or msg.winnable is None:
            return
        if self.results is None:
            self.early_verdict = msg
            return
        self.results = msgspec.structs.replace(self.results, winnable=msg.winnable,
                                               par=msg.par)

    def _new_round(self) -> None:
        """A rematch: the room starts over on a new deal (a ``Joined`` with a new
        commitment after the results). What belonged to the last race goes."""
        self.results, self.ranking, self.start_ms = None, [], None
        self.early_verdict = None
        self.boards.clear()
        self.desynced.clear()
        self.last_clock_ms = 0

    def _clock(self, clock_ms: int) -> None:
        # A move's clock was read before the frame travelled: it can only say the server
        # clock is *at least* this far on, so it may move the estimate forward, never back.
        self.last_clock_ms = max(self.last_clock_ms, clock_ms)
        if self.start_ms is not None:
            offset = self.start_ms + clock_ms - time.time() * 1000
            self.server_offset_ms = max(self.server_offset_ms, offset)


def start_progress(settings: M.RoomSettings) -> int:
    """The progress of every deal of these settings before any move (the engine's count
    of cards a variant starts with on its foundations)."""
    try:
        return int(engine.new_game(settings.variant, seed=0, **settings.options).progress)
    except engine.EngineError:
        return 0
