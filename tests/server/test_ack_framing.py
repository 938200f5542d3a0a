"""The frames the server builds itself for its direct writes (``binary_frame``) are the
bytes websockets frames for the same payload, at every length encoding (7-bit, 16-bit,
64-bit) and at their edges; the expected bytes come from websockets' own ``Frame``."""

from __future__ import annotations

import pytest
from websockets.frames import Frame, Opcode

from server.outbound import binary_frame


@pytest.mark.parametrize("size", [0, 1, 125, 126, 127, 1000, 65535, 65536, 70_000])
def test_binary_frame_is_websockets_framing(size: int) -> None:
    payload = bytes((i * 7) % 256 for i in range(size))
    assert binary_frame(payload) == Frame(Opcode.BINARY, payload).serialize(mask=False)
