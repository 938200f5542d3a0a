"""The import contract's own check (scripts/check_imports.py): it finds cycles that go
through TYPE_CHECKING and in-function imports, and the repository has none."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "check_imports.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_imports", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_imports"] = module
    spec.loader.exec_module(module)
    return module


def test_a_cycle_through_any_kind_of_import_is_found(tmp_path: Path) -> None:
    check = _load()
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from typing import TYPE_CHECKING\n"
                              "if TYPE_CHECKING:\n    from .b import B\n")
    (pkg / "b.py").write_text("def f():\n    from pkg import c\n")
    (pkg / "c.py").write_text("import pkg.a\n")
    (pkg / "d.py").write_text("from . import a\n")  # depends on the cycle, not in it
    edges = {}
    for name in ("a", "b", "c", "d"):
        path = pkg / f"{name}.py"
        found = {n for n, _ in check.imported_names(path, f"pkg.{name}")}
        known = {"pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.d"}
        edges[f"pkg.{name}"] = {t for t in (check.resolve(n, known) for n in found)
                                if t and t not in ("pkg", f"pkg.{name}")}
    # a -> b (TYPE_CHECKING), b -> c (in a function), c -> a: one cycle of three
    assert check.cycles(edges, "pkg") == [["pkg.a", "pkg.b", "pkg.c", "pkg.a"]]


def test_the_repository_keeps_the_contract() -> None:
    check = _load()
    edges, raw = check.graph()
    assert all(check.cycles(edges, p) == [] for p in check.PACKAGES)
    assert check.core_problems(raw) == []
    # the shell may import the core; the core imports nothing of the shell
    assert not any(t.startswith("server.") and not t.startswith("server.core")
                   for m, ts in edges.items() if m.startswith("server.core") for t in ts)
