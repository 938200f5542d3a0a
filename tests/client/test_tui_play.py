"""The play screen, driven headless with Textual's Pilot at 80x24 against a real server."""

from __future__ import annotations

import copy
import re

import engine
from client_cli.bots import GreedyBot
from client_cli.sdk import settings_from
from client_cli.tui.common import screen_text
from client_cli.tui.play import PlayApp
from client_cli.tui.render import card_label, pile_key
from engine.moves import TABLEAU, TO_FOUNDATION, parse_move

SIZE = (80, 24)
KEY_NAMES = {">": "greater_than_sign", ":": "colon"}
WON_SEED = 1  # a Brisbane deal the greedy strategy wins in under 100 moves


def keys_for(app: PlayApp, move: str) -> list[str]:
    """The key presses a person would use for ``move``: pile keys where the keys choose
    exactly this move, else the command line."""
    mv = parse_move(move)
    if mv.kind == TO_FOUNDATION:
        return [pile_key(mv.src), "f"]
    if mv.kind == TABLEAU and app.resolve(mv.src, mv.dst) == move:
        return [pile_key(mv.src), pile_key(mv.dst)]
    return ["colon", *(KEY_NAMES.get(c, c) for c in move), "enter"]


async def moves_done(app: PlayApp) -> None:
    """Wait until the moves the app sent in the background have their answers."""
    moving = [w for w in app.workers if w.group == "moves"]
    if moving:  # (an empty list would mean "every worker", the session's included)
        await app.workers.wait_for_complete(moving)


def assert_fits(text: str) -> None:
    lines = text.split("\n")
    assert len(lines) == SIZE[1]
    assert all(len(line) <= SIZE[0] for line in lines)


async def start_race(app: PlayApp, pilot) -> None:  # type: ignore[no-untyped-def]
    await app.client.wait_for(lambda r: bool(r.code), 10)
    await pilot.press("y")  # the only player is ready: the race starts
    await app.client.wait_for(lambda r: r.my_board is not None, 10)
    await pilot.pause()


async def test_a_whole_game_played_through_the_ui(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=WON_SEED)
    app = PlayApp(server.url, "tester", create=settings_from("brisbane", countdown_s=0))
    async with app.run_test(size=SIZE) as pilot:
        await start_race(app, pilot)
        room = app.client.room

        # A refused move: the message line says why, and nothing changed.
        board = room.my_board
        assert board is not None
        legal = {str(m) for m in board.game().legal_moves()}
        bad = next(
            f"{i}>{j}"
            for i in range(1, 8)
            for j in range(1, 8)
            if i != j and f"{i}>{j}" not in legal and board.view["tableau"][i - 1]["up"]
        )
        src, dst = (int(x) for x in bad.split(">"))
        await pilot.press(pile_key(src), pile_key(dst))
        await moves_done(app)
        await pilot.pause()
        assert "✗" in str(app.message) and board.seq == 0
        assert "✗ " + bad in screen_text(app)

        bot = GreedyBot(seed=1)
        bot.on_start(room)
        for _ in range(400):
            board, me = room.my_board, room.me
            assert board is not None and me is not None
            if room.results is not None or me.status != "playing":
                break
            legal_moves = board.legal_moves()
            if not legal_moves:
                break
            move = bot.choose_move(copy.deepcopy(board.view), legal_moves)
            if move is None:
                await pilot.press("x", "x")
                break
            seq = board.seq
            await pilot.press(*keys_for(app, move))
            await app.client.wait_for(lambda r, s=seq: r.my_board.seq > s, 10)
        await app.client.wait_for(lambda r: r.results is not None, 20)
        await pilot.pause()
        text = screen_text(app)
        assert_fits(text)
        assert "Results" in text
        assert "tester" in text and "won" in text
        assert "✓ seed check passed" in text
        assert app.check is not None and app.check.ok
        await pilot.press("q")
    assert app.return_value == 0


def first_seed_with_a_move(variant: str, seed: int) -> int:
    """The first seed from ``seed`` whose deal has a legal move: a deal with none is
    stuck at once, and its race ends before the board could be read off the screen."""
    while not engine.new_game(variant, seed=seed).legal_moves():
        seed += 1
    return seed


async def test_every_variant_fits_80x24(start_server) -> None:  # type: ignore[no-untyped-def]
    for variant in engine.VARIANTS:
        seed = first_seed_with_a_move(variant, 12345)  # Fortress 12345 has no move
        server = await start_server(seed=seed)
        app = PlayApp(server.url, "tester", create=settings_from(variant, countdown_s=0))
        async with app.run_test(size=SIZE) as pilot:
            await start_race(app, pilot)
            text = screen_text(app)
            assert_fits(text)
            layout = engine.new_game(variant, seed=seed).to_layout()
            rows = text.split("\n")
            for number, pile in enumerate(layout["tableau"], 1):
                # The pile's row: its key, every face-up card, one ## per face-down card.
                row = next(r for r in rows if r.startswith(f" {pile_key(number):>2}│"))
                cells = row.split("│", 1)[1].split("▏")[0].split()
                assert cells == ["##"] * len(pile["down"]) + [card_label(c) for c in pile["up"]]
            down = [c for pile in layout["tableau"] for c in pile["down"]]
            if variant == "brisbane":
                assert len(down) == 21 and text.count("##") == 21
            # A face-down card is nowhere on the screen (codes as whole tokens: a room
            # code such as E59D44 is not the 9D).
            tokens = set(re.findall(r"[A-Za-z0-9]+", text))
            for code in down:
                assert card_label(code) not in text and code not in tokens
            assert "tester" in text and "Race" in text
            assert "? rules" in text
        await server.stop()


async def test_auto_foundation_and_typed_moves(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=WON_SEED)
    app = PlayApp(server.url, "tester", create=settings_from("brisbane", countdown_s=0))
    async with app.run_test(size=SIZE) as pilot:
        await start_race(app, pilot)
        room = app.client.room
        board = room.my_board
        assert board is not None
        # typed notation through the command line, looser typing accepted
        move = board.legal_moves()[0]
        await pilot.press("colon", *(KEY_NAMES.get(c, c) for c in move), "enter")
        await app.client.wait_for(lambda r: r.my_board.seq == 1, 10)
        # auto-move: every foundation move is played by itself
        await pilot.press("t")
        await app.client.wait_for(
            lambda r: not any(m.kind == TO_FOUNDATION for m in r.my_board.game().legal_moves()), 10
        )
        await moves_done(app)
        await pilot.pause()
        assert "auto:on" in screen_text(app)
        # resigning takes two presses
        await pilot.press("x")
        assert "press x again" in str(app.message)
        await pilot.press("x")
        await app.client.wait_for(lambda r: r.results is not None, 10)
        await pilot.pause()
        assert "resigned" in screen_text(app)


async def test_the_play_screen_resumes_after_a_drop(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=WON_SEED)
    app = PlayApp(server.url, "tester", create=settings_from("brisbane", countdown_s=0))
    async with app.run_test(size=SIZE) as pilot:
        await start_race(app, pilot)
        client = app.client
        assert client._ws is not None
        client._ws.transport.abort()  # the network drops
        await client.wait_for(lambda r: client.resumes == 1, 10)
        await pilot.pause()
        assert "reconnected" in screen_text(app)
        board = client.room.my_board
        assert board is not None
        move = board.legal_moves()[0]
        await pilot.press("colon", *(KEY_NAMES.get(c, c) for c in move), "enter")
        await client.wait_for(lambda r: r.my_board.seq == 1, 10)
        await moves_done(app)
        await pilot.pause()
        assert f"✓ {move}" in screen_text(app)


async def test_join_takes_the_seat_back(start_server, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """--join finds the resume token saved when you left and takes the seat back."""
    from client_cli.tokens import load_token, token_file

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    server = await start_server(seed=WON_SEED)
    settings = settings_from("brisbane", countdown_s=0)
    first = PlayApp(server.url, "tester", create=settings, remember=True)
    async with first.run_test(size=SIZE) as pilot:
        await start_race(first, pilot)
        code = first.client.room.code
        board = first.client.room.my_board
        assert board is not None
        await first.client.move(board.legal_moves()[0])
        await pilot.press("q", "q")  # leave mid-race
    assert load_token(server.url, code, "tester") is not None
    assert token_file().stat().st_mode & 0o777 == 0o600

    second = PlayApp(server.url, "tester", join=code, remember=True)
    async with second.run_test(size=SIZE) as pilot:
        await second.client.wait_for(lambda r: r.my_board is not None, 10)
        await pilot.pause()
        assert "took your seat back" in screen_text(second)
        board = second.client.room.my_board
        assert board is not None and board.seq == 1
        await pilot.press("x", "x")
        await second.client.wait_for(lambda r: r.results is not None, 10)
        await pilot.pause()
    assert load_token(server.url, code, "tester") is None  # forgotten once the race is over
