#!/usr/bin/env bash
# Runs every test of sessiontree:
#   - the editors against the real server binary: Neovim 0.11 (scripts/test-nvim.sh) and VS Code as
#     code-server + Chromium (scripts/test-vscode.sh), each installing what it needs;
#   - a brief run of every fuzz target from the committed seeds (scripts/fuzz.sh ci: cargo-fuzz
#     installed when missing, one build, 10 s per target; a crash fails the run);
#   - the Rust workspace last (engine, conformance suite against ../shared/conformance or
#     $SESSIONTREE_CONFORMANCE_DIR, CLI, language server in-process, over stdio and under Emacs/eglot),
#     so the output ends with the test runner's summary line.
# SKIP_EDITORS=1 skips the editors, SKIP_FUZZ=1 the fuzzing. Exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-test-deps.sh || exit 1
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

status=0
if [ "${SKIP_EDITORS:-0}" != 1 ]; then
    cargo build -p sessiontree --quiet || exit 1
    echo "== Neovim plugin"
    bash scripts/test-nvim.sh || status=1
    echo "== VS Code extension"
    bash scripts/test-vscode.sh || status=1
fi

if [ "${SKIP_FUZZ:-0}" != 1 ]; then
    # Every fuzz target briefly from the committed seeds (installs cargo-fuzz when missing).
    echo "== Fuzzing (scripts/fuzz.sh ci)"
    bash scripts/fuzz.sh ci || status=1
fi

echo "== Rust workspace"
if cargo nextest --version >/dev/null 2>&1; then
    cargo test --workspace --doc --quiet || status=1
    # nextest ends with its summary line ("Summary [...] N tests run: N passed, ...").
    cargo nextest run --workspace --no-fail-fast --profile ci || status=1
else
    cargo test --workspace --no-fail-fast || status=1
fi
exit $status
