"""Second-connection leak (Brisbane, the same deal on every seat): a player ("victim",
who is also the cheater) races; a second connection of theirs watches the room as a
spectator, and a second seat taken from another address with a throwaway name plays fast.
A card face up on the second seat's board is the same card face down on the player's.

Counted: how many of the player's face-down cards each second connection saw (any card
code in any frame before the results). The player's face-down cards come from the
engine's deal of the seed the results reveal, replaying the player's logged moves, so
the count does not trust anything the server said about hiding them.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any

import msgspec

import engine
from bench.attack.harness import Client, Ctx, source_addr
from engine import cards as C
from protocol import decode_server
from protocol import messages as m

CARD = re.compile(r"^[A2-9TJQK][SHDC]$")
RATE_WAIT_S = 0.2  # after rate_limited (default refill: 10 credits/s)


def add_args(group: argparse._ArgumentGroup) -> None:
    """This attack's options."""
    group.add_argument("--leak-delay", type=int, default=0,
                       help="the room's spectator delay, seconds")
    group.add_argument("--leak-no-spectators", action="store_true",
                       help="spectators off: only the second seat can leak")
    group.add_argument("--leak-no-second-seat", action="store_true",
                       help="no second seat: only the spectator connection can leak")


def cards_in(message: Any) -> set[str]:
    """Every card code anywhere in a decoded message."""
    found: set[str] = set()
    stack = [msgspec.to_builtins(message)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if CARD.match(item):
                found.add(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return found


@dataclass
class Seen:
    """What one connection received before the results."""

    cards: set[str] = field(default_factory=set)
    frames: int = 0
    done: bool = False  # the player stopped racing (or the results arrived)
    # cards in frames other than the receiver's own board's (a seat sees the same deal on
    # its own board, which no server rule can hide from it)
    foreign: set[str] = field(default_factory=set)

    def take(self, message: Any) -> None:
        """Scan one message. Nothing counts once the player (seat 1) stopped racing (its
        resignation's ``P``, or the results): its cards are then no longer protected, and
        spectators get the final boards."""
        if isinstance(message, m.Results) or (
                isinstance(message, m.Progress) and message.seat == 1
                and message.status != "playing"):
            self.done = True
        if not self.done:
            self.frames += 1
            found = cards_in(message)
            self.cards |= found
            if not isinstance(message, m.Accepted | m.Started | m.Joined):
                self.foreign |= found


async def _watch(client: Client, seen: Seen, deadline: float) -> None:
    """Read a connection until its results (or the deadline), scanning every frame."""
    while not seen.done and time.monotonic() < deadline:
        try:
            seen.take(decode_server(await asyncio.wait_for(
                client.ws.recv(), deadline - time.monotonic())))
        except Exception:
            return


async def _play_fast(client: Client, view: dict[str, Any], seen: Seen, seconds: float,
                     rng: random.Random) -> int:
    """Play random legal moves (reveals preferred) as fast as acks and the rate limit allow;
    every frame received is scanned. Returns the moves accepted."""
    deadline = time.monotonic() + seconds
    seq = 0
    while time.monotonic() < deadline:
        legal = [str(mv) for mv in engine.game_from_view(view).legal_moves()]
        if not legal:
            break
        reveal = [mv for mv in legal if ">" in mv and not mv.startswith("f")
                  and _reveals(view, mv)]
        move = rng.choice(reveal or legal)
        await client.send(m.Move(seq=seq + 1, move=move))
        while True:
            try:
                reply = decode_server(await asyncio.wait_for(client.ws.recv(), 10))
            except Exception:
                return seq
            seen.take(reply)
            if isinstance(reply, m.Accepted | m.Rejected | m.Error):
                break
        if isinstance(reply, m.Accepted):
            seq = reply.seq
            view = engine.apply_diff(view, engine.Diff(move, tuple(reply.revealed)))
        elif isinstance(reply, m.Error) and reply.code == "rate_limited":
            await asyncio.sleep(RATE_WAIT_S)
        elif isinstance(reply, m.Rejected) and reply.code == "finished":
            break
    return seq


def _reveals(view: dict[str, Any], move: str) -> bool:
    """The move empties the face-up part of a pile that has face-down cards."""
    src = move.split(">")[0]
    if src == "redeal":
        return False
    pile_no, _, count = src.partition(":")
    pile = view["tableau"][int(pile_no) - 1]
    return bool(pile["down"]) and len(pile["up"]) == int(count or 1)


def face_down_at_end(results: m.Results, seat: int) -> set[str]:
    """The cards face down on ``seat``'s board after its logged moves, from the engine's
    deal of the revealed seed (independent of anything the server hid or showed)."""
    game = engine.new_game(results.variant, results.seed, **results.options)
    for log in results.logs:
        if log.seat == seat:
            for move in log.moves:
                game.play(move)
    return {C.code(card) for pile, down in zip(game.piles, game.down, strict=True)
            for card in pile[:down]}


async def leak_race(url: str, seconds: float, *, delay: int = 0, spectators: bool = True,
                    second_seat: bool = True, own_moves: int = 0, seed: int = 17,
                    watcher_source: str = "") -> dict[str, Any]:
    """One Brisbane race with the player's second connections; what each learned. The
    spectator comes from the player's own address unless ``watcher_source`` says."""
    rng = random.Random(seed)
    player = await Client.open(url, "player")
    await player.create(variant="brisbane", countdown_s=0, public=False,
                        max_players=2 if second_seat else 1, spectators=spectators,
                        spectator_delay_s=delay if spectators else 0)
    watch_seen, seat_seen, own_seen = Seen(), Seen(), Seen()
    tasks: list[asyncio.Task[Any]] = []
    watcher = second = None
    end = time.monotonic() + seconds + 60  # bound on every wait below
    if spectators:
        # as today's clients watch: moves in Diffs frames (every frame is scanned whole)
        watcher = await Client.open(url, "player-watching", source=watcher_source,
                                    batched=True)
        await watcher.join(player.code, role="spectator")
        tasks.append(asyncio.create_task(_watch(watcher, watch_seen, end)))
    if second_seat:
        second = await Client.open(url, "throwaway", source=source_addr(0))
        await second.join(player.code)
        await second.send(m.Ready())
    await player.send(m.Ready())
    started = await player.expect(m.Started)
    own_view = started.boards[0].view
    played = 0
    for _ in range(own_moves):  # the player's own moves (the default: none)
        legal = [str(mv) for mv in engine.game_from_view(own_view).legal_moves()]
        if not legal:
            break
        move = rng.choice(legal)
        await player.send(m.Move(seq=played + 1, move=move))
        reply = await player.expect(m.Accepted | m.Rejected)
        if isinstance(reply, m.Rejected):
            break
        played += 1
        own_view = engine.apply_diff(own_view, engine.Diff(move, tuple(reply.revealed)))
    second_moves = 0
    if second is not None:
        second_start = await second.expect(m.Started)
        second_moves = await _play_fast(second, second_start.boards[0].view, seat_seen,
                                        seconds, rng)
        await second.send(m.Resign())
        tasks.append(asyncio.create_task(_watch(second, seat_seen, end)))
    else:
        await asyncio.sleep(seconds)  # a bench pacing the race, not a synchronisation
    for message in player.inbox:
        own_seen.take(message)
    await player.send(m.Resign())
    results = await player.expect(m.Results, wait=60)
    await asyncio.gather(*tasks)
    hidden = face_down_at_end(results, 1)
    for client in (player, watcher, second):
        if client is not None:
            await client.close()
    return {
        "player_face_down": len(hidden),
        "spectator_learned": len(watch_seen.cards & hidden) if spectators else None,
        "second_seat_learned": len(seat_seen.cards & hidden) if second_seat else None,
        "second_seat_learned_not_own_board": (len(seat_seen.foreign & hidden)
                                              if second_seat else None),
        "either_learned": len((watch_seen.cards | seat_seen.cards) & hidden),
        "spectator_frames": watch_seen.frames, "spectator_cards": len(watch_seen.cards),
        "second_seat_moves": second_moves,
        "spectator_delay_s": delay if spectators else None, "spectators": spectators,
        "player_moves": played,
    }


async def attack(ctx: Ctx, seconds: float) -> dict[str, Any]:
    """One leak race lasting about ``seconds``."""
    return await leak_race(ctx.url, seconds, delay=ctx.args.leak_delay,
                           spectators=not ctx.args.leak_no_spectators,
                           second_seat=not ctx.args.leak_no_second_seat)
