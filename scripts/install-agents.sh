#!/usr/bin/env bash
# Installs the real agents the tests drive, pinned by scripts/agents/package-lock.json: pi
# (@mariozechner/pi-coding-agent 0.73.1, on Node >= 20) and omp (@oh-my-pi/pi-coding-agent 18.2.3,
# on Bun from the npm package `bun`), into .tools/agents (or $SESSIONTREE_TOOLS_DIR/agents).
# Idempotent and cached: once installed (and checked to start), a run only compares the lock's hash. Prints the folder holding the
# `pi`, `omp` and `bun` launchers as its last line.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEST=${SESSIONTREE_TOOLS_DIR:-$ROOT/.tools}/agents
LOCK=$ROOT/scripts/agents/package-lock.json
BIN=$DEST/bin

have() { command -v "$1" >/dev/null 2>&1; }
have node || { echo "install-agents: node (>= 20) is missing" >&2; exit 1; }
have npm || { echo "install-agents: npm is missing" >&2; exit 1; }
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 20 ] || { echo "install-agents: node $major is too old; pi needs Node >= 20" >&2; exit 1; }

works() {
    [ -x "$BIN/pi" ] && [ -x "$BIN/omp" ] && [ -x "$BIN/bun" ] || return 1
    [ "$("$BIN/pi" --version 2>&1 | tail -1)" = "0.73.1" ] || return 1
    "$BIN/omp" --version 2>&1 | grep -q '^omp/18.2.3$' || return 1
}

stamp=$DEST/.lock-sha
want=$(sha256sum "$LOCK" | cut -d' ' -f1)
installed() { [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && [ -x "$BIN/pi" ] && [ -x "$BIN/omp" ] && [ -x "$BIN/bun" ]; }
if installed; then
    echo "$BIN"
    exit 0
fi
# One installer at a time (tests in parallel processes may all ask).
mkdir -p "$DEST"
exec 9>"$DEST/.install-lock"
flock 9
if ! installed || ! works; then
    echo "install-agents: installing pi 0.73.1, omp 18.2.3 and bun into $DEST" >&2
    mkdir -p "$DEST"
    cp "$ROOT/scripts/agents/package.json" "$LOCK" "$DEST/"
    # `npm install` with the lock, not `npm ci`: omp lists native packages for other platforms
    # that are not all published, which `npm ci` refuses. The agents' own install scripts are not
    # needed (bun's binary is checked below).
    (cd "$DEST" && npm install --no-audit --no-fund --ignore-scripts --loglevel=error >&2)
    mkdir -p "$BIN"
    bun_exe=$DEST/node_modules/bun/bin/bun.exe
    if ! "$bun_exe" --version >/dev/null 2>&1; then
        # An npm that left bun's placeholder in place: bun's own installer puts the binary there.
        (cd "$DEST/node_modules/bun" && node install.js >&2)
    fi
    "$bun_exe" --version >/dev/null
    ln -sf "$bun_exe" "$BIN/bun"
    cat > "$BIN/pi" <<PI
#!/usr/bin/env bash
exec node "$DEST/node_modules/@mariozechner/pi-coding-agent/dist/cli.js" "\$@"
PI
    cat > "$BIN/omp" <<OMP
#!/usr/bin/env bash
exec "$BIN/bun" "$DEST/node_modules/@oh-my-pi/pi-coding-agent/dist/cli.js" "\$@"
OMP
    chmod +x "$BIN/pi" "$BIN/omp"
    works || { echo "install-agents: pi or omp does not start after the install" >&2; exit 1; }
    echo "$want" > "$stamp"
fi
echo "$BIN"
