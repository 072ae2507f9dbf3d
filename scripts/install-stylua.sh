#!/usr/bin/env bash
# Installs StyLua, the Lua formatter the Neovim plugin is checked with, pinned by
# scripts/stylua/package-lock.json (@johnnymorganz/stylua-bin 2.5.2 from npm), into .tools/stylua
# (or $SESSIONTREE_TOOLS_DIR/stylua). Idempotent and cached: once installed, a run only compares the
# lock's hash. Prints the stylua binary as its last line; exits non-zero when it cannot install it.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEST=${SESSIONTREE_TOOLS_DIR:-$ROOT/.tools}/stylua
LOCK=$ROOT/scripts/stylua/package-lock.json
BIN=$DEST/node_modules/.bin/stylua

command -v npm >/dev/null 2>&1 || { echo "install-stylua: npm is missing" >&2; exit 1; }
stamp=$DEST/.lock-sha
want=$(sha256sum "$LOCK" | cut -d' ' -f1)
installed() { [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && "$BIN" --version 2>/dev/null | grep -q '^stylua 2\.5\.2$'; }
if installed; then
    echo "$BIN"
    exit 0
fi
mkdir -p "$DEST"
exec 9>"$DEST/.install-lock"
flock 9
if ! installed; then
    echo "install-stylua: installing stylua 2.5.2 into $DEST" >&2
    cp "$ROOT/scripts/stylua/package.json" "$LOCK" "$DEST/"
    (cd "$DEST" && npm ci --no-audit --no-fund --loglevel=error >&2)
    "$BIN" --version | grep -q '^stylua 2\.5\.2$' || { echo "install-stylua: $BIN does not run" >&2; exit 1; }
    echo "$want" > "$stamp"
fi
echo "$BIN"
