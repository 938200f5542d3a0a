# Sourced by scripts/check and scripts/demo: make .venv and install solrace into it when
# it is missing or pyproject.toml / the lock changed since: first the exact, hashed
# dependency set of requirements/dev.lock, then solrace itself (editable, --no-deps, so
# nothing unlocked sneaks in). A lock older than pyproject.toml's dependencies stops
# here with the command that refreshes it (scripts/lock).
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
stamp=.venv/.solrace-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ requirements/dev.lock -nt "$stamp" ]; then
  .venv/bin/python scripts/lockfile.py check || return 1
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q --require-hashes -r requirements/dev.lock
  .venv/bin/python -m pip install -q --no-deps -e .
  touch "$stamp"
fi
