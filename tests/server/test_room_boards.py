"""``HiddenCards`` (server/room_boards.py), the state behind the room-wide
hidden-information rule, against the rule as docs/SERVER.md states it: a room hides
while it is racing and some racing seat still has a face-down card, or while the node
does not know yet; never in the lobby or the countdown, never once the race ended; a
count older than the one known is ignored; a seat that stopped playing no longer
counts."""

from __future__ import annotations

from server.room_boards import HiddenCards


def test_a_node_that_knows_nothing_yet_assumes_the_room_hides() -> None:
    cards = HiddenCards()
    assert cards.hidden("running")
    assert not cards.hidden("lobby") and not cards.hidden("countdown")


def test_the_room_hides_until_no_racing_seat_has_a_face_down_card() -> None:
    cards = HiddenCards()
    cards.started([1, 2], racing=True, down=21)
    assert cards.hidden("running")
    cards.moved(1, 40, 0, "playing")  # seat 1 turned its last card; seat 2 has 21
    assert cards.hidden("running")
    cards.moved(2, 12, 3, "playing")
    assert cards.hidden("running")
    cards.moved(2, 13, 0, "playing")
    assert not cards.hidden("running")


def test_an_older_count_does_not_overwrite_a_newer_one() -> None:
    cards = HiddenCards()
    cards.started([1], racing=True, down=21)
    cards.moved(1, 30, 0, "playing")
    cards.note_down(1, 12, 5)  # a store read that crossed the move's event
    assert cards.down == {1: 0} and not cards.hidden("running")


def test_a_seat_that_stopped_playing_no_longer_hides_the_room() -> None:
    cards = HiddenCards()
    cards.started([1, 2], racing=True, down=21)
    cards.moved(1, 50, 0, "won")
    cards.moved(2, 9, 14, "stuck")  # cards still face down, but it races no more
    assert not cards.hidden("running")


def test_a_deal_nobody_races_and_a_finished_race_hide_nothing() -> None:
    cards = HiddenCards()
    cards.started([1, 2], racing=False, down=21)
    assert not cards.hidden("running")
    finished = HiddenCards()
    finished.started([1], racing=True, down=21)
    finished.ended = True
    assert not finished.hidden("running")
