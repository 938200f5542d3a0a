"""The fast subset of the fuzz run (docs/SECURITY.md): hostile frames against a real
server process change nothing, crash nothing and never get ``internal``."""

from __future__ import annotations

import random

from bench.attack.fuzz import Fuzzer, hostile_frame
from bench.attack.harness import ServerProc

FRAMES = 2000


async def test_2000_hostile_frames_change_nothing(fast_server: ServerProc) -> None:
    fuzzer = Fuzzer(fast_server.url, seed=17, batch=50, alive=fast_server.alive)
    stats = await fuzzer.run(FRAMES, seconds=600)
    assert stats.frames == FRAMES  # every frame was sent (the run was not cut short)
    assert stats.crashes == 0 and fast_server.alive()
    assert stats.internal == 0
    assert stats.state_changes == 0  # the probe's expected seq matched the acks after every batch
    # The frames really were hostile: most were refused with a decoding error.
    refused = sum(n for kind, n in stats.replies.items()
                  if kind in ("err:bad_frame", "err:bad_field", "err:unknown_type",
                              "err:frame_too_large"))
    assert refused > FRAMES // 2
    assert not any("Traceback" in line for line in fast_server.stderr_tail)


def test_the_generator_is_reproducible_and_varied() -> None:
    a, b = random.Random(5), random.Random(5)
    assert [hostile_frame(a) for _ in range(50)] == [hostile_frame(b) for _ in range(50)]
    rng = random.Random(9)
    frames = [hostile_frame(rng) for _ in range(2000)]
    assert any(isinstance(f, str) for f in frames)  # text frames
    assert any(isinstance(f, bytes) and len(f) > 4096 for f in frames)  # oversized
    assert len(set(frames)) > 1500  # not the same few frames again and again
