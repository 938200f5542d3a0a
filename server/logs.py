"""The server's logs: one line per event, JSON (for log pipelines) or text (for people).

A JSON line has ``ts`` (UTC, ISO 8601 with ms), ``level``, ``logger``, ``event`` (the
message), ``node``, and whatever is known where it was logged: ``room``, ``seat``,
``conn``, ``request_id`` (from the connection's ``X-Request-ID`` header, set by HAProxy),
``peer``; fields passed with ``extra=`` too. A traceback is one field, ``exc``: never
several lines.

Context travels in a ``contextvars.ContextVar``: ``bind(room=..., seat=...)`` in a task
tags every line logged later in that task (and tasks it creates).
"""

from __future__ import annotations

import contextvars
import json
import logging
import sys
import time
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, TextIO

_EMPTY: Mapping[str, Any] = MappingProxyType({})
_context: contextvars.ContextVar[Mapping[str, Any]] = contextvars.ContextVar(
    "solrace_log_context", default=_EMPTY
)
# LogRecord attributes that are the record's machinery, not event fields.
_RESERVED = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message", "asctime", "node", "taskName",
}
FORMATS = ("json", "text")


def bind(**fields: Any) -> None:
    """Add ``fields`` to every line logged from now on in the current task (``None``
    values remove a field)."""
    merged = {**_context.get(), **fields}
    _context.set({k: v for k, v in merged.items() if v is not None})


def bind_request(headers: Mapping[str, str], peer: Any, conn: int) -> None:
    """Tag the current (connection) task with the connection's id, its request id and
    client address: the ``X-Request-ID`` and ``X-Forwarded-For`` headers a proxy added,
    else the socket's peer. Only proxies are expected to set these headers; they are
    logged, not trusted for anything else."""
    bind(conn=conn, request_id=headers.get("X-Request-ID"),
         peer=headers.get("X-Forwarded-For") or (peer[0] if isinstance(peer, tuple) else peer))


def context() -> Mapping[str, Any]:
    """The fields bound in the current task."""
    return _context.get()


class _NodeFilter(logging.Filter):
    """Stamps every record with the node id and the task's bound fields."""

    def __init__(self, node: str) -> None:
        super().__init__()
        self.node = node

    def filter(self, record: logging.LogRecord) -> bool:
        record.node = self.node
        for key, value in _context.get().items():
            if not hasattr(record, key):
                setattr(record, key, value)
        return True


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in vars(record).items() if k not in _RESERVED}


class JsonFormatter(logging.Formatter):
    """One JSON object per line (see the module docstring)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": _iso(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": record.getMessage(),
            "node": getattr(record, "node", ""),
        }
        line.update(_fields(record))
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exc"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """``time LEVEL logger: message key=value ...``, still one line: a traceback is
    folded onto it with ``\\n`` escaped."""

    def format(self, record: logging.LogRecord) -> str:
        fields = " ".join(f"{k}={v}" for k, v in _fields(record).items())
        text = (f"{_iso(record.created)} {record.levelname} {record.name}: "
                f"{record.getMessage()}" + (f" {fields}" if fields else ""))
        if record.exc_info:
            text += " exc=" + self.formatException(record.exc_info).replace("\n", "\\n")
        return text


def _iso(created: float) -> str:
    ms = int(created * 1000) % 1000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created)) + f".{ms:03d}Z"


def default_format(stream: TextIO) -> str:
    """``text`` on a terminal, else ``json`` (a log collector is reading)."""
    isatty = getattr(stream, "isatty", None)
    return "text" if isatty is not None and isatty() else "json"


def configure(fmt: str | None, level: str | int, node: str,
              stream: TextIO | None = None) -> None:
    """Send every log record to ``stream`` (stderr) in ``fmt`` (``None``: see
    ``default_format``) at ``level``, stamped with ``node``. Replaces earlier handlers,
    so calling it twice does not double lines."""
    stream = stream or sys.stderr
    fmt = fmt or default_format(stream)
    if fmt not in FORMATS:
        raise ValueError(f"log format must be one of {FORMATS}, not {fmt!r}")
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    handler.addFilter(_NodeFilter(node))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
    # websockets logs every HTTP request at INFO (one line per health check) and every
    # frame at DEBUG: keep it to warnings whatever our own level is.
    logging.getLogger("websockets").setLevel(max(root.level, logging.WARNING))
