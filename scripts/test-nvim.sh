#!/usr/bin/env bash
# Tests the Neovim plugin (editors/nvim) in a real Neovim 0.11 against the real server binary:
# installs Neovim (scripts/install-nvim.sh), builds the server when needed, runs every headless spec
# (editors/nvim/tests/*_spec.lua), then runs in a real terminal under tmux (installed with apt-get
# when missing): the main flows (the screen saved to target/artifacts/nvim-tmux.txt), and the first
# open of a big session while the terminal is resized (tui_open_race.sh); last, the plugin's Lua
# format with StyLua (scripts/install-stylua.sh).
# Ends with the line `nvim: N passed, M failed` and exits non-zero when anything failed.
#
# Environment: SESSIONTREE_BIN (server binary; default target/debug/sessiontree, built here),
# SESSIONTREE_CONFORMANCE_DIR (default ../shared/conformance).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

NVIM=$(bash scripts/install-nvim.sh | tail -1)
if [ ! -x "$NVIM" ]; then
    echo "nvim: could not install Neovim"
    echo "nvim: 0 passed, 1 failed"
    exit 1
fi

BIN=${SESSIONTREE_BIN:-$ROOT/target/debug/sessiontree}
if [ -z "${SESSIONTREE_BIN:-}" ]; then
    # cargo only rebuilds what changed; a no-op when the binary is current.
    if ! cargo build -p sessiontree --quiet; then
        if [ -x "$BIN" ]; then
            echo "warning: cargo build -p sessiontree failed; testing the existing $BIN" >&2
        else
            echo "nvim: the server does not build and there is no binary"
            echo "nvim: 0 passed, 1 failed"
            exit 1
        fi
    fi
fi
export SESSIONTREE_BIN=$BIN

CONF=${SESSIONTREE_CONFORMANCE_DIR:-$ROOT/../shared/conformance}
CONF=$(cd "$CONF" 2>/dev/null && pwd || echo "$CONF")
export SESSIONTREE_CONFORMANCE_DIR=$CONF

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export XDG_STATE_HOME=$WORK/state XDG_CONFIG_HOME=$WORK/config XDG_DATA_HOME=$WORK/data XDG_CACHE_HOME=$WORK/cache

passed=0 failed=0
tally() { # tally <output file> <exit code> <name>
    local line
    line=$(grep -E '^[a-z_ ()]+: [0-9]+ passed, [0-9]+ failed' "$1" | tail -1)
    if [ -z "$line" ]; then
        echo "  FAIL  $3 ended without a result line (exit $2)"
        failed=$((failed + 1))
        return
    fi
    local p f
    p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')
    f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
    passed=$((passed + p)); failed=$((failed + f))
    if [ "$2" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "  FAIL  $3 exited with $2"
        failed=$((failed + 1))
    fi
}

echo "Neovim: $("$NVIM" --version | head -1); server: $BIN; conformance: $CONF"
for spec in editors/nvim/tests/*_spec.lua; do
    name=$(basename "$spec" .lua)
    timeout 600 "$NVIM" --headless -u NONE -i NONE -l "$spec" >"$WORK/$name.out" 2>"$WORK/$name.err"
    code=$?
    cat "$WORK/$name.out"
    if [ "$code" -ne 0 ]; then
        echo "  --- stderr of $name (exit $code) ---"
        tail -20 "$WORK/$name.err"
    fi
    tally "$WORK/$name.out" "$code" "$name"
done

if ! command -v tmux >/dev/null 2>&1; then
    echo "tmux missing: apt-get install tmux" >&2
    (apt-get install -y --no-install-recommends tmux || (apt-get update && apt-get install -y --no-install-recommends tmux)) >/dev/null 2>&1
fi
if command -v tmux >/dev/null 2>&1; then
    mkdir -p target/artifacts
    timeout 180 bash editors/nvim/tests/support/tui_tmux.sh "$NVIM" "$BIN" "$CONF" "$ROOT/target/artifacts/nvim-tmux.txt" >"$WORK/tui.out" 2>&1
    code=$?
    cat "$WORK/tui.out"
    tally "$WORK/tui.out" "$code" tui
    timeout 300 bash editors/nvim/tests/support/tui_open_race.sh "$NVIM" "$BIN" >"$WORK/tui_race.out" 2>&1
    code=$?
    cat "$WORK/tui_race.out"
    tally "$WORK/tui_race.out" "$code" tui_open_race
else
    echo "  FAIL  tmux is not available and could not be installed: no real-terminal run"
    failed=$((failed + 1))
fi

# Formatting (editors/nvim/.stylua.toml) with the pinned StyLua (scripts/install-stylua.sh); a
# formatter that cannot be installed is a failure, not a skipped check.
STYLUA=${STYLUA:-$(bash scripts/install-stylua.sh | tail -1)}
if [ ! -x "$STYLUA" ]; then
    echo "  FAIL  stylua could not be installed (scripts/install-stylua.sh): the format is not checked"
    failed=$((failed + 1))
elif (cd editors/nvim && "$STYLUA" --check . >"$WORK/stylua.out" 2>&1); then
    echo "  ok    stylua --check"; passed=$((passed + 1))
else
    echo "  FAIL  stylua --check"; head -20 "$WORK/stylua.out"; failed=$((failed + 1))
fi

echo "nvim: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
