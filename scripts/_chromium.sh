# Sourced by scripts/check: the browser tests (tests/web/) drive Debian's chromium through
# Playwright (Playwright's own browser download is not reachable from CI). Installs the
# package only when /usr/bin/chromium is missing; needs apt-get and root (or sudo).
if [ ! -x /usr/bin/chromium ]; then
  if command -v apt-get >/dev/null 2>&1; then
    echo "== installing chromium (apt) for the browser tests"
    sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
  else
    echo "!! /usr/bin/chromium is missing and apt-get is not available: tests/web will skip"
  fi
fi
