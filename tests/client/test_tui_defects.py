"""The terminal defects of issue 18, each checked on the screen (Textual's Pilot at
80x24, read back as text) against a real server in this process."""

from __future__ import annotations

import asyncio
import re

import engine
from client_cli.sdk import RaceClient, settings_from
from client_cli.tui.common import screen_text
from client_cli.tui.play import PlayApp
from client_cli.tui.render import card_label

from .test_tui_play import SIZE, moves_done, start_race

RAW_CODE = re.compile(r"\b[A2-9TJQK][SHDC]\b")


async def resign_to_results(app: PlayApp, pilot) -> None:  # type: ignore[no-untyped-def]
    """Start the race, resign at once (x x), and wait for the results screen."""
    await start_race(app, pilot)
    await pilot.press("x", "x")
    await app.client.wait_for(lambda r: r.results is not None, 10)
    await pilot.pause()


def rows(app: PlayApp) -> list[str]:
    return screen_text(app).split("\n")


def message_row(app: PlayApp) -> str:
    """The message bar: the row above the command line (the last rows are the command
    line and the keys, which take one or two rows)."""
    text = rows(app)
    cmd = next(i for i, row in enumerate(text) if "type a move" in row or "press :" in row)
    return text[cmd - 1]


async def test_q_in_the_lobby_asks_and_says_how_to_come_back(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=1)
    app = PlayApp(server.url, "ann", create=settings_from("brisbane", countdown_s=0))
    async with app.run_test(size=SIZE) as pilot:
        await app.client.wait_for(lambda r: bool(r.code), 10)
        code = app.client.room.code
        await pilot.press("q")
        await pilot.pause()
        assert f"press q again to leave room {code}" in screen_text(app)
        assert app.is_running
        farewell = app.farewell()
        assert farewell is not None and f"--join {code} --name ann" in farewell
        await pilot.press("q")
    assert not app.is_running


async def test_play_says_when_reconnecting_gives_up(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=1)
    client = RaceClient(server.url, "ann", max_retries=1, backoff_s=0.01)
    app = PlayApp(server.url, "ann", create=settings_from("brisbane", countdown_s=0),
                  client=client)
    async with app.run_test(size=SIZE) as pilot:
        await start_race(app, pilot)
        code = app.client.room.code
        session = next(w for w in app.workers if w.name == "session")
        await server.stop()  # the server is gone for good
        await app.workers.wait_for_complete([session])
        await pilot.pause()
        text = " ".join(row.strip() for row in rows(app))
        assert app.session_lost is not None
        assert f"✗ gave up reconnecting — rejoin: solrace play {server.url} --join {code} " \
            "--name ann" in text


async def test_plus_and_minus_choose_how_many_cards_move(start_server) -> None:  # type: ignore[no-untyped-def]
    # Brisbane seed 3 at the deal: pile 2 onto pile 1 is legal with 2 cards and with 4
    # (found with the engine); the pile keys alone would move 4.
    seed = 3
    legal = {str(m) for m in engine.new_game("brisbane", seed=seed).legal_moves()}
    assert {"2:2>1", "2:4>1"} <= legal
    server = await start_server(seed=seed)
    app = PlayApp(server.url, "ann", create=settings_from("brisbane", countdown_s=0))
    async with app.run_test(size=SIZE) as pilot:
        await start_race(app, pilot)
        board = app.client.room.my_board
        up = board.view["tableau"][1]["up"]
        await pilot.press("2")
        await pilot.press(*["minus"] * (len(up) - 2))
        await pilot.pause()
        assert f"2 card(s) from {card_label(up[-2])}" in message_row(app)
        await pilot.press("1")
        await app.client.wait_for(lambda r: r.my_board.seq == 1, 10)
        assert app.client.room.my_board.moves == ["2:2>1"]


async def test_refusals_show_cards_as_the_board_does(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=1)
    app = PlayApp(server.url, "ann", create=settings_from("brisbane", countdown_s=0))
    async with app.run_test(size=SIZE) as pilot:
        await start_race(app, pilot)
        board = app.client.room.my_board
        legal = set(board.legal_moves())
        bad = next(f"{i}>{j}" for i in range(1, 8) for j in range(1, 8)
                   if i != j and f"{i}>{j}" not in legal and board.view["tableau"][i - 1]["up"])
        await pilot.press(bad[0], bad[2])
        await moves_done(app)
        await pilot.pause()
        line = message_row(app)
        assert f"✗ {bad}" in line
        assert re.search("[♠♥♦♣]", line) and not RAW_CODE.search(line)


async def test_the_results_are_not_cut_at_80x24(start_server) -> None:  # type: ignore[no-untyped-def]
    seed = 18_446_744_073_709_551_000  # a 20-digit seed: the longest there is
    server = await start_server(seed=seed)
    app = PlayApp(server.url, "a-rather-long-name", create=settings_from("brisbane", countdown_s=0))
    async with app.run_test(size=SIZE) as pilot:
        await resign_to_results(app, pilot)
        # The board area, rows joined: what a reader gets by reading every line.
        left = " ".join(row.split("▏")[0].strip() for row in rows(app))
        assert f"seed {seed}: matches the commitment" in left
        assert "a-rather-long-name: 0 moves replayed → 0 cards — ok" in left
        assert "1 a-rather-long-name resigned" in left  # the ranking row, name whole
        assert "…" not in left


async def test_perseverance_counts_its_aces_from_the_start(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=1)
    app = PlayApp(server.url, "ann", create=settings_from("perseverance", countdown_s=0))
    async with app.run_test(size=SIZE) as pilot:
        await app.client.wait_for(lambda r: bool(r.code), 10)
        await pilot.pause()
        panel = [row.split("▏", 1)[1] for row in rows(app) if "▏" in row]
        assert any(re.search(r"ann.* 4$", row) for row in panel), panel
        await pilot.press("y")
        await app.client.wait_for(lambda r: r.my_board is not None, 10)
        await pilot.pause()
        panel = [row.split("▏", 1)[1] for row in rows(app) if "▏" in row]
        assert any(re.search(r"ann.* 4$", row) for row in panel), panel


async def test_the_key_line_lists_only_the_variants_keys(start_server) -> None:  # type: ignore[no-untyped-def]
    expected = {  # variant: (pile keys, has redeal, has +/-)
        "brisbane": ("1-7 pile", False, True),
        "fortress": ("1-9 0 pile", False, False),
        "perseverance": ("1-9 0 a-b pile", True, True),
        "portuguese": ("1-9 0 a-c pile", False, False),
    }
    for variant, (piles, redeal, group) in expected.items():
        server = await start_server(seed=1)
        app = PlayApp(server.url, "ann", create=settings_from(variant, countdown_s=0))
        async with app.run_test(size=SIZE) as pilot:
            await start_race(app, pilot)
            keys = "\n".join(rows(app)[-2:])
            assert piles in keys and "? rules" in keys and "q quit" in keys
            assert ("r redeal" in keys) == redeal
            assert ("+/- cards" in keys) == group
            assert "h hint" not in keys  # the room has no hints
        await server.stop()


async def test_question_mark_shows_the_variants_rules(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=1)
    app = PlayApp(server.url, "ann", create=settings_from("fortress", countdown_s=0))
    async with app.run_test(size=SIZE) as pilot:
        await start_race(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        text = screen_text(app)
        assert "Rules: Fortress" in text
        assert "build up or down by one rank, in the same suit only" in text
        assert "Brisbane" not in text
        await pilot.press("1")  # keys belong to the rules screen: no move is made
        await pilot.press("escape")
        await pilot.pause()
        assert "Rules: Fortress" not in screen_text(app)
        assert app.client.room.my_board.seq == 0 and app.selected is None


async def test_two_names_two_seats_own_rejoin(start_server, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Two players on one machine (one token file): two seats; each --join with its name
    takes back its own seat, with auto-moves as that player left them."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    server = await start_server(seed=1)
    settings = settings_from("spanish", countdown_s=0, max_players=2)
    ann = PlayApp(server.url, "ann", create=settings, remember=True)
    async with ann.run_test(size=SIZE) as ann_pilot:
        await ann.client.wait_for(lambda r: bool(r.code), 10)
        code = ann.client.room.code
        bob = PlayApp(server.url, "bob", join=code, remember=True)
        async with bob.run_test(size=SIZE) as bob_pilot:
            await bob.client.wait_for(lambda r: r.seat != 0, 10)
            assert {ann.client.room.seat, bob.client.room.seat} == {1, 2}
            await bob_pilot.press("y")
            await ann_pilot.press("y")
            await ann.client.wait_for(lambda r: r.my_board is not None, 10)
            await bob.client.wait_for(lambda r: r.my_board is not None, 10)
            await bob_pilot.press("t")  # bob turns auto-moves on, then leaves
            await bob_pilot.press("q", "q")
        await ann_pilot.press("q", "q")
    for name, seat, auto in (("bob", 2, True), ("ann", 1, False)):
        again = PlayApp(server.url, name, join=code, remember=True)
        async with again.run_test(size=SIZE) as pilot:
            await again.client.wait_for(lambda r: r.my_board is not None, 10)
            await pilot.pause()
            text = screen_text(again)
            assert again.client.room.seat == seat
            assert "took your seat back" in text
            assert ("auto:on" in text) == auto
            assert f"{name} (you)" not in text  # racing screen, not the lobby
            await pilot.press("q", "q")


async def test_a_redeal_that_changes_nothing_asks_first(start_server) -> None:  # type: ignore[no-untyped-def]
    # At the deal every Perseverance pile has 4 cards: gathering them and dealing them
    # back in fours gives the same piles (docs/RULES.md), yet it uses a redeal up.
    server = await start_server(seed=5)
    settings = settings_from("perseverance", countdown_s=0, options={"redeal_when": "any_time"})
    app = PlayApp(server.url, "ann", create=settings)
    async with app.run_test(size=SIZE) as pilot:
        await start_race(app, pilot)
        await pilot.press("r")
        await moves_done(app)
        await pilot.pause()
        assert "gives the same piles back" in screen_text(app)
        assert app.client.room.my_board.seq == 0
        await pilot.press("r")
        await app.client.wait_for(lambda r: r.my_board.seq == 1, 10)
        await pilot.pause()
        assert app.client.room.my_board.view["redeals_left"] == 1
        assert "redeals left: 1" in screen_text(app)


async def test_a_killed_bot_takes_its_seat_back(start_server, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from client_cli.commands.bot import _seat

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    server = await start_server(seed=1)
    host = RaceClient(server.url, "host")
    await host.connect()
    await host.create_room(settings_from("brisbane", countdown_s=0, max_players=3),
                           as_player=False)
    code = host.room.code
    first, resumed = await _seat(server.url, code, "robo", remember=True)
    other, _ = await _seat(server.url, code, "other", remember=True)
    assert not resumed and {first.room.seat, other.room.seat} == {1, 2}
    seat = first.room.seat
    await first.close()  # the bot process dies
    again, resumed = await _seat(server.url, code, "robo", remember=True)
    assert resumed and again.room.seat == seat
    for c in (again, other, host):
        await c.close()


async def test_watch_plain_never_prints_a_traceback(start_server, capsys) -> None:  # type: ignore[no-untyped-def]
    from client_cli.commands.watch import watch_plain

    assert await watch_plain("ws://127.0.0.1:1", "NOROOM") == 1
    assert await watch_plain("not a url", "NOROOM") == 1
    err = capsys.readouterr().err
    assert err.count("solrace watch:") == 2 and "Traceback" not in err

    server = await start_server(seed=1)
    host = RaceClient(server.url, "host")
    await host.connect()
    await host.create_room(settings_from("brisbane", countdown_s=0), as_player=False)
    joined = asyncio.Event()
    task = asyncio.create_task(watch_plain(
        server.url, host.room.code, joined=joined,
        client_options={"max_retries": 1, "backoff_s": 0.01},
    ))
    await asyncio.wait_for(joined.wait(), 10)
    await host.close()
    await server.stop()  # the server dies under the spectator
    assert await asyncio.wait_for(task, 30) == 1
    err = capsys.readouterr().err
    assert err.startswith("solrace watch: ") and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


async def test_next_deal_on_the_results_screen(start_server) -> None:  # type: ignore[no-untyped-def]
    """``n`` after the results asks for a rematch; alone in the room, the player is
    everyone, so the room goes back to its lobby on a new deal and the screen says so."""
    server = await start_server(seed=1)
    app = PlayApp(server.url, "ann", create=settings_from("brisbane", countdown_s=0))
    async with app.run_test(size=SIZE) as pilot:
        await resign_to_results(app, pilot)
        first = app.client.room.commitment
        assert "n next deal" in rows(app)[-1]
        await pilot.press("n")
        await app.client.wait_for(lambda r: r.results is None and r.phase == "lobby", 10)
        asking = [w for w in app.workers if w.group == "requests"]
        if asking:  # (an empty list would mean every worker, the session's included)
            await app.workers.wait_for_complete(asking)
        await pilot.pause()
        assert "round 2: a new deal" in message_row(app)
        assert app.client.room.commitment != first and app.committed != first
        await pilot.press("y")  # and the next deal races: ready, then the new board
        await app.client.wait_for(lambda r: r.my_board is not None, 10)
        assert app.client.room.my_board is not None and app.client.room.my_board.seq == 0


def test_a_new_commitment_after_the_results_starts_a_new_round() -> None:
    """The SDK side of a rematch: a ``joined`` with a new commitment after the results
    clears the last race (results, ranking, boards), keeping the seats."""
    from client_cli.sdk import RoomState
    from protocol import messages as M

    settings = settings_from("brisbane")
    seat = M.SeatInfo(seat=1, name="ann")
    room = RoomState()
    room.update(M.Joined(code="R1", settings=settings, phase="lobby", seat=1,
                         commitment="aa", seats=[seat]))
    results = M.Results(code="R1", variant="brisbane", options={}, rank_by="time", seed=1,
                        salt="00", commitment="aa", ranking=[], logs=[], reason="all_done")
    room.update(results)
    assert room.phase == "finished" and room.results is not None
    room.update(M.Joined(code="R1", settings=settings, phase="lobby", seat=1,
                         commitment="bb", seats=[seat]))
    assert room.results is None and room.phase == "lobby" and room.commitment == "bb"
    assert room.boards == {} and room.ranking == []
