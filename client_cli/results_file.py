"""Saving a race's results where ``solrace verify`` can read them, and reading back
everything the clients write.

``--save-results PATH`` (play, watch, bot, demo) writes the ``Results`` message as the
client received it: ``PATH.json`` as JSON with the wire keys (``{"t": "results", "c":
..., "sd": ..., "lg": ...}``), ``PATH.msgpack`` as the MessagePack frame itself. The
``--json`` outputs of watch, bot and demo carry the same message under ``"results"``,
so ``solrace verify`` accepts all three shapes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import msgspec

from protocol import encode
from protocol import messages as M
from protocol.verify import load_results

SUFFIXES = (".json", ".msgpack")


def check_path(path: str) -> str:
    """``path`` if its suffix says a format we write (``.json``, ``.msgpack``); else
    ``ValueError`` naming them (checked before the race, not after it)."""
    if Path(path).suffix.lower() not in SUFFIXES:
        raise ValueError(f"--save-results takes a .json or .msgpack path, not {path!r}")
    return path


def add_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--save-results PATH`` to a command's parser."""
    parser.add_argument(
        "--save-results",
        metavar="PATH",
        help="write the race's results to PATH (.json or .msgpack) for solrace verify",
    )


def path_refused(command: str, path: str | None) -> bool:
    """True (after one line on stderr) when ``--save-results`` names a file we cannot
    write the format of; checked before the race, not after it."""
    if not path:
        return False
    try:
        check_path(path)
    except ValueError as exc:
        print(f"solrace {command}: {exc}", file=sys.stderr)
        return True
    return False


def results_builtins(results: M.Results) -> dict[str, Any]:
    """The results message as plain data with its wire keys (what ``--json`` embeds)."""
    data = msgspec.to_builtins(results)
    assert isinstance(data, dict)
    return data


def save_results(results: M.Results, path: str) -> None:
    """Write ``results`` to ``path`` (format from the suffix), atomically: a reader never
    sees half a file."""
    target = Path(check_path(path))
    if target.suffix.lower() == ".json":
        payload = json.dumps(results_builtins(results), indent=1).encode() + b"\n"
    else:
        payload = encode(results)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".results-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_results(data: bytes) -> M.Results:
    """A ``Results`` message from a file: the message itself (JSON or MessagePack), or a
    ``--json`` output of watch, bot or demo (the message under ``"results"``). Raises
    ``ValueError`` saying what the file is instead."""
    text = data.lstrip()
    if text.startswith(b"{"):
        try:
            doc = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"not JSON: {exc}") from None
        if isinstance(doc, dict) and doc.get("t") != "results" and "results" in doc:
            inner = doc["results"]
            if not isinstance(inner, dict):
                raise ValueError(
                    "this --json output has no results message (the race had not finished)"
                )
            text = json.dumps(inner).encode()
    return load_results(text)
