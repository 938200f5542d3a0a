#!/usr/bin/env bash
# Checks deploy/haproxy.cfg for real, on loopback:
#   1. `haproxy -c` accepts the config;
#   2. a private redis-server, two `solrace serve` nodes and HAProxy (this config) start;
#   3. a race runs through HAProxy: two players (landing on different nodes), a
#      spectator; one node is SIGKILLed mid-race and its player resumes through HAProxy
#      (which sends it to the surviving node); every acknowledged move is in the results.
# Needs haproxy (Debian: apt-get install haproxy) and redis-server on PATH; fails with a
# clear message otherwise. Everything it starts is stopped by pid on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
[ -x "$PY" ] || { echo "check_haproxy: run ./scripts/check once to create .venv" >&2; exit 2; }
for tool in haproxy redis-server; do
  command -v "$tool" >/dev/null || { echo "check_haproxy: FAIL: $tool is not on PATH (apt-get install $tool)" >&2; exit 1; }
done
exec "$PY" deploy/check_haproxy.py "$@"
