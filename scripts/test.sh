#!/usr/bin/env bash
# Runs every test of sessiontree: the Rust workspace (engine, conformance suite against
# ../shared/conformance or $SESSIONTREE_CONFORMANCE_DIR, the language server, the CLI).
# It installs what the tests need on a fresh machine first (see scripts/install-test-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-test-deps.sh

export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
if cargo nextest --version >/dev/null 2>&1; then
    # nextest ends with its summary line ("Summary [...] N tests run: N passed, ...").
    cargo nextest run --workspace --no-fail-fast --profile ci
    # Doc tests are not run by nextest.
    cargo test --workspace --doc --quiet
else
    cargo test --workspace --no-fail-fast
fi
