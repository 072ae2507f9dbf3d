#!/usr/bin/env bash
# Installs what the Rust tests need and a fresh machine lacks; idempotent and quiet when everything is
# already there. The Rust toolchain (with cargo-nextest) comes with the machine. The editor test
# scripts install their own editors (scripts/install-nvim.sh, scripts/install-vscode-test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

have() { command -v "$1" >/dev/null 2>&1; }

if ! have cargo; then
    echo "install-test-deps: cargo is missing; install the Rust toolchain first" >&2
    exit 1
fi

# Node runs the JavaScript-rules test (server/core/tests/js_semantics.rs) and pi; Python runs the
# second writer of the concurrent-writer tests (sessiontree-testkit). Both come with the machine;
# a test that needs one fails without it.
for tool in node python3; do
    have "$tool" || echo "install-test-deps: $tool is missing; the tests that need it will fail" >&2
done

# Emacs 28 with eglot runs the plain-LSP test (server/lsp/tests/eglot.rs).
if ! { have emacs && dpkg -s elpa-eglot >/dev/null 2>&1; }; then
    if [ "$(id -u)" = 0 ] && have apt-get; then
        echo "install-test-deps: installing emacs-nox and elpa-eglot (apt)"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >/dev/null
        apt-get install -y -qq --no-install-recommends emacs-nox elpa-eglot >/dev/null
    else
        echo "install-test-deps: emacs with eglot is missing and cannot be installed here; the eglot test will fail" >&2
    fi
fi

# tmux: the real agents' terminal UI runs in it (server/lsp/tests/agent.rs), as Neovim's does.
if ! have tmux; then
    if [ "$(id -u)" = 0 ] && have apt-get; then
        echo "install-test-deps: installing tmux (apt)"
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq --no-install-recommends tmux >/dev/null 2>&1 \
            || { apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends tmux >/dev/null; }
    else
        echo "install-test-deps: tmux is missing and cannot be installed here; the terminal-agent test will fail" >&2
    fi
fi

# The real agents (pi on Node, omp on Bun) for the live-agent tests, pinned and cached in .tools/agents.
bash scripts/install-agents.sh >/dev/null
# redis-server (Debian's) runs the Redis store tests (server/redis/tests, the CLI and server tests
# of sessions kept in Redis); each test starts its own server on a free loopback port.
if ! have redis-server; then
    if [ "$(id -u)" = 0 ] && have apt-get; then
        echo "install-test-deps: installing redis-server (apt)"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >/dev/null
        apt-get install -y -qq --no-install-recommends redis-server >/dev/null
        # The package may start a system instance; the tests start their own.
        if have service; then service redis-server stop >/dev/null 2>&1 || true; fi
    else
        echo "install-test-deps: redis-server is missing and cannot be installed here; the Redis tests will fail" >&2
    fi
fi
