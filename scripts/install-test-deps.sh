#!/usr/bin/env bash
# Installs what the tests need and a fresh machine lacks. Idempotent and quiet when everything is
# already there. The Rust toolchain (with cargo-nextest) comes with the machine.
set -euo pipefail
cd "$(dirname "$0")/.."

need_cmd() { command -v "$1" >/dev/null 2>&1; }

if ! need_cmd cargo; then
    echo "install-test-deps: cargo is missing; install the Rust toolchain first" >&2
    exit 1
fi
