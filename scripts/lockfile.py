"""Write or check requirements/*.lock, the exact (hashed) dependency sets of solrace.

``scripts/lock`` runs ``write``: uv compiles each lock from pyproject.toml for every
platform (``--universal``), keeping the versions already pinned unless pyproject.toml
now excludes them, so running it twice changes nothing. Each lock starts with the
fingerprint of the pyproject.toml sections it came from; ``check`` (run by the tests)
fails when pyproject.toml's dependencies changed since, i.e. the lock is stale.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
LOCK_DIR = ROOT / "requirements"
# lock file -> the extras it installs (besides the base dependencies)
LOCKS = {
    "dev.lock": ("dev",),  # ./scripts/_venv.sh: tests, linters, validators, everything
    "server.lock": ("server", "fast"),  # deploy/Dockerfile: a server node, no terminal UI
}
PYTHON = "3.11"  # the oldest Python solrace supports: pins must install there
FINGERPRINT = "# pyproject-fingerprint: "


def fingerprint(pyproject: Path = PYPROJECT) -> str:
    """A digest of everything in pyproject.toml that decides what a lock contains."""
    project = tomllib.loads(pyproject.read_text())["project"]
    relevant = {
        "requires-python": project.get("requires-python"),
        "dependencies": project.get("dependencies", []),
        "optional-dependencies": project.get("optional-dependencies", {}),
    }
    return hashlib.sha256(json.dumps(relevant, sort_keys=True).encode()).hexdigest()


def direct_requirements(extras: tuple[str, ...], pyproject: Path = PYPROJECT) -> set[str]:
    """Normalised names of the packages pyproject.toml asks for with ``extras``
    (self-references like ``solrace[server]`` followed)."""
    project = tomllib.loads(pyproject.read_text())["project"]
    optional = project.get("optional-dependencies", {})
    names: set[str] = set()
    todo, seen = list(extras), set()
    specs = list(project.get("dependencies", []))
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for spec in optional.get(extra, []):
            own = re.fullmatch(rf"{project['name']}\[([^\]]+)\]", spec.replace(" ", ""))
            if own:
                todo.extend(own.group(1).split(","))
            else:
                specs.append(spec)
    for spec in specs:
        match = re.match(r"[A-Za-z0-9._-]+", spec)
        assert match, spec
        names.add(normalise(match.group(0)))
    return names


def normalise(name: str) -> str:
    """PEP 503 name normalisation."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pinned(lock: Path) -> dict[str, str]:
    """``name -> version`` of every ``name==version`` line of ``lock``."""
    pins: dict[str, str] = {}
    for line in lock.read_text().splitlines():
        match = re.match(r"([A-Za-z0-9._-]+)(\[[^\]]*\])?==([^\s;\\]+)", line)
        if match:
            pins[normalise(match.group(1))] = match.group(3)
    return pins


def problems() -> list[str]:
    """Why the locks do not match pyproject.toml (empty: they do)."""
    found = []
    want = fingerprint()
    for name, extras in LOCKS.items():
        lock = LOCK_DIR / name
        if not lock.exists():
            found.append(f"{lock.relative_to(ROOT)} is missing")
            continue
        first = lock.read_text().splitlines()[0]
        if first != FINGERPRINT + want:
            found.append(f"{lock.relative_to(ROOT)} is stale: pyproject.toml's "
                         "dependencies changed since it was written")
        missing = direct_requirements(extras) - set(pinned(lock))
        if missing:
            found.append(f"{lock.relative_to(ROOT)} pins nothing for {sorted(missing)}")
    return found


def write() -> None:
    """Regenerate every lock with uv (keeping existing pins where still allowed)."""
    uv = Path(sys.executable).with_name("uv")
    for name, extras in LOCKS.items():
        lock = LOCK_DIR / name
        if lock.exists():  # drop our header line: uv reads the pins as preferences
            lines = lock.read_text().splitlines(keepends=True)
            if lines and lines[0].startswith(FINGERPRINT):
                lock.write_text("".join(lines[1:]))
        cmd = [str(uv), "pip", "compile", str(PYPROJECT.relative_to(ROOT)), "--quiet",
               "--universal", "--python-version", PYTHON, "--generate-hashes",
               "--no-strip-extras", "--custom-compile-command", "scripts/lock",
               "-o", str(lock.relative_to(ROOT))]
        for extra in extras:
            cmd += ["--extra", extra]
        subprocess.run(cmd, cwd=ROOT, check=True)
        lock.write_text(FINGERPRINT + fingerprint() + "\n" + lock.read_text())
        print(f"scripts/lock: wrote {lock.relative_to(ROOT)} ({len(pinned(lock))} packages)")


def main(argv: list[str]) -> int:
    """``write`` or ``check`` (the exit status says whether the locks are current)."""
    if argv == ["write"]:
        LOCK_DIR.mkdir(exist_ok=True)
        write()
        return 0
    if argv == ["check"]:
        found = problems()
        for text in found:
            print(f"lock check: {text}; run scripts/lock", file=sys.stderr)
        return 1 if found else 0
    print("usage: lockfile.py write|check", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
