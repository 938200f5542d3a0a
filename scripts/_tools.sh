# Sourced by scripts/check: the system tools the tests run for real, installed from
# Debian when missing (the machine's user is root there; elsewhere it says what to
# install). redis-server: the Redis tests; haproxy and promtool (package prometheus):
# the deployment tests in tests/ops.
missing=""
command -v redis-server >/dev/null || missing="$missing redis-server"
command -v haproxy >/dev/null || missing="$missing haproxy"
command -v promtool >/dev/null || missing="$missing prometheus"
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "== installing$missing (apt-get)"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
  else
    echo "scripts/check: missing$missing: apt-get install$missing" >&2
    return 1
  fi
fi
