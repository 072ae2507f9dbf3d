#!/usr/bin/env bash
# Drives the plugin in a real Neovim TUI inside tmux: :SessionTree, moves, a filter, a search,
# Enter on a user message (the chat opens with its text), then saves the screen.
# usage: tui_tmux.sh NVIM SESSIONTREE_BIN CONFORMANCE_DIR ARTIFACT
# Ends with "tui: N passed, M failed"; exits non-zero on a failure. The first failure prints the
# screen as it was (CI logs show what was drawn); when Neovim never gets ready or the panel never
# opens, the run stops there instead of waiting out every later step.
set -uo pipefail
# The patterns hold UTF-8 characters: grep reads them as characters whatever locale the caller
# has (a fresh CI machine sets none).
export LC_ALL=C.UTF-8
NVIM=$1 BIN=$2 CONF=$3 ARTIFACT=$4
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../../.." && pwd)
S=sessiontree-tui-$$
# A private tmux server, its socket in this run's folder (removed with it; tmux leaves its socket
# behind): the default one may belong to another process, and a new session gets the environment
# of whoever started that server, not ours.
tm() { tmux -S "$ST_DIR/tmux.sock" -f /dev/null "$@"; }
ST_DIR=$(mktemp -d)
mkdir -p "$ST_DIR/sessions" "$(dirname "$ARTIFACT")"
cp "$CONF/c06-branch-basic/omp/session.jsonl" "$ST_DIR/sessions/c06.jsonl"
cp "$REPO/examples/csv-importer.omp.jsonl" "$ST_DIR/sessions/csv-importer.omp.jsonl"
touch -d '-1 minute' "$ST_DIR/sessions/c06.jsonl"
# What Neovim in the pane needs, given on its command line: a pane gets the environment of the
# tmux server (whoever started it), not of the client that asks for the session.
PANE_ENV=$(printf '%q ' env "ST_DIR=$ST_DIR" "SESSIONTREE_BIN=$BIN" "LC_ALL=C.UTF-8" \
    "XDG_STATE_HOME=$ST_DIR/state" "XDG_CONFIG_HOME=$ST_DIR/config" "XDG_DATA_HOME=$ST_DIR/data")

passed=0 failed=0 dumped=0
dump() { # dump <why>: the screen and the pane's state, once (at the first failure)
    [ "$dumped" -eq 1 ] && return
    dumped=1
    echo "  --- the screen at the first failure ($1) ---"
    printf '%s\n' "$SCREEN" | sed 's/^/  | /'
    echo "  --- pane: $(tm display -p -t "$S" 'dead=#{pane_dead} status=#{pane_dead_status} command=#{pane_current_command} size=#{pane_width}x#{pane_height}' 2>&1)," \
        "TERM=$(tm show-options -gv default-terminal 2>&1), load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
}
fail() { # fail <message>
    failed=$((failed + 1)); echo "  FAIL  $1"; dump "$1"
}
check() { # check <description> <grep -E pattern>
    if printf '%s\n' "$SCREEN" | grep -qE -- "$2"; then
        passed=$((passed + 1)); echo "  ok    $1"
    else
        fail "$1 (no /$2/ on the screen)"
    fi
}
finish() {
    echo "tui: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit
}
screen() { SCREEN=$(tm capture-pane -p -t "$S" 2>&1); }
# Neovim stopped at an error: no use waiting for anything else.
STUCK='Press ENTER or type command|Error detected while processing'
wait_for() { # wait_for <pattern> [tenths of a second, default 100]
    for _ in $(seq 1 "${2:-100}"); do
        screen
        if printf '%s\n' "$SCREEN" | grep -qE -- "$1"; then return 0; fi
        if printf '%s\n' "$SCREEN" | grep -qE -- "$STUCK"; then return 1; fi
        sleep 0.1
    done
    return 1
}
cleanup() { tm kill-server 2>/dev/null || true; rm -rf "$ST_DIR"; }
trap cleanup EXIT
trap 'exit 143' TERM INT HUP

echo "# tui (tmux)"
tm new-session -d -s "$S" -x 140 -y 32 \
    "cd '$ST_DIR' && $PANE_ENV '$NVIM' -u '$HERE/tui_init.lua' -i NONE"
tm set-option -t "$S" escape-time 0 >/dev/null
# tui_init.lua says "tui: ready" once Neovim has read it and its UI is up: typing starts then.
wait_for '^tui: ready' 300; check 'Neovim starts with the plugin (tui_init.lua)' '^tui: ready'
[ "$failed" -eq 0 ] || finish
tm send-keys -t "$S" ':SessionTree' Enter
# The first open starts the server (a debug build, maybe on a loaded machine): up to 30 s.
wait_for 'CSV importer quoted commas' 300; check ':SessionTree shows the newest session in the header' 'CSV importer quoted commas · filter: default'
[ "$failed" -eq 0 ] || finish
wait_for 'user: The CSV importer'; check 'the panel draws the rows' 'user: The CSV importer drops rows'
check 'the leaf is marked' '← leaf'
check 'the server cursor marker is on the leaf row' '› .*PR opened.*← leaf'
FIRST=$SCREEN
COLORS=$(tm capture-pane -e -p -t "$S")
if printf '%s\n' "$COLORS" | grep -qE $'\e\\[[0-9;]*m\\[csv crate\\]'; then
    passed=$((passed + 1)); echo "  ok    the label is drawn in its own colour (decoration provider)"
else
    fail "no colour escape before [csv crate]"
fi
tm send-keys -t "$S" k
wait_for '› .*user: Great, open a PR'; check 'k moves the cursor marker up' '› .*user: Great, open a PR'
check 'the old row lost the marker' '^  .*PR opened.*← leaf'
tm send-keys -t "$S" M-u
wait_for 'filter: userOnly'; check '<M-u> filters to user messages (header)' 'filter: userOnly'
# The panel is the part of each line left of the window separator; its rows follow the header.
user_only_drawn() {
    PANEL=$(printf '%s\n' "$SCREEN" | sed 's/│.*//')
    printf '%s\n' "$PANEL" | grep -q 'user: The CSV importer' && ! printf '%s\n' "$PANEL" | grep -q 'assistant:'
}
for _ in $(seq 1 100); do user_only_drawn && break; sleep 0.1; screen; done
if user_only_drawn; then
    passed=$((passed + 1)); echo "  ok    user-only shows the user messages and hides assistant rows"
else
    fail "user-only: the panel shows no user message, or an assistant row"
fi
tm send-keys -t "$S" M-d
wait_for 'filter: default'
tm send-keys -t "$S" M-o
wait_for 'filter: all'; check '<M-o> (typed in a real terminal) goes back a filter' 'filter: all'
tm send-keys -t "$S" M-d
wait_for 'filter: default'
tm send-keys -t "$S" / q u o t e
wait_for 'search: quote'; check '/ and typing search live (header)' 'search: quote'
tm send-keys -t "$S" Enter Escape
wait_for 'filter: default · [0-9]+ rows'
tm send-keys -t "$S" ':SessionTree! ' Enter
wait_for '^[0-9]+: Plan a trip' || true
# vim.ui.select in the TUI lists the sessions with numbers: pick the c06 one.
N=$(printf '%s\n' "$SCREEN" | grep -E '^[0-9]+: Plan a trip' | head -1 | cut -d: -f1)
check ':SessionTree! lists the sessions' '^[0-9]+: Plan a trip'
tm send-keys -t "$S" "${N:-2}" Enter
wait_for 'user: Paris'; check 'the picked session (c06) is shown' 'user: Paris'
# Put the cursor on "user: Paris" and press Enter: the leaf moves, the chat opens with "Paris".
# The cursor starts on the leaf (the last row); k moves up one row at a time, wrapping.
for _ in 1 2 3 4 5 6; do
    screen
    if printf '%s\n' "$SCREEN" | grep -qE '› .*user: Paris'; then break; fi
    before=$(printf '%s\n' "$SCREEN" | grep -n '› ' | head -1 | cut -d: -f1)
    tm send-keys -t "$S" k
    for _ in $(seq 1 20); do
        screen
        now=$(printf '%s\n' "$SCREEN" | grep -n '› ' | head -1 | cut -d: -f1)
        [ "$now" != "$before" ] && break
        sleep 0.05
    done
done
check 'k walked the cursor marker to "user: Paris"' '› .*user: Paris'
tm send-keys -t "$S" Enter
wait_for 'message · <CR>'; check 'Enter on a user message opens the chat (its winbar: the agent state)' 'chat · omp · unavailable'
check 'the chat shows the conversation' '## assistant'
wait_for '│Paris *$'; check 'the chat input holds the message text' '│Paris *$'
wait_for 'Moved to leaf'; check 'the move is reported' 'Moved to leaf'
MOVED=$SCREEN
# Back to the panel: L asks for a label on the cursor row (the new leaf) with vim.ui.input.
tm send-keys -t "$S" ':SessionTree' Enter
wait_for '› .*Where to\?'
tm send-keys -t "$S" L
wait_for 'Label \(empty clears\)'; check 'L asks for the label' 'Label \(empty clears\)'
tm send-keys -t "$S" 'tui-label' Enter
wait_for '\[tui-label\] assistant: Where to\?'; check 'the label appears on the row' '\[tui-label\] assistant: Where to\?'
wait_for 'Label \[tui-label\] set on'; check 'L confirms the label' 'Label \[tui-label\] set on "assistant: Where to\?"'
# /branch: the picker lists the user messages (newest first); pick "Rome".
tm send-keys -t "$S" ':SessionBranch' Enter
wait_for '^[0-9]+: .*Rome'; check ':SessionBranch lists the user messages' '^[0-9]+: .*Rome'
N=$(printf '%s\n' "$SCREEN" | grep -E '^[0-9]+: .*Rome' | head -1 | cut -d: -f1)
tm send-keys -t "$S" "${N:-1}" Enter
wait_for 'Branched into'; check 'the branch is reported' 'Branched into .*\.jsonl'
wait_for '│Rome *$'; check 'the branched message is in the chat input' '│Rome *$'
check 'the panel shows the new session (the path before "Rome")' '› .*assistant: Where to\?'

{
    echo "== :SessionTree on the newest session =="; printf '%s\n' "$FIRST"
    echo "== Enter on \"user: Paris\": leaf moved, chat prefilled =="; printf '%s\n' "$MOVED"
    echo "== label, then :SessionBranch from \"Rome\" =="; printf '%s\n' "$SCREEN"
} > "$ARTIFACT"
echo "  screen saved to $ARTIFACT"
tm send-keys -t "$S" Escape ':qa!' Enter
sleep 0.3
finish
