#!/usr/bin/env bash
# Vendors the browser client's one npm dependency, reproducibly: `npm ci` installs exactly
# what package-lock.json pins (hash-checked), then the package's ESM build is copied into
# static/vendor/msgpack/. The copy is committed, so a fresh machine needs no node or npm to
# run or test solrace; rerun this only to change the pinned version (then commit the diff).
set -euo pipefail
cd "$(dirname "$0")"
npm ci --ignore-scripts --no-audit --no-fund
src=node_modules/@msgpack/msgpack
dst=static/vendor/msgpack
rm -rf "$dst"
mkdir -p "$dst/utils"
for f in "$src"/dist.esm/*.mjs; do cp "$f" "$dst/"; done
for f in "$src"/dist.esm/utils/*.mjs; do cp "$f" "$dst/utils/"; done
# Source maps point into node_modules, which is not shipped: drop the comment.
sed -i '/^\/\/# sourceMappingURL=/d' "$dst"/*.mjs "$dst"/utils/*.mjs
cp "$src/LICENSE" "$dst/LICENSE"
version=$(node -p "require('./$src/package.json').version")
echo "@msgpack/msgpack $version, vendored by client_web/vendor.sh from package-lock.json" > "$dst/VERSION"
echo "vendored @msgpack/msgpack $version into $dst"
