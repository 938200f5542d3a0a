"""First render of the browser client on loopback, in headless Debian chromium.

    .venv/bin/python bench/web_bench.py [--runs 10]

Starts ``solrace serve`` on 127.0.0.1 (a subprocess, as a user would) and, ``--runs``
times each, measures in the page's own clock (``performance.now()``, ms since the
navigation started):

- lobby, cold: a fresh browser context (empty cache) opens ``/`` until the lobby's
  create form is drawn (the websocket is open and the page rendered);
- lobby, warm: the same context opens ``/`` again (assets from cache: the page itself is
  revalidated by ETag, the versioned assets are not requested at all);
- race, reload: a player in a running race reloads ``/r/CODE`` until its board is drawn
  (hello with the resume token, ``joined``, first render).

The page marks (``performance.mark``) the first render of a connected screen
(``solrace:screen``: the socket is open and the lobby drawn) and of its first board
(``solrace:board``); the bench reads those marks. Also prints the size of the page's own
JS + CSS. Report medians.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "client_web" / "static"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    proc = subprocess.Popen([sys.executable, "-m", "client_cli.main", "serve", "--host",
                             "127.0.0.1", "--port", "0", "--one-host"],
                            stdout=subprocess.PIPE, text=True,
                            cwd=ROOT)
    assert proc.stdout is not None
    match = re.search(r"ws://([\d.]+:\d+)", proc.stdout.readline())
    assert match, "solrace serve did not start"
    base = f"http://{match.group(1)}"
    def mark(name: str) -> str:
        return f"performance.getEntriesByName('solrace:{name}')[0].startTime"

    results: dict[str, list[float]] = {"lobby, cold": [], "lobby, warm": [], "race, reload": []}
    try:
        with sync_playwright() as playwright:
            flags = ["--no-sandbox"] if os.geteuid() == 0 else []
            browser = playwright.chromium.launch(executable_path=args.chromium, args=flags)
            for _ in range(args.runs):
                context = browser.new_context()
                page = context.new_page()
                page.goto(base + "/")
                page.wait_for_selector("form.create")
                results["lobby, cold"].append(page.evaluate(mark("screen")))
                page.goto(base + "/")
                page.wait_for_selector("form.create")
                results["lobby, warm"].append(page.evaluate(mark("screen")))
                page.fill('input[name="countdown"]', "0")
                page.click('form.create button[type="submit"]')
                page.wait_for_selector("#ready")
                page.click("#ready")
                page.wait_for_selector(".board.own")
                page.reload()
                page.wait_for_selector(".board.own")
                results["race, reload"].append(page.evaluate(mark("board")))
                context.close()
            browser.close()
    finally:
        proc.terminate()
        proc.wait()
    for name, times in results.items():
        print(f"{name:13}: median {statistics.median(times):6.0f} ms   "
              f"max {max(times):6.0f} ms   ({len(times)} runs)")
    own = sum(p.stat().st_size for p in STATIC.iterdir() if p.suffix in (".js", ".css"))
    vendored = sum(p.stat().st_size for p in (STATIC / "vendor").rglob("*.mjs"))
    print(f"own JS + CSS: {own / 1024:.1f} KiB; "
          f"vendored @msgpack/msgpack: {vendored / 1024:.1f} KiB")


if __name__ == "__main__":
    main()
