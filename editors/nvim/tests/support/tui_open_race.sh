#!/usr/bin/env bash
# The first open in a fresh Neovim, in a real terminal (tmux): `:SessionTree FILE` on a session that
# takes a while to open, with a server that takes a moment to start (a cold start), while the
# terminal is resized (WinResized/VimResized redraw the panel) and filter keys are pressed. No
# request for the session may reach the server before its open is answered: the screen must show
# the rows, never "is not open" (sessionNotFound) or a Press-ENTER prompt. Ten fresh Neovims.
# usage: tui_open_race.sh NVIM SESSIONTREE_BIN
# Ends with "tui_open_race: N passed, M failed"; exits non-zero on a failure.
set -uo pipefail
export LC_ALL=C.UTF-8
NVIM=$1 BIN=$2
HERE=$(cd "$(dirname "$0")" && pwd)
S=sessiontree-race-$$
# A private tmux server, its socket in this run's folder (removed with it; tmux leaves its socket
# behind): the default one may belong to another process, and a new session gets the environment
# of whoever started that server, not ours.
tm() { tmux -S "$ST_DIR/tmux.sock" -f /dev/null "$@"; }
ST_DIR=$(mktemp -d)
mkdir -p "$ST_DIR/sessions" "$ST_DIR/big"
# The server as a cold start gives it: up by 0.3 s later. Requests made meanwhile wait for
# `initialize`, and each must still leave after the open.
printf '#!/bin/sh\nsleep 0.3\nexec "%s" "$@"\n' "$BIN" > "$ST_DIR/slow-server"
chmod +x "$ST_DIR/slow-server"
export ST_DIR SESSIONTREE_BIN=$ST_DIR/slow-server
export XDG_STATE_HOME=$ST_DIR/state XDG_CONFIG_HOME=$ST_DIR/config XDG_DATA_HOME=$ST_DIR/data
# What Neovim in the pane needs, given on its command line: a pane gets the environment of the
# tmux server (whoever started it), not of the client that asks for the session.
PANE_ENV=$(printf '%q ' env "ST_DIR=$ST_DIR" "SESSIONTREE_BIN=$SESSIONTREE_BIN" "LC_ALL=C.UTF-8" \
    "XDG_STATE_HOME=$XDG_STATE_HOME" "XDG_CONFIG_HOME=$XDG_CONFIG_HOME" "XDG_DATA_HOME=$XDG_DATA_HOME")
BIG=$ST_DIR/big/big.jsonl
"$BIN" generate --entries 20000 --seed 5 --out "$BIG" >/dev/null

passed=0 failed=0
cleanup() { tm kill-server 2>/dev/null || true; rm -rf "$ST_DIR"; }
trap cleanup EXIT
trap 'exit 143' TERM INT HUP
screen() { SCREEN=$(tm capture-pane -p -t "$S" 2>/dev/null); }
wait_for() { # wait_for <pattern> [tenths]: up to 20 s
    for _ in $(seq 1 "${2:-200}"); do
        screen
        if printf '%s\n' "$SCREEN" | grep -qE -- "$1"; then return 0; fi
        sleep 0.1
    done
    return 1
}

echo "# tui_open_race (tmux)"
for round in 1 2 3 4 5 6 7 8 9 10; do
    tm new-session -d -s "$S" -x 140 -y 32 \
        "cd '$ST_DIR' && $PANE_ENV '$NVIM' -u '$HERE/tui_init.lua' -i NONE"
    tm set-option -t "$S" escape-time 0 >/dev/null
    # tui_init.lua says "tui: ready" once Neovim has read it and its UI is up.
    if ! wait_for '^tui: ready' 300; then
        failed=$((failed + 1)); echo "  FAIL  round $round: Neovim did not get ready; the screen:"
        printf '%s\n' "$SCREEN" | sed 's/^/        | /'
        tm kill-session -t "$S" 2>/dev/null || true
        continue
    fi
    tm send-keys -t "$S" ":SessionTree $BIG" Enter
    # While the session opens: the terminal changes size (a window manager, a split) and the user
    # already presses filter keys, each a few milliseconds apart.
    sleep "0.0$((round % 10))"
    for x in 150 130 140; do
        tm resize-window -t "$S" -x "$x" -y 32 2>/dev/null
        for pause in 0.003 0.007; do
            tm send-keys -t "$S" M-u
            sleep "$pause"
            tm send-keys -t "$S" M-d
            sleep "$pause"
        done
    done
    if wait_for 'filter: default · [0-9]+ rows'; then
        sleep 0.5
        screen
        if printf '%s\n' "$SCREEN" | grep -qE 'not open|sessionNotFound|Press ENTER|rows: '; then
            failed=$((failed + 1)); echo "  FAIL  round $round: an error reached the screen"
            printf '%s\n' "$SCREEN" | grep -E 'not open|sessionNotFound|Press ENTER|rows: ' | head -3 | sed 's/^/        /'
        else
            passed=$((passed + 1)); echo "  ok    round $round: the rows, no error"
        fi
    else
        failed=$((failed + 1)); echo "  FAIL  round $round: no rows on the screen"
        printf '%s\n' "$SCREEN" | tail -5 | sed 's/^/        /'
    fi
    tm kill-session -t "$S" 2>/dev/null || true
    sleep 0.2
done
echo "tui_open_race: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
