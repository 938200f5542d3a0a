"""Hidden information against a second connection: the player's own spectator
connection (same address, with and without delay) learns none of the player's
face-down cards, and a second seat from another address learns none apart from what its
own board shows (docs/SECURITY.md).

The player's face-down cards come from the engine's deal of the seed revealed in the
results, replaying the player's logged moves, not from anything the server chose to hide.
"""

from __future__ import annotations

import pytest

from bench.attack.harness import ServerProc
from bench.attack.leak import cards_in, leak_race
from protocol import messages as m


@pytest.mark.parametrize("delay", [0, 10])
async def test_the_players_own_spectator_learns_no_face_down_card(
        fast_server: ServerProc, delay: int) -> None:
    result = await leak_race(fast_server.url, 0, delay=delay, spectators=True,
                             second_seat=False, own_moves=40)
    assert result["player_face_down"] > 0  # something was there to leak
    # Boards are withheld while the player's board hides cards; the only cards the
    # spectator sees are on the final boards (sent as the race ends, before the results),
    # where the face-down ones are still masked.
    assert result["spectator_learned"] == 0


async def test_a_second_seat_learns_nothing_beyond_its_own_board(
        fast_server: ServerProc) -> None:
    result = await leak_race(fast_server.url, 1, delay=0, spectators=True,
                             second_seat=True, own_moves=5)
    assert result["second_seat_moves"] > 0
    assert result["spectator_learned"] == 0
    assert result["second_seat_learned_not_own_board"] == 0


def test_the_card_scan_finds_cards_anywhere_in_a_message() -> None:
    board = m.Board(seat=1, seq=0, hash=0, view={
        "tableau": [{"down": 2, "up": ["KS", "QH"]}], "foundations": {"S": 0}})
    diff = m.Diff(seat=1, seq=3, move="7>2", hash=1, clock_ms=5, revealed=[(7, "6C")])
    assert cards_in(board) == {"KS", "QH"}
    assert cards_in(diff) == {"6C"}  # "7>2" is a move, not a card
    assert cards_in(m.Pong(server_ms=1, nonce=2)) == set()
