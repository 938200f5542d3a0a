"""What today's server already guarantees about hidden information to a second
connection: a spectator of a room where the player is the only seat learns none of the
player's face-down cards (docs/SECURITY.md lists the leaks that are still open).

The player's face-down cards come from the engine's deal of the seed revealed in the
results, replaying the player's logged moves, not from anything the server chose to hide.
"""

from __future__ import annotations

import pytest

from bench.attack.harness import ServerProc, source_addr
from bench.attack.leak import cards_in, leak_race
from protocol import messages as m


@pytest.mark.parametrize("delay", [0, 5])
async def test_spectator_of_a_lone_player_learns_no_face_down_card(
        fast_server: ServerProc, delay: int) -> None:
    # The spectator comes from another address: what is tested is masking, not whether a
    # future rule lets a player's own address watch its room.
    result = await leak_race(fast_server.url, 0, delay=delay, spectators=True,
                             second_seat=False, own_moves=40, watcher_source=source_addr(1))
    assert result["player_face_down"] > 0  # something was there to leak
    if delay == 0:
        # The scan sees cards: those face up on the player's board reached the spectator.
        assert result["spectator_cards"] > 0
    assert result["spectator_learned"] == 0


def test_the_card_scan_finds_cards_anywhere_in_a_message() -> None:
    board = m.Board(seat=1, seq=0, hash=0, view={
        "tableau": [{"down": 2, "up": ["KS", "QH"]}], "foundations": {"S": 0}})
    diff = m.Diff(seat=1, seq=3, move="7>2", hash=1, clock_ms=5, revealed=[(7, "6C")])
    assert cards_in(board) == {"KS", "QH"}
    assert cards_in(diff) == {"6C"}  # "7>2" is a move, not a card
    assert cards_in(m.Pong(server_ms=1, nonce=2)) == set()
