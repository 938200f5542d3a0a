"""The websocket connection's own bounds, below our message loop: control frames and the
transport's write buffer.

websockets answers every ping with a pong itself, writing it to the transport as the ping
is parsed, whether or not the client reads. A client that sends pings and never reads
therefore grows the transport's write buffer without limit (the ping flood: +1.4 GB in
60 s on one connection, docs/SECURITY.md). ``guarded(config)`` gives a ``ServerConnection``
class that

- counts pings in a token bucket (``ping_burst``, ``ping_per_s``): beyond it the
  connection is failed with close code 1008, reason ``control_flood``;
- after every read, checks the transport's write buffer against ``max_outbound_bytes``:
  beyond it the connection is failed with close code 1008, reason ``slow_consumer``.

Failing stops the parser (websockets discards what follows, so no further pong is made),
queues the close frame, and aborts the TCP connection ``close_timeout`` later if the peer
did not finish the closing handshake (a peer that does not read never does).
"""

from __future__ import annotations

import logging
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.frames import Frame, Opcode
from websockets.protocol import State

from protocol import Code

from .config import ServerConfig
from .credits import Credits

log = logging.getLogger(__name__)

POLICY_VIOLATION = 1008  # the websocket close code of both cuts (RFC 6455, 7.4.1)


class GuardedConnection(ServerConnection):
    """A ``ServerConnection`` with a ping budget and a write-buffer cap (module docstring).

    ``config`` is set on the subclass ``guarded()`` makes."""

    config: ServerConfig

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        config = self.config
        self.pings = Credits(config.ping_burst, config.ping_per_s, config.monotonic)
        self.cut: Code | None = None  # why this connection was failed, once it was
        self._protocol_recv_frame = self.protocol.recv_frame
        setattr(self.protocol, "recv_frame", self._recv_frame)  # noqa: B010 - an instance hook

    def outbound_bytes(self) -> int:
        """Bytes written to the transport and not yet sent to the peer."""
        transport = getattr(self, "transport", None)
        return 0 if transport is None else int(transport.get_write_buffer_size())

    def _recv_frame(self, frame: Frame) -> None:
        """The protocol's ``recv_frame`` (which writes a pong for a ping), behind the ping
        budget: a ping beyond it fails the connection and gets no pong. It wraps the
        protocol's method because the pongs of one read are written before any event
        reaches ``process_event``."""
        if frame.opcode is Opcode.PING and self.cut is None and not self.pings.take():
            self.cut_off(Code.CONTROL_FLOOD)  # the parser discards the rest of the read
            return
        self._protocol_recv_frame(frame)

    def data_received(self, data: bytes) -> None:
        """Feed the protocol (which may write pongs), then check the write buffer."""
        super().data_received(data)
        if self.cut is None and self.outbound_bytes() > self.config.max_outbound_bytes:
            self.cut_off(Code.SLOW_CONSUMER)

    def cut_off(self, code: Code) -> None:
        """Fail the connection with close code 1008 and reason ``code`` (idempotent)."""
        if self.cut is not None or self.protocol.state is State.CLOSED:
            return
        self.cut = code
        log.info("connection cut: %s", code.value, extra={"error": code.value})
        try:
            self.protocol.fail(POLICY_VIOLATION, code.value)  # later input is discarded
            self.send_data()
        except Exception:  # the transport may already be failing: abort is enough
            log.debug("failing the connection raised", exc_info=True)
        # A peer that does not read never completes the closing handshake: drop the TCP
        # connection (and everything buffered for it) after the usual close timeout.
        self.loop.call_later(self.close_timeout or 1.0, self.transport.abort)


def guarded(config: ServerConfig) -> type[GuardedConnection]:
    """A ``GuardedConnection`` class bound to ``config`` (for ``serve(create_connection=)``)."""
    return type("Guarded", (GuardedConnection,), {"config": config})
