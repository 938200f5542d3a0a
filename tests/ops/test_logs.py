"""server.logs in-process: one line per record in both formats (a traceback included),
context bound in a task tags that task's lines only, and the default format follows
whether the stream is a terminal."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Iterator

import pytest

from server import logs


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


def test_default_format_is_json_unless_a_terminal() -> None:
    assert logs.default_format(io.StringIO()) == "json"
    assert logs.default_format(_Tty()) == "text"


def test_json_lines_carry_node_context_extra_and_a_one_field_traceback(
    restore_logging: None,
) -> None:
    out = io.StringIO()
    logs.configure(None, "INFO", "node-7", out)
    log = logging.getLogger("solrace.test")

    async def connection(room: str, seat: int) -> None:
        logs.bind(room=room, seat=seat)
        try:
            raise ValueError("boom\nsecond line")
        except ValueError:
            log.exception("move failed", extra={"move": "1>f"})

    async def both() -> None:
        await asyncio.gather(connection("ABCDEF", 1), connection("GHIJKL", 2))
        log.info("outside")  # the tasks' bindings did not leak here

    asyncio.run(both())
    log.debug("hidden")  # below INFO
    lines = out.getvalue().splitlines()
    assert len(lines) == 3, lines
    first, second, outside = (json.loads(line) for line in lines)
    assert first["event"] == "move failed" and first["level"] == "error"
    assert first["node"] == "node-7" and first["logger"] == "solrace.test"
    assert (first["room"], first["seat"], first["move"]) == ("ABCDEF", 1, "1>f")
    assert (second["room"], second["seat"]) == ("GHIJKL", 2)
    assert first["exc"].startswith("Traceback") and "ValueError: boom\nsecond line" in first["exc"]
    assert "room" not in outside and outside["event"] == "outside"


def test_text_lines_stay_one_line(restore_logging: None) -> None:
    out = io.StringIO()
    logs.configure("text", "INFO", "node-7", out)
    try:
        raise RuntimeError("x\ny")
    except RuntimeError:
        logging.getLogger("solrace.test").exception("failed", extra={"room": "ABCDEF"})
    [line] = out.getvalue().splitlines()
    assert " ERROR solrace.test: failed room=ABCDEF exc=Traceback" in line
    assert "RuntimeError: x\\ny" in line


def test_an_unknown_format_is_refused(restore_logging: None) -> None:
    with pytest.raises(ValueError, match="log format"):
        logs.configure("xml", "INFO", "n", io.StringIO())
