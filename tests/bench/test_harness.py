"""The benchmark harness's own parts: the minimal websocket client that plays 1,000
spectators (against a real ``websockets`` server: the broadcast baseline), the /proc
readers, and how profile samples are charged to components."""

from __future__ import annotations

import asyncio
import os

import pytest
from websockets.asyncio.client import connect
from websockets.asyncio.server import serve

from bench.baselines import broadcast_handler
from bench.cpu import cpu_seconds, rss_bytes
from bench.fanout import rival_delays
from bench.movers import Movers
from bench.profile import component
from bench.rawws import OP_BINARY, RawClient, client_frame
from protocol import decode_server, encode
from protocol import messages as m


def test_client_frame_is_masked_with_the_length_encoded_by_size() -> None:
    # RFC 6455 §5.2: FIN + opcode, MASK bit + 7-bit length (126: 16-bit, 127: 64-bit).
    assert client_frame(b"ab") == bytes([0x82, 0x82, 0, 0, 0, 0]) + b"ab"
    long = client_frame(b"x" * 300)
    assert long[:4] == bytes([0x82, 0x80 | 126, 0x01, 0x2C])  # 300 = 0x012C
    assert len(long) == 4 + 4 + 300
    huge = client_frame(b"y" * 70_000, OP_BINARY)
    assert huge[1] == 0x80 | 127 and int.from_bytes(huge[2:10], "big") == 70_000


@pytest.mark.parametrize("floor", [False, True], ids=["broadcast", "floor"])
async def test_raw_spectators_count_each_fanned_out_frame(floor: bool) -> None:
    """Two raw spectators join the broadcast baseline's room; each move a player sends
    reaches each of them as exactly one frame (the baseline sends one Diff per move;
    the floor one Diffs, framed by hand and written to the transports in a loop)."""
    async with serve(broadcast_handler(floor=floor), "127.0.0.1", 0,
                     compression=None) as server:
        port = server.sockets[0].getsockname()[1]
        join = [encode(m.Join(code="BENCH", role="spectator"))]
        watchers = [await RawClient.open(port, join, nonce=i + 1, source=f"127.0.0.{2 + i}")
                    for i in range(2)]
        async with connect(f"ws://127.0.0.1:{port}", compression=None) as player:
            await player.send(encode(m.Join(code="BENCH", role="player")))
            for seq in (1, 2, 3):
                await player.send(encode(m.Move(seq=seq, move="1>2")))
                reply = decode_server(await player.recv())
                assert isinstance(reply, m.Accepted) and reply.seq == seq
                for w in watchers:
                    while w.frames < seq:  # wait on arrivals, not on time
                        w.arrived.clear()
                        await asyncio.wait_for(w.arrived.wait(), 5)
        assert [w.frames for w in watchers] == [3, 3]
        for w in watchers:
            w.close()


def test_proc_readers_see_this_process() -> None:
    before = cpu_seconds(os.getpid())
    spent = 0
    while cpu_seconds(os.getpid()) <= before:  # burn CPU until one clock tick is counted
        spent += sum(range(1000))
    assert cpu_seconds(os.getpid()) > before
    assert rss_bytes(os.getpid()) > 1 << 20  # a Python process with pytest loaded


def test_profile_samples_go_to_the_work_asked_for() -> None:
    hash_under_move = ["Connection.run (server/connection.py:1)", "play (server/race.py:2)",
                       "Game.state_hash (engine/game.py:3)", "digest (engine/statehash.py:4)"]
    assert component(hash_under_move) == "engine: state hash"
    stuck = ["play (server/race.py:2)", "Game.stuck (engine/game.py:89)",
             "Game.legal_moves (engine/game.py:130)"]
    assert component(stuck) == "engine: stuck check"
    write = ["Connection._writer (server/connection.py:136)",
             "Connection.send (websockets/asyncio/connection.py:486)",
             "Protocol.send_binary (websockets/protocol.py:364)"]
    assert component(write) == "websockets: write a frame"
    redis_write = ["RedisStore.append_move (server/store/redis.py:315)",
                   "AsyncScript.__call__ (redis/commands/core.py:1)",
                   "StreamWriter.writelines (asyncio/streams.py:346)"]
    assert component(redis_write).startswith("redis-py client")
    assert component(["Runner.run (asyncio/runners.py:118)"]) == "asyncio / uvloop event loop"


def test_rival_delays_join_sends_of_any_process_with_the_probes_receipts() -> None:
    # (seat, seq, sent) from two processes; (seat, moves, read) by the probe's rivals.
    sent = [[1, 1, 10.0], [1, 2, 10.5], [3, 1, 11.0]]
    receipts = [[1, 1, 10.004], [3, 1, 11.25], [1, 2, 10.502], [2, 7, 12.0]]
    delays = rival_delays(sent, receipts)
    assert delays == pytest.approx([0.004, 0.25, 0.002])  # (2, 7) was never sent: left out


async def test_raw_movers_and_the_probe_pair_play_one_room() -> None:
    """Two raw movers (seats 1, 2) and the probe pair (seats 3, 4) on the broadcast
    baseline: every move a raw mover writes is acknowledged and recognised as such by its
    tag, and each probe player reads the ``Progress`` of every move of every other seat,
    which the cross-process join matches to the move's send."""
    async with serve(broadcast_handler(), "127.0.0.1", 0, compression=None) as server:
        url = f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        load, probe = Movers("raw", solrace=False), Movers("probe", solrace=False)
        try:
            code = await load.join(url, 2, 1, "")
            assert code == "BENCH" and [mv.seat for mv in load.raw] == [1, 2]
            await probe.join(url, 2, 3, code)
            assert [p.seat for p in probe.players] == [3, 4]
            assert await load.ready() == "started" and await probe.ready() == "started"
            assert await load.warm() == "warm" and await probe.warm() == "warm"
            for _ in range(3):  # three moves per raw mover, two per probe player
                for mover in load.raw:
                    mover.move()
                    await asyncio.wait_for(mover.idle.wait(), 5)
            for player in probe.players:
                for _ in range(2):
                    await player.one_move()
            assert [len(mv.acks) for mv in load.raw] == [3, 3]
            assert [mv.seq for mv in load.raw] == [4, 4]  # the warm-up's move, then three
            # each probe player sees 6 raw moves and its partner's 2: 8 Progress each
            receipts = probe.clocks.receipts
            assert receipts is not None
            for player in probe.players:
                while sum(1 for r in receipts if r[0] != player.seat) < 14:
                    player._received(await asyncio.wait_for(player.ws.recv(), 5))
            sent = [list(e) for mv in load.raw for e in mv.log]
            sent += [[seat, seq, t] for (seat, seq), t in probe.clocks.sent.items()]
            assert len(sent) == 6 + 4
            delays = rival_delays(sent, [list(r) for r in receipts])
            assert len(delays) == 16 and all(d > 0 for d in delays)
            expected = [(seat, seq) for seat in (1, 2) for seq in (2, 3, 4)]
            expected += [(seat, seq) for seat in (3, 4) for seq in (2, 3)]
            assert sorted({(r[0], r[1]) for r in receipts}) == expected
        finally:
            for player in probe.players:
                await player.ws.close()
            load.close()
