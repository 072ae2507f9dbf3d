#!/usr/bin/env bash
# Tests the VS Code extension: type check, lint, unit tests, bundle + .vsix, then an end-to-end
# run in a real VS Code (code-server 4.100.3 = VS Code 1.100.3, driven by Debian's Chromium through
# playwright-core) against the real `sessiontree lsp` and a real omp session file laid out where
# omp keeps sessions for the test workspace; the chat prompts the real pi and omp (scripts/install-agents.sh)
# against the tests' loopback model server (scripts/testing/model-server.mjs).
# Installs what it needs first (scripts/install-vscode-test.sh; SKIP_INSTALL=1 skips that).
# env: SESSIONTREE_BIN = server binary to use (default: cargo build -p sessiontree → target/debug);
#      E2E_ONLY = a regex: only the end-to-end checks whose names match it run (for working on one).
# Artifacts: target/artifacts/vscode-panel.png (+ logs in target/vscode-e2e/).
# Last line: "vscode: N passed, M failed"; exits non-zero on any failure.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
EXT=$ROOT/editors/vscode
TOOLS=${SESSIONTREE_TOOLS_DIR:-$ROOT/.tools}/code-server
RUN=$ROOT/target/vscode-e2e
ART=$ROOT/target/artifacts
pass=0; fail=0; T0=$(date +%s)
CS_PID=; MS_PID=; REDIS_PID=
cleanup() {
  if [ -n "$CS_PID" ]; then kill "$CS_PID" 2>/dev/null; wait "$CS_PID" 2>/dev/null; fi
  if [ -n "$REDIS_PID" ]; then kill "$REDIS_PID" 2>/dev/null; wait "$REDIS_PID" 2>/dev/null; fi
  if [ -n "$MS_PID" ]; then kill "$MS_PID" 2>/dev/null; wait "$MS_PID" 2>/dev/null; fi
}
trap cleanup EXIT

step() { # step NAME CMD... — one pass/fail each; the log is shown on failure
  local name=$1; shift; local s; s=$(date +%s)
  if "$@" >"$RUN/log-$name.txt" 2>&1; then pass=$((pass + 1)); r=ok; else fail=$((fail + 1)); r=FAIL; fi
  printf '%-4s %4ss  %s\n' "$r" "$(( $(date +%s) - s ))" "$name"
  [ "$r" = ok ] || tail -30 "$RUN/log-$name.txt" | sed 's/^/      | /'
  [ "$r" = ok ]
}
finish() { echo "total $(( $(date +%s) - T0 ))s"; echo "vscode: $pass passed, $fail failed"; [ "$fail" = 0 ]; exit $?; }

rm -rf "$RUN"; mkdir -p "$RUN" "$ART"; rm -f "$ART"/vscode-*

if [ "${SKIP_INSTALL:-0}" != 1 ]; then
  step install bash "$ROOT/scripts/install-vscode-test.sh" || finish
fi

# ---------------------------------------------------------------- the live agent: pi, a model server, a home
# The real pi (scripts/install-agents.sh, cached) answers the chat against the tests' loopback model
# server, in a home folder of its own whose only model is that server; code-server (and so the
# extension host, the server and the agent) runs with that HOME.
step agents-install bash -c "bash '$ROOT/scripts/install-agents.sh' > '$RUN/agents-bin.txt'" || finish
AGENTS_BIN=$(tail -1 "$RUN/agents-bin.txt")
MODEL_RULES=$RUN/model-rules.json; MODEL_LOG=$RUN/model-requests.jsonl
echo '[]' > "$MODEL_RULES"
mkfifo "$RUN/model-in"
node "$ROOT/scripts/testing/model-server.mjs" --rules "$MODEL_RULES" --log "$MODEL_LOG" <"$RUN/model-in" >"$RUN/model-server.out" 2>&1 &
MS_PID=$!
exec 8>"$RUN/model-in"   # the model server ends when this script does (its input closes)
model_url() {
  for _ in $(seq 1 200); do
    [ -s "$RUN/model-server.out" ] && { node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8").split("\n")[0]).url)' "$RUN/model-server.out"; return 0; }
    sleep 0.1
  done
  return 1
}
MODEL_URL=$(model_url) || { echo "the model server did not start"; cat "$RUN/model-server.out"; fail=$((fail + 1)); finish; }
AGENT_HOME=$(node "$ROOT/scripts/testing/agent-home.mjs" --home "$RUN/home" --url "$MODEL_URL")
agent_env=(HOME="$AGENT_HOME" PI_OFFLINE=1 XDG_RUNTIME_DIR="$AGENT_HOME/run")
# A pi extension of the user's whose /ask command asks something (an agent's dialog) and whose
# /crash command stops pi with a line on stderr.
mkdir -p "$AGENT_HOME/.pi/agent/extensions"
cat > "$AGENT_HOME/.pi/agent/extensions/ask.ts" <<'TS'
export default function (pi: any) {
  pi.registerCommand("ask", {
    description: "Ask for a colour",
    handler: async (_args: string, ctx: any) => {
      const choice = await ctx.ui.select("Pick a colour", ["red", "green"]);
      ctx.ui.notify(`picked ${choice}`, "info");
    },
  });
  pi.registerCommand("crash", {
    description: "Stop pi with a message on stderr",
    handler: async () => {
      process.stderr.write("crash: the extension stops pi here\n");
      process.exit(3);
    },
  });
}
TS

# ---------------------------------------------------------------- server
if [ -n "${SESSIONTREE_BIN:-}" ]; then
  BIN=$SESSIONTREE_BIN
else
  step server-build cargo build -q -p sessiontree --manifest-path "$ROOT/Cargo.toml" || finish
  BIN=$ROOT/target/debug/sessiontree
fi

# ---------------------------------------------------------------- extension: static checks, unit tests, package
cd "$EXT" || exit 1
step typecheck npm run -s typecheck
step lint npm run -s lint
if npm run -s test:unit >"$RUN/log-unit.txt" 2>&1; then ur=0; else ur=1; fi
up=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$RUN/log-unit.txt"); uf=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$RUN/log-unit.txt")
[ -z "$up" ] && uf=1   # no summary line: the runner did not finish
up=${up:-0}; uf=${uf:-0}; [ "$ur" != 0 ] && [ "$uf" = 0 ] && uf=1
pass=$((pass + up)); fail=$((fail + uf))
printf '%-4s        unit tests: %s passed, %s failed\n' "$([ "$uf" = 0 ] && echo ok || echo FAIL)" "$up" "$uf"
[ "$uf" = 0 ] || grep -B2 -A12 '^not ok' "$RUN/log-unit.txt" | sed 's/^/      | /' | head -60
step package npm run -s package || finish
VSIX=$EXT/sessiontree.vsix

# ---------------------------------------------------------------- end to end in code-server
WS=$RUN/ws; UD=$RUN/ud; AGENT=$RUN/omp-agent
mkdir -p "$WS" "$UD/User" "$RUN/ext" "$RUN/xdg"
echo "# e2e workspace" > "$WS/README.md"
# omp keeps a project's sessions in <agent dir>/sessions/<folder name from the cwd> (discovery.rs).
enc=$(node -e '
  const [cwd, home, tmp] = process.argv.slice(1); const d = (s) => s.replace(/[\/\\:]/g, "-");
  if (home && cwd === home) console.log("-");
  else if (home && cwd.startsWith(home + "/")) console.log("-" + d(cwd.slice(home.length + 1)));
  else if (cwd.startsWith(tmp + "/")) console.log("-tmp-" + d(cwd.slice(tmp.length + 1)));
  else console.log("--" + d(cwd.replace(/^\//, "")) + "--");' "$WS" "$AGENT_HOME" "${TMPDIR:-/tmp}")
SESS_DIR=$AGENT/sessions/$enc; mkdir -p "$SESS_DIR"
SESSION=$SESS_DIR/2025-12-02T10-06-40-000Z_019ade4f-3c00-7000-8000-000000000002.jsonl
cp "$ROOT/examples/csv-importer.omp.jsonl" "$SESSION"
# The same conversation written by pi, where pi keeps this project's sessions (older: opens second).
PI_DIR=$RUN/pi-agent/sessions/--$(printf '%s' "${WS#/}" | tr '/\\:' '---')--; mkdir -p "$PI_DIR"
cp "$ROOT/examples/csv-importer.pi.jsonl" "$PI_DIR/2025-12-02T10-06-40-000Z_019ade4f-3c00-7000-8000-000000000001.jsonl"
# pi names it with a tab and a bell in the name (as a user may type them): drawn visibly, never raw.
PI_SESSION=$PI_DIR/2025-12-02T10-06-40-000Z_019ade4f-3c00-7000-8000-000000000001.jsonl
node -e '
  const fs = require("fs"); const file = process.argv[1];
  const lines = fs.readFileSync(file, "utf8").trimEnd().split("\n");
  const leaf = JSON.parse(lines[lines.length - 1]).id;
  fs.appendFileSync(file, JSON.stringify({ type: "session_info", id: "e2ename1", parentId: leaf,
    timestamp: "2025-12-02T10:20:00.000Z", name: "Quoted\tcommas\u0007 in pi" }) + "\n");' "$PI_SESSION"
touch -d '1 hour ago' "$PI_DIR"/*.jsonl
# A session pi writes itself ("first question"), for the live agent: older still, so it opens last.
(cd "$WS" && env "${agent_env[@]}" "$AGENTS_BIN/pi" --session-dir "$PI_DIR" -p "first question" </dev/null >"$RUN/pi-first.txt" 2>&1) \
  || { echo "pi could not write the first session:"; cat "$RUN/pi-first.txt"; }
PI_CHAT_SESSION=$(grep -l '"first question"' "$PI_DIR"/*.jsonl | head -1)
[ -n "$PI_CHAT_SESSION" ] && touch -d '3 hours ago' "$PI_CHAT_SESSION"
# A session omp writes itself ("first omp question"), for the live agent in an omp session: the oldest.
(cd "$WS" && env "${agent_env[@]}" "$AGENTS_BIN/omp" --session-dir "$SESS_DIR" -p "first omp question" </dev/null >"$RUN/omp-first.txt" 2>&1) \
  || { echo "omp could not write the first session:"; cat "$RUN/omp-first.txt"; }
OMP_CHAT_SESSION=$(grep -l '"first omp question"' "$SESS_DIR"/*.jsonl | head -1)
[ -n "$OMP_CHAT_SESSION" ] && touch -d '4 hours ago' "$OMP_CHAT_SESSION"
# A bigger, older session (2000 entries) for the windowed tree: older, so the example opens first.
"$BIN" generate --entries 2000 --seed 7 --out "$SESS_DIR/2025-01-01T00-00-00-000Z_synthetic.jsonl" >/dev/null
touch -d '2 hours ago' "$SESS_DIR/2025-01-01T00-00-00-000Z_synthetic.jsonl"

# A session omp keeps in Redis (docs/redis.md): a redis-server of the test's own (Debian's, as
# the Rust tests and Neovim's redis_spec start it; installed by scripts/install-test-deps.sh when
# missing) into which the real omp (its SessionManager with RedisSessionStorage, under Bun:
# scripts/testing/omp-redis.ts) writes one session of this project, then dated old so that it
# lists last. The user settings name the store; the check opens it, labels a row, has omp reload
# the label and append after it.
free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
REDIS_PORT=$(free_port); REDIS_SESSION=
export OMP_PACKAGE_DIR; OMP_PACKAGE_DIR="$(dirname "$AGENTS_BIN")/node_modules/@oh-my-pi/pi-coding-agent"
OMP_REDIS=("$AGENTS_BIN/bun" "$ROOT/scripts/testing/omp-redis.ts")
start_redis() {
  if ! command -v redis-server >/dev/null; then bash "$ROOT/scripts/install-test-deps.sh" || return 1; fi
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$RUN" >"$RUN/redis.log" 2>&1 &
  REDIS_PID=$!
  for _ in $(seq 1 100); do redis-cli -p "$REDIS_PORT" PING >/dev/null 2>&1 && break; sleep 0.1; done
  redis-cli -p "$REDIS_PORT" PING || return 1
  printf '%s' '{"ops": [{"op": "user", "text": "Where does the team keep its sessions?"}, {"op": "assistant", "text": "In the shared Redis store."}]}' > "$RUN/redis-scenario.json"
  "${OMP_REDIS[@]}" write "redis://127.0.0.1:$REDIS_PORT" omp:sessions: "$RUN/redis-scenario.json" "$AGENT_HOME/.omp/agent/sessions/$enc" "$WS" > "$RUN/redis-written.json" || return 1
  REDIS_SESSION=$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).sessionFile' "$RUN/redis-written.json")
  echo "omp wrote $REDIS_SESSION"
  redis-cli -p "$REDIS_PORT" HSET omp:sessions:meta "$REDIS_SESSION" 1748736002000
}
step redis-start start_redis || finish

PORT=$(free_port)
printf 'bind-addr: 127.0.0.1:%s\nauth: none\ncert: false\n' "$PORT" > "$RUN/config.yaml"
node -e '
  const [file, bin, agent, pi, omp, redisPort] = process.argv.slice(1);
  require("fs").writeFileSync(file, JSON.stringify({
    "workbench.startupEditor": "none", "workbench.tips.enabled": false, "workbench.enableExperiments": false,
    "extensions.autoCheckUpdates": false, "extensions.autoUpdate": false, "extensions.ignoreRecommendations": true,
    "telemetry.telemetryLevel": "off", "update.mode": "none", "security.workspace.trust.enabled": false,
    "chat.disableAIFeatures": true, "workbench.secondarySideBar.defaultVisibility": "hidden",
    "git.enabled": false, "git.openRepositoryInParentFolders": "never", "terminal.integrated.sendKeybindingsToShell": false,
    "sessiontree.serverPath": bin, "sessiontree.maxRows": 300, "sessiontree.ompAgentDir": agent, "sessiontree.piAgentDir": agent.replace(/omp-agent$/, "pi-agent"),
    "sessiontree.agent.piPath": pi, "sessiontree.agent.ompPath": omp,
    "sessiontree.stores": [{ url: `redis://127.0.0.1:${redisPort}` }],
  }, null, 2));' "$UD/User/settings.json" "$BIN" "$AGENT" "$AGENTS_BIN/pi" "$RUN/no-such-omp" "$REDIS_PORT"
export XDG_CONFIG_HOME=$RUN/xdg XDG_DATA_HOME=$RUN/xdg XDG_CACHE_HOME=$RUN/xdg
export SESSIONTREE_TEST_STATE=$RUN/state.json RUST_LOG=${RUST_LOG:-info}
export SESSIONTREE_TEST_HOOK_DELAY_MS=2500   # beforeTree answered like a slow model (cancel test)
CS=$TOOLS/bin/code-server
common=(--config "$RUN/config.yaml" --user-data-dir "$UD" --extensions-dir "$RUN/ext")
step install-vsix "$CS" "${common[@]}" --install-extension "$VSIX" || finish
start_cs() {
  env "${agent_env[@]}" "$CS" "${common[@]}" --disable-telemetry --disable-update-check --disable-workspace-trust \
    --disable-getting-started-override "$WS" >"$RUN/code-server.log" 2>&1 &
  CS_PID=$!
  for _ in $(seq 1 300); do
    curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && return 0
    kill -0 "$CS_PID" 2>/dev/null || break
    sleep 0.1
  done
  cat "$RUN/code-server.log"; return 1
}
step code-server-start start_cs || finish

e2e_start=$(date +%s)
SETTINGS_FILE=$UD/User/settings.json PLAYWRIGHT_DIR=$TOOLS MODEL_RULES=$MODEL_RULES MODEL_LOG=$MODEL_LOG \
  PI_CHAT_SESSION=$PI_CHAT_SESSION E2E_WORKSPACE=$WS E2E_PI_AGENT_DIR=$RUN/pi-agent \
  OMP_CHAT_SESSION=$OMP_CHAT_SESSION E2E_OMP_PATH=$AGENTS_BIN/omp \
  E2E_REDIS_PORT=$REDIS_PORT E2E_REDIS_SESSION=$REDIS_SESSION E2E_BUN=$AGENTS_BIN/bun E2E_OMP_REDIS=$ROOT/scripts/testing/omp-redis.ts timeout 900 node "$EXT/test/e2e/drive.mjs" "http://127.0.0.1:$PORT/?folder=$WS" \
  "$RUN/state.json" "$SESSION" "$ART" 2>&1 | tee "$RUN/log-e2e.txt"
ep=$(sed -n 's/^e2e: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p' "$RUN/log-e2e.txt")
ef=$(sed -n 's/^e2e: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p' "$RUN/log-e2e.txt")
[ -z "$ep" ] && { ep=0; ef=1; echo "FAIL e2e driver did not finish"; }
pass=$((pass + ep)); fail=$((fail + ef))
echo "e2e took $(( $(date +%s) - e2e_start ))s; screenshot $ART/vscode-panel.png; logs in $RUN"
finish
