"""Every document a user gets with the repository stays inside it: each relative link in
every Markdown file resolves to a file in the repository (and, with a ``#fragment``, to a
heading of that file); no link leaves the repository; no absolute path appears anywhere
in the docs; and every guide links the rules."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# An absolute filesystem path in prose or code: /work/..., /home/..., /tmp/..., C:\...
ABSOLUTE = re.compile(r"(?<![\w.~:/])/(?:work|home|root|Users|opt|srv|mnt)/|[A-Z]:\\\\")


def markdown_files() -> list[Path]:
    """The Markdown files git tracks (or would: new files included), outside .venv."""
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.md"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()
    # A symlink (client_cli/RULES.md, the packaged rules) is its target, tested there.
    return [
        ROOT / p
        for p in out
        if not p.startswith(".venv") and (ROOT / p).exists() and not (ROOT / p).is_symlink()
    ]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (hyphens and
    underscores kept), each space a hyphen."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors a file offers: its headings' slugs (numbered when repeated, as GitHub
    does) and explicit ``<a id=...>`` / ``<a name=...>`` targets."""
    found: set[str] = set()
    counts: dict[str, int] = {}
    in_code = False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if in_code:
            continue
        m = re.match(r"#{1,6} (.*)", line)
        if m:
            base = slug(m.group(1))
            n = counts.get(base, 0)
            counts[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        found.update(re.findall(r"<a (?:id|name)=\"([^\"]+)\"", line))
    return found


FILES = markdown_files()


def test_the_files_under_test_include_the_guides() -> None:
    """A sanity check on the test itself: it reads the documents users read."""
    names = {p.relative_to(ROOT).as_posix() for p in FILES}
    assert {"README.md", "docs/RULES.md", "docs/CLIENT.md", "protocol/PROTOCOL.md"} <= names


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_links_resolve_inside_the_repository(path: Path) -> None:
    problems = []
    for target in LINK.findall(path.read_text()):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, file:, mailto: ...
            problems.append(f"{target}: links outside the repository")
            continue
        file_part, _, fragment = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if file_part.startswith("/") or not dest.is_relative_to(ROOT):
            problems.append(f"{target}: leaves the repository")
            continue
        if not dest.exists():
            problems.append(f"{target}: no such file")
            continue
        if fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            problems.append(f"{target}: no heading #{fragment} in {dest.name}")
    assert problems == []


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_absolute_paths(path: Path) -> None:
    hits = [line for line in path.read_text().splitlines() if ABSOLUTE.search(line)]
    assert hits == []


@pytest.mark.parametrize(
    "doc", ["README.md", "docs/CLIENT.md", "docs/ENGINE.md", "docs/DEALS.md",
            "protocol/PROTOCOL.md"]
)
def test_the_guides_link_the_rules(doc: str) -> None:
    targets = LINK.findall((ROOT / doc).read_text())
    assert any(t.split("#")[0].endswith("RULES.md") for t in targets)


def test_the_slug_rule_matches_github() -> None:
    """Anchors written by hand in RULES.md, checked against GitHub's rule by example."""
    assert slug("Portuguese Solitaire — `portuguese`") == "portuguese-solitaire--portuguese"
    assert slug("A race, start to finish") == "a-race-start-to-finish"
