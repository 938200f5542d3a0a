#!/usr/bin/env python3
"""The import contract's own check, with the standard library only (``ast``).

import-linter (``lint-imports``, contracts in pyproject.toml) checks the layers between
packages. This script checks what it is less plain about:

1. No import cycle among the modules of one package (``engine``, ``protocol``,
   ``server``, ``client_cli``). Every import statement counts, wherever it is: at the top,
   inside a function, or under ``if TYPE_CHECKING:`` — each is still a dependency.
2. ``server.core`` (the pure race core) imports only ``engine``, ``protocol``, itself and
   the standard library, and none of the I/O modules below (no asyncio, no sockets).

Exit 0 when both hold; else 1, printing each cycle (``a -> b -> a``) and each bad import.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "protocol", "server", "client_cli")
CORE = "server.core"
CORE_MAY_IMPORT = ("engine", "protocol", CORE)
# I/O the core must never touch: it is fed events and the time, and returns effects.
CORE_FORBIDDEN_STDLIB = frozenset({
    "asyncio", "socket", "selectors", "threading", "multiprocessing", "concurrent",
    "subprocess", "time", "http", "urllib",
})


def module_name(path: Path) -> str:
    """``server/core/machine.py`` → ``server.core.machine`` (``__init__`` → the package)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_names(path: Path, module: str) -> Iterator[tuple[str, int]]:
    """Every module ``path`` imports (absolute names) with its line, wherever the import
    statement is. ``from . import x`` yields ``pkg.x`` (a submodule or a name in
    ``pkg``: both depend on ``pkg``'s code, resolved against the known modules later)."""
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                drop = node.level - 1 if is_package else node.level
                base = base[: len(base) - drop] if drop else base
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            for alias in node.names:
                yield f"{prefix}.{alias.name}", node.lineno
            yield prefix, node.lineno


def resolve(name: str, known: set[str]) -> str | None:
    """The longest known module that ``name`` is or lies in, else None."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def graph() -> tuple[dict[str, set[str]], dict[str, list[tuple[str, int]]]]:
    """(module → modules of ours it imports, module → every raw import with its line)."""
    files = {module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")
             if ".venv" not in p.parts}
    known = set(files)
    edges: dict[str, set[str]] = {}
    raw: dict[str, list[tuple[str, int]]] = {}
    for module, path in files.items():
        raw[module] = list(imported_names(path, module))
        targets = {resolve(name, known) for name, _ in raw[module]}
        # a package's __init__ is not a dependency of its own submodules' code
        edges[module] = {t for t in targets if t and t != module
                         and not module.startswith(t + ".")}
    return edges, raw


def cycles(edges: dict[str, set[str]], package: str) -> list[list[str]]:
    """The strongly connected components (size > 1, or a self-loop) among the modules
    of ``package``, each as one cycle through them (Tarjan, then a walk)."""
    nodes = sorted(m for m in edges if m == package or m.startswith(package + "."))
    inside = {m: sorted(t for t in edges[m] if t in set(nodes)) for m in nodes}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in inside[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(_one_cycle(sorted(component), inside))

    for v in nodes:
        if v not in index:
            visit(v)
    return found


def _one_cycle(component: list[str], inside: dict[str, list[str]]) -> list[str]:
    """A shortest cycle through the component's first module (breadth-first)."""
    members = set(component)
    start = component[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in inside[v]:
            if w == start:
                return paths[v] + [start]
            if w in members and w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    return component  # pragma: no cover - a component always has a cycle


def core_problems(raw: dict[str, list[tuple[str, int]]]) -> list[str]:
    """Imports of ``server.core`` modules that break its rule (see the docstring)."""
    ours = set(PACKAGES)
    problems = []
    for module, names in sorted(raw.items()):
        if module != CORE and not module.startswith(CORE + "."):
            continue
        for name, line in names:
            top = name.partition(".")[0]
            if top in ours:
                if not any(name == ok or name.startswith(ok + ".") for ok in CORE_MAY_IMPORT):
                    problems.append(f"{module}:{line} imports {name} (the core may use only "
                                    "engine and protocol)")
            elif top in CORE_FORBIDDEN_STDLIB or top not in sys.stdlib_module_names:
                if top == "__future__":
                    continue
                problems.append(f"{module}:{line} imports {name} (no I/O in the core)")
    return problems


def main() -> int:
    """Print every problem; 0 when there is none."""
    edges, raw = graph()
    failed = False
    for package in PACKAGES:
        for cycle in cycles(edges, package):
            failed = True
            print(f"import cycle in {package}: {' -> '.join(cycle)}")
    for problem in core_problems(raw):
        failed = True
        print(problem)
    if not failed:
        print(f"imports ok: no cycle inside {', '.join(PACKAGES)}; {CORE} is pure")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
