"""PROTOCOL.md's reference tables and examples, generated from the code.

The message tables come from the struct definitions (msgspec.inspect) and
``fielddocs``; the error table from ``errors``; the limits from ``limits``; the example
frames are encoded by ``codec`` from a real game. PROTOCOL.md holds each block between
``<!-- BEGIN GENERATED name -->`` and ``<!-- END GENERATED name -->``; ``splice`` puts the
current blocks in, and tests/protocol/test_doc.py fails if the file differs from that.

Regenerate after changing a message: ``.venv/bin/python -m protocol.schema``.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args

import msgspec
from msgspec import inspect as mi

from . import limits
from . import messages as M
from .codec import encode
from .errors import DESCRIPTIONS, FATAL, RETRYABLE, Code
from .fielddocs import FIELD_DOCS, LIMIT_DOCS

CLIENT: list[type[msgspec.Struct]] = list(get_args(M.ClientMessage))
SERVER: list[type[msgspec.Struct]] = list(get_args(M.ServerMessage))
NESTED: list[type[msgspec.Struct]] = [
    M.RoomSettings, M.RoomSummary, M.SeatInfo, M.Board, M.RankEntry, M.SeatLog,
]
_PATTERN_WORDS = {
    M.DISPLAY_PATTERN: "visible characters, not only spaces",
    M.PLAIN_PATTERN: "visible characters",
    M.CODE_PATTERN: "`A-Z a-z 0-9 _ -`",
    M.TOKEN_PATTERN: "printable ASCII, no spaces",
    M.IDENT_PATTERN: "`a-z`, then `a-z 0-9 _`",
}


def anchor(cls: type) -> str:
    """The HTML anchor of a struct's section (``m-`` keeps it apart from section ids)."""
    return "m-" + cls.__name__.lower()


def type_text(t: mi.Type) -> str:
    """A type as PROTOCOL.md writes it (``int 1..1000000``, ``str ≤ 16``, ...)."""
    if isinstance(t, mi.Metadata):
        return type_text(t.type)
    if isinstance(t, mi.IntType):
        low = t.ge if t.ge is not None else None
        high = t.le if t.le is not None else None
        if low is not None and high is not None:
            return f"int {low}..{high}"
        return "int" if low is None else f"int ≥ {low}"
    if isinstance(t, mi.StrType):
        size = ""
        if t.max_length is not None:
            size = f" {t.min_length or 0}..{t.max_length}" if t.min_length else f" ≤ {t.max_length}"
        words = f", {_PATTERN_WORDS.get(t.pattern, t.pattern)}" if t.pattern else ""
        return f"str{size}{words}"
    if isinstance(t, mi.BoolType):
        return "bool"
    if isinstance(t, mi.NoneType):
        return "nil"
    if isinstance(t, mi.FloatType):
        return "float"
    if isinstance(t, mi.LiteralType):
        return " or ".join(f'"{v}"' for v in t.values)
    if isinstance(t, mi.UnionType):
        return " or ".join(type_text(x) for x in t.types)
    if isinstance(t, mi.ListType):
        size = f" (≤ {t.max_length})" if t.max_length is not None else ""
        return f"array{size} of {type_text(t.item_type)}"
    if isinstance(t, mi.DictType):
        size = f" (≤ {t.max_length})" if t.max_length is not None else ""
        return f"map{size}: {type_text(t.key_type)} → {type_text(t.value_type)}"
    if isinstance(t, mi.TupleType):
        return "[" + ", ".join(type_text(x) for x in t.item_types) + "]"
    if isinstance(t, mi.StructType):
        return f"[{t.cls.__name__}](#{anchor(t.cls)})"
    return "any"


def _default_text(f: mi.Field) -> str:
    if f.required:
        return "required"
    value = f.default if f.default is not msgspec.NODEFAULT else f.default_factory()
    return f"`{json.dumps(value)}`".replace("null", "nil")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _summary(cls: type) -> str:
    doc = inspect.cleandoc(cls.__doc__ or "")
    return " ".join(doc.split())


def struct_table(cls: type[msgspec.Struct]) -> str:
    """One struct's section: heading, docstring and a key/field/type/default/meaning table."""
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    docs = FIELD_DOCS[cls.__name__]
    title = f"`{info.tag}` — {cls.__name__}" if info.tag else cls.__name__
    lines = [f'<a id="{anchor(cls)}"></a>', f"#### {title}", "", _summary(cls), ""]
    if not info.fields:
        lines.append("No other keys.")
        return "\n".join(lines)
    lines += ["| key | field | type | default | meaning |", "|---|---|---|---|---|"]
    for f in info.fields:
        row = [f"`{f.encode_name}`", f.name, type_text(f.type), _default_text(f), docs[f.name]]
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    return "\n".join(lines)


def render_messages() -> str:
    """Every message and nested structure, client messages first."""
    parts = ["### Client → server", ""]
    parts += [struct_table(c) + "\n" for c in CLIENT]
    parts += ["### Server → client", ""]
    parts += [struct_table(c) + "\n" for c in SERVER]
    parts += ["### Structures inside messages", ""]
    parts += [struct_table(c) + "\n" for c in NESTED]
    return "\n".join(parts).rstrip() + "\n"


def render_errors() -> str:
    """The error table: every ``Code`` with its meaning and class."""
    lines = ["| code | meaning | retryable | fatal |", "|---|---|---|---|"]
    for code in Code:
        retry = "yes" if code in RETRYABLE else ""
        fatal = "yes" if code in FATAL else ""
        lines.append(f"| `{code.value}` | {_cell(DESCRIPTIONS[code])} | {retry} | {fatal} |")
    return "\n".join(lines) + "\n"


def render_limits() -> str:
    """The limits table: every constant of ``limits``."""
    lines = ["| limit | value | what |", "|---|---|---|"]
    for name in limit_names():
        value = getattr(limits, name)
        shown = f"{value:_}".replace("_", " ") if abs(value) >= 10_000 else str(value)
        lines.append(f"| `{name}` | {shown} | {_cell(LIMIT_DOCS[name])} |")
    return "\n".join(lines) + "\n"


def limit_names() -> list[str]:
    """The public constants of ``limits``, in definition order."""
    return [n for n in vars(limits) if n.isupper() and not n.startswith("_")]


def _frame(title: str, message: msgspec.Struct) -> str:
    data = encode(message)
    plain = json.dumps(msgspec.to_builtins(message), ensure_ascii=False, separators=(", ", ": "))
    hexed = " ".join(f"{b:02x}" for b in data)
    return f"**{title}** ({len(data)} bytes)\n\n```\n{plain}\n{hexed}\n```\n"


def render_examples() -> str:
    """Example frames, with the state hashes and reveals of a real Brisbane game."""
    import engine  # the protocol may use the engine (ARCHITECTURE.md); only here

    game, diff = _revealing_opening()
    seq = 1
    revealed = [(p, c) for p, c in diff.revealed]
    illegal = next(  # a real rule the engine explains
        (f"{i}>{j}", reason)
        for i in range(1, 8) for j in range(1, 8)
        if i != j and (reason := game.why_illegal(engine.parse_move(f"{i}>{j}")))
    )
    settings = M.RoomSettings(variant="brisbane", max_players=4, time_limit_s=600)
    parts = [
        _frame("hello", M.Hello(version=1, name="Ann", client="solrace-cli/0.1")),
        _frame("hello (resume)", M.Hello(
            version=1, name="Ann", token="QX7KDP.2.9rT0cM2bWq3kXn8ZsYv4Lh1AeUo6GfJd", seen=41,
        )),
        _frame("create", M.CreateRoom(settings=settings)),
        _frame("join", M.Join(code="QX7KDP")),
        _frame("join (spectator)", M.Join(code="QX7KDP", role="spectator")),
        _frame("move", M.Move(seq=seq, move=diff.move)),
        _frame("accepted", M.Accepted(seq=seq, hash=game.state_hash(), clock_ms=83_412,
                                      revealed=revealed)),
        _frame("accepted (nothing revealed)", M.Accepted(seq=57, hash=0x9A3F12C4,
                                                         clock_ms=94_208)),
        _frame(f"rejected (the move {illegal[0]})", M.Rejected(
            seq=seq + 1, code="illegal_move", reason=illegal[1], expected=seq + 1,
        )),
        _frame("diff", M.Diff(seat=2, seq=seq, move=diff.move, hash=game.state_hash(),
                              clock_ms=83_412, revealed=revealed)),
        _frame("progress", M.Progress(seat=2, progress=17, moves=58, status="playing",
                                      clock_ms=95_020)),
        _frame("error", M.Error(code="version_mismatch", message="this server speaks protocol "
                                "version 1; your client sent version 2: ...", fatal=True)),
    ]
    return "\n".join(parts)


def _revealing_opening() -> tuple[Any, Any]:
    """The first Brisbane deal (by seed) whose first legal move turns a card up, after
    that move, and its diff."""
    import engine

    for seed in range(1, 1000):
        game = engine.new_game("brisbane", seed=seed)
        for move in game.legal_moves():
            after = game.copy()
            diff = after.play(move)
            if diff.revealed:
                return after, diff
    raise AssertionError("no Brisbane opening reveals a card")  # pragma: no cover


def render_hash_example() -> str:
    """A worked state hash: a fresh Brisbane deal (seed 7)."""
    import engine
    from engine.statehash import hash_text

    view = engine.new_game("brisbane", seed=7).view()
    piles = [(p["down"], p["up"]) for p in view["tableau"]]
    text = hash_text(piles, [view["foundations"][s] for s in "SHDC"], view["redeals_left"])
    value = engine.view_hash(view)
    return f"```\n{text}\n```\n\nhash = `{value}` (0x{value:08x})\n"


def render_commitment_example() -> str:
    """A worked commitment."""
    import engine

    seed, salt = 7, "000102030405060708090a0b0c0d0e0f"
    data = b"solrace-commit-v1" + seed.to_bytes(8, "big") + bytes.fromhex(salt)
    return (
        f"seed = `{seed}`, salt = `{salt}`\n\n"
        f"bytes hashed = `{data.hex()}`\n\n"
        f"commitment = `{engine.commitment(seed, salt)}`\n"
    )


BLOCKS: dict[str, Callable[[], str]] = {
    "messages": render_messages,
    "errors": render_errors,
    "limits": render_limits,
    "examples": render_examples,
    "hash-example": render_hash_example,
    "commitment-example": render_commitment_example,
}
_BLOCK = re.compile(
    r"(<!-- BEGIN GENERATED (?P<name>[a-z-]+) -->\n)(?P<body>.*?)"
    r"(<!-- END GENERATED (?P=name) -->)",
    re.S,
)


def splice(doc: str) -> str:
    """``doc`` with every generated block replaced by its current rendering. Raises
    ``KeyError`` for a block name nobody renders, ``ValueError`` for a missing block."""
    found: set[str] = set()

    def replace(m: re.Match[str]) -> str:
        found.add(m["name"])
        return m.group(1) + BLOCKS[m["name"]]() + m.group(4)

    out = _BLOCK.sub(replace, doc)
    missing = set(BLOCKS) - found
    if missing:
        raise ValueError(f"PROTOCOL.md lacks generated block(s): {', '.join(sorted(missing))}")
    return out


DOC_PATH = Path(__file__).with_name("PROTOCOL.md")


def main() -> None:
    """Rewrite PROTOCOL.md's generated blocks in place (a developer tool, not used at run
    time: the protocol package itself does no I/O)."""
    DOC_PATH.write_text(splice(DOC_PATH.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote {DOC_PATH}")


if __name__ == "__main__":
    main()
