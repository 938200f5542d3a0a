"""The client SDK: hash-checked boards, typed errors, resume after a drop, resync after a
desync — against a real server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import engine
from client_cli.bots import GreedyBot
from client_cli.sdk import (
    BoardState,
    Desynced,
    MoveRejected,
    RaceClient,
    RaceError,
    Reconnected,
    play_bot,
    settings_from,
)
from client_cli.sdk.verify import check_results
from protocol import Code
from protocol import messages as M

SEED = 1


def board_of(game: engine.Game, seat: int = 1, seq: int = 0) -> BoardState:
    return BoardState.from_board(
        M.Board(seat=seat, seq=seq, view=game.view(), hash=game.state_hash())
    )


def test_board_applies_moves_and_checks_the_hash() -> None:
    game = engine.new_game("brisbane", seed=SEED)
    board = board_of(game)
    assert not board.desynced
    for seq, move in enumerate([str(m) for m in game.legal_moves()][:1], 1):
        diff = game.play(move)
        assert board.apply(seq, diff.move, diff.revealed, game.state_hash())
    assert board.view == game.view() and board.seq == 1
    # a replayed (old) move is ignored
    assert board.apply(1, "1>2", [], 123)
    assert board.view == game.view()


def test_board_notices_a_wrong_hash_and_a_gap() -> None:
    game = engine.new_game("portuguese", seed=SEED)
    move = str(game.legal_moves()[0])
    board = board_of(game)
    diff = game.play(move)
    assert not board.apply(1, diff.move, diff.revealed, game.state_hash() ^ 1)
    assert board.desynced
    gap = board_of(engine.new_game("portuguese", seed=SEED))
    assert not gap.apply(2, move, [], 0) and gap.desynced
    bad = board_of(engine.new_game("portuguese", seed=SEED))
    assert not bad.apply(1, "9>9", [], 0) and bad.desynced


def test_settings_are_checked_before_sending() -> None:
    with pytest.raises(RaceError) as info:
        settings_from("brisbane", max_players=99)
    assert info.value.code == Code.BAD_SETTINGS


async def new_race(server: Any, players: int = 1, variant: str = "brisbane") -> list[RaceClient]:
    clients = [RaceClient(server.url, f"p{i}", bot=True, backoff_s=0.01) for i in range(players)]
    for c in clients:
        await c.connect()
    await clients[0].create_room(settings_from(variant, countdown_s=0, max_players=players))
    for c in clients[1:]:
        await c.join(clients[0].room.code)
    for c in clients:
        await c.ready()
    for c in clients:
        await c.wait_for(lambda r: r.my_board is not None, 10)
    return clients


async def test_errors_are_typed_with_the_protocol_code(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=SEED)
    async with RaceClient(server.url, "p") as client:
        with pytest.raises(RaceError) as info:
            await client.join("NOSUCH")
        assert info.value.code == Code.NO_SUCH_ROOM and not info.value.retryable
    (client,) = await new_race(server)
    board = client.room.my_board
    assert board is not None
    before = dict(board.view)
    with pytest.raises(MoveRejected) as rejected:
        await client.move("1>1")
    assert rejected.value.code == Code.ILLEGAL_MOVE and rejected.value.expected == 1
    assert board.seq == 0 and board.view == before
    with pytest.raises(MoveRejected) as bad:
        await client.move("up")
    assert bad.value.code == Code.BAD_NOTATION
    # looser typing is normalised before sending
    legal = board.legal_moves()[0]
    accepted = await client.move(legal.replace(">", " - "))
    assert accepted.seq == 1 and board.seq == 1
    assert client.room.seats[client.room.seat].bot  # bots say so in hello
    await client.close()


async def test_resumes_after_a_dropped_connection(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=SEED)
    (client,) = await new_race(server)
    events: list[Any] = []
    client.on_event = events.append
    board = client.room.my_board
    assert board is not None
    for _ in range(3):
        await client.move(board.legal_moves()[0])
    assert client._ws is not None
    client._ws.transport.abort()  # the network drops
    await client.wait_for(lambda r: any(isinstance(e, Reconnected) for e in events), 10)
    board = client.room.my_board
    assert board is not None and board.seq == 3 and not board.desynced
    outcome = await play_bot(client, GreedyBot(1))
    assert outcome.status == "won"
    me = client.room.me  # a player's own status comes from the ranking (no Progress)
    assert me is not None and me.status == "won" and me.progress == 52
    assert outcome.results is not None
    assert check_results(outcome.results, client.room.commitment).ok
    await client.close()


async def test_resign_returns_once_the_seat_is_resigned(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=SEED)
    one, two = await new_race(server, players=2)
    board = two.room.my_board
    assert board is not None
    await two.move(board.legal_moves()[0])  # a rival's Progress is no confirmation
    await one.resign()
    me = one.room.me
    assert me is not None and me.status == "resigned"
    await one.resign()  # already over: nothing to send, nothing raised
    await two.close()
    await one.close()


async def test_a_move_in_flight_across_a_drop_is_played_once(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=SEED)
    (client,) = await new_race(server)
    board = client.room.my_board
    assert board is not None
    move = board.legal_moves()[0]
    sent = asyncio.Event()
    send = client._send

    async def send_and_tell(message: Any) -> None:
        await send(message)
        if isinstance(message, M.Move):
            sent.set()

    client._send = send_and_tell  # type: ignore[method-assign]
    task = asyncio.create_task(client.move(move))
    await asyncio.wait_for(sent.wait(), 10)  # the move is on the wire...
    assert not task.done()  # ...and not acknowledged yet: in flight
    assert client._ws is not None
    client._ws.transport.abort()
    accepted = await asyncio.wait_for(task, 10)
    assert accepted.seq == 1
    board = client.room.my_board
    assert board is not None and board.seq == 1 and not board.desynced
    await client.resign()
    await client.wait_for(lambda r: r.results is not None, 10)
    results = client.room.results
    assert results is not None and results.logs[0].moves == [move]
    await client.close()


async def test_a_desynced_board_is_repaired_by_itself(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=SEED)
    (client,) = await new_race(server)
    events: list[Any] = []
    client.on_event = events.append
    board = client.room.my_board
    assert board is not None
    move = next(m for m in board.legal_moves() if "1" not in m)  # a move pile 1 is not in
    # Corrupt the local view: the next ack's hash cannot match.
    board.view["tableau"][0]["up"] = list(reversed(board.view["tableau"][0]["up"]))
    await client.move(move)
    await client.wait_for(lambda r: any(isinstance(e, Reconnected) for e in events), 10)
    assert any(isinstance(e, Desynced) for e in events)
    repaired = client.room.my_board
    assert repaired is not None and not repaired.desynced
    assert engine.view_hash(repaired.view) == repaired.hash and repaired.seq == 1
    await client.close()


async def test_spectator_boards_follow_every_move(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=SEED)
    host = RaceClient(server.url, "host")
    await host.connect()
    await host.create_room(
        settings_from("perseverance", countdown_s=0, max_players=1), as_player=False
    )
    player = RaceClient(server.url, "p", bot=True)
    await player.connect()
    await player.join(host.room.code)
    await player.ready()
    outcome = await play_bot(player, GreedyBot(3))
    await host.wait_for(lambda r: r.results is not None, 10)
    seen = host.room.boards[outcome.seat]
    assert not seen.desynced and seen.seq == outcome.moves
    mine = player.room.my_board
    assert mine is not None and seen.view == mine.view
    await host.close()
    await player.close()


async def test_events_arrive_in_order_and_end_when_closed(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=SEED)
    client = RaceClient(server.url, "p", bot=True)
    await client.connect()
    seen: list[str] = []

    async def collect() -> None:
        async for event in client.events():
            seen.append(type(event).__name__)

    collector = asyncio.create_task(collect())
    await client.create_room(settings_from("fortress", countdown_s=0))
    await client.ready()
    await client.wait_for(lambda r: r.my_board is not None, 10)
    await client.close()
    await asyncio.wait_for(collector, 5)  # the iterator ends with the session
    assert seen.index("Joined") < seen.index("Started")
    assert "Seats" in seen


def test_a_diffs_frame_applies_as_that_run_of_diffs() -> None:
    """``Diffs``: each diff hash-checked in order, then the latest progress per seat; a
    wrong hash inside the run marks the board desynced, as a lone ``D`` would."""
    from client_cli.sdk import RoomState

    game = engine.new_game("spanish", seed=SEED)
    start = game.view()
    run = []
    for seq in range(1, 4):
        move = str(game.legal_moves()[0])
        diff = game.play(move)
        run.append(M.Diff(seat=2, seq=seq, move=diff.move, hash=game.state_hash(),
                          clock_ms=seq, revealed=[tuple(r) for r in diff.revealed]))
    room = RoomState(seat=0)
    room.seats = {2: M.SeatInfo(seat=2, name="b", status="playing")}
    room.boards[2] = BoardState.from_board(M.Board(seat=2, seq=0, view=start,
                                                   hash=engine.view_hash(start)))
    progress = M.Progress(seat=2, progress=0, moves=3, status="playing", clock_ms=3)
    room.update(M.Diffs(diffs=run, progress=[progress]))
    assert room.boards[2].seq == 3 and room.boards[2].view == game.view()
    assert not room.desynced and room.seats[2].moves == 3 and room.last_clock_ms == 3
    bad = M.Diff(seat=2, seq=4, move=str(game.legal_moves()[0]), hash=12345, clock_ms=4)
    room.update(M.Diffs(diffs=[bad]))
    assert room.desynced == {2}


async def test_a_spectator_sdk_gets_diffs_frames_and_the_players_boards(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(seed=SEED)
    frames: list[Any] = []
    host = RaceClient(server.url, "host", on_event=frames.append)
    await host.connect()
    await host.create_room(settings_from("spanish", countdown_s=0, max_players=2),
                           as_player=False)
    bots = [RaceClient(server.url, f"b{i}", bot=True) for i in range(2)]
    for bot in bots:
        await bot.connect()
        await bot.join(host.room.code)
    for bot in bots:
        await bot.ready()
    await asyncio.gather(*(play_bot(bot, GreedyBot(3)) for bot in bots))
    await host.wait_for(lambda r: r.results is not None, 10)
    results = host.room.results
    assert results is not None
    assert any(isinstance(f, M.Diffs) and f.diffs for f in frames)
    assert not any(isinstance(f, M.Diff) for f in frames)  # every move came in a Diffs
    for log in results.logs:  # the engine replaying the logs, not the fan-out
        game = engine.new_game("spanish", seed=results.seed, **results.options)
        for move in log.moves:
            game.play(move)
        seen = host.room.boards[log.seat]
        assert not seen.desynced and seen.seq == len(log.moves) and seen.view == game.view()
    await host.close()
    for bot in bots:
        await bot.close()
