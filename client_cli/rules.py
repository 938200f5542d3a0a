"""The rules as the terminal shows them on ``?``: read from docs/RULES.md itself, so the
help and the rule book can never say different things.

The package carries the file (``client_cli/RULES.md`` is a link to ``docs/RULES.md`` in a
checkout; the wheel holds a copy, as package data), so an installed client has the rules
without the repository.
"""

from __future__ import annotations

import re
from importlib import resources


def rules_markdown() -> str:
    """The whole of docs/RULES.md, as shipped with the package."""
    return (resources.files("client_cli") / "RULES.md").read_text(encoding="utf-8")


def section(markdown: str, heading: str) -> str:
    """The body of the ``## `` section whose heading is ``heading`` (up to the next
    ``## ``), or "" when there is none."""
    lines = markdown.splitlines()
    out: list[str] = []
    inside = False
    for line in lines:
        if line.startswith("## "):
            if inside:
                break
            inside = line[3:].strip() == heading
            continue
        if inside:
            out.append(line)
    return "\n".join(out).strip("\n")


def variant_heading(markdown: str, variant: str) -> str | None:
    """The heading of ``variant``'s section (``Brisbane — `brisbane` ``), if any."""
    for line in markdown.splitlines():
        if line.startswith("## ") and line.rstrip().endswith(f"`{variant}`"):
            return line[3:].strip()
    return None


def plain(markdown: str) -> str:
    """Markdown emphasis and code marks dropped, links reduced to their text, tables as
    one row a line and each paragraph or list item on one line (the screen wraps it):
    what reads well in a terminal."""
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", markdown)
    text = text.replace("**", "").replace("`", "")
    lines = []
    for line in text.splitlines():
        if re.fullmatch(r"\|[-| :]+\|", line.strip()):
            continue  # a table's rule line
        if line.startswith("|") and line.rstrip().endswith("|"):
            cells = [c.strip() for c in line.strip()[1:-1].split("|")]
            lines.append("  " + " · ".join(c for c in cells if c))
            continue
        joins = lines and lines[-1] and not lines[-1].startswith("  ") and line.strip()
        if joins and not line.startswith("- "):
            lines[-1] += " " + line.strip()  # one paragraph per line: the screen wraps it
        else:
            lines.append(line)
    return "\n".join(lines)


def variant_rules(variant: str) -> tuple[str, str]:
    """``(title, text)``: the rules of ``variant`` from docs/RULES.md, as plain text, then
    the move notation. A variant the rule book does not describe gets a line saying so."""
    markdown = rules_markdown()
    heading = variant_heading(markdown, variant)
    if heading is None:
        return variant or "rules", f"docs/RULES.md has no section for {variant!r}."
    body = section(markdown, heading)
    notation = section(markdown, "Move notation")
    text = plain(body) + "\n\nMove notation\n\n" + plain(notation)
    return plain(heading), text
