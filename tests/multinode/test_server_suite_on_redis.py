"""The server's whole end-to-end suite (tests/server/) once more, with every server on a
private Redis instead of the in-memory store (``SOLRACE_E2E_STORE=redis``, which the
suite's ``e2e_store_url`` fixture reads). A child pytest, so the default run covers both
backends without each e2e test being written twice."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(600)  # the child's own limit (480 s) fires first
def test_server_e2e_suite_passes_on_redis() -> None:
    env = {**os.environ, "SOLRACE_E2E_STORE": "redis"}
    child = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
         # a test stuck for 2 min fails with every thread's stack (shown below)
         "-o", "timeout=120", str(ROOT / "tests" / "server")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=480,
    )
    summary = child.stdout.strip().splitlines()[-1] if child.stdout.strip() else ""
    assert child.returncode == 0, f"{child.stdout[-6000:]}\n{child.stderr[-12000:]}"
    assert " passed" in summary and "skipped" not in summary, summary
