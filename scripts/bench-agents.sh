#!/usr/bin/env bash
# Side by side with the agents (issue 8, deliverable 3): installs the agents' npm packages into a
# temporary folder, runs the harness's operations with their own session code on the harness's
# generated files, and prints agent / sessiontree / ratio per operation, size and dialect.
#
#   scripts/bench-agents.sh [--sizes 1k,10k] [--dialects pi,omp] [--runs 5] [--seed 1]
#                           [--ours target/bench.json] [--json target/bench-agents.json]
#                           [--markdown target/bench-agents.md] [--run-ours]
#                           [--install-dir DIR] [--reuse target/bench-agents.json]
#
#   --ours A[,B]    our harness --json file(s); each size and dialect from the first that has it
#   --run-ours      run the Rust harness first (same sizes, dialects, runs) into the first --ours
#   --install-dir   install (or reuse an install) there instead of a new temporary folder
#   --reuse FILE    skip the agents: print the table from FILE (an earlier --json) and --ours
#
# Optional: not part of the test suite. Needs node >= 20.6 and npm; Bun comes from npm. See
# docs/performance-agents.md. Figures are noisy on a shared machine: `nice` it if others build.
set -euo pipefail

# The versions measured (pinned). omp 18.3.4's sibling packages are not all published, so omp is
# the newest release whose whole dependency set resolves from the registry.
PI_PACKAGE="@mariozechner/pi-coding-agent"
PI_VERSION="0.73.1"
OMP_PACKAGE="@oh-my-pi/pi-coding-agent"
OMP_VERSION="18.2.3"
BUN_VERSION="1.4.5"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SIZES="1k,10k"
DIALECTS="pi,omp"
RUNS="5"
SEED="1"
OURS="target/bench.json"
JSON_OUT="target/bench-agents.json"
MARKDOWN=""
RUN_OURS=0
INSTALL_DIR=""
REUSE=""

die() { echo "bench-agents: $*" >&2; exit 2; }
say() { echo "bench-agents: $*" >&2; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        --sizes) SIZES="${2:?--sizes needs a value}"; shift 2 ;;
        --dialects) DIALECTS="${2:?--dialects needs a value}"; shift 2 ;;
        --runs) RUNS="${2:?--runs needs a value}"; shift 2 ;;
        --seed) SEED="${2:?--seed needs a value}"; shift 2 ;;
        --ours) OURS="${2:?--ours needs a value}"; shift 2 ;;
        --json) JSON_OUT="${2:?--json needs a value}"; shift 2 ;;
        --markdown) MARKDOWN="${2:?--markdown needs a value}"; shift 2 ;;
        --run-ours) RUN_OURS=1; shift ;;
        --install-dir) INSTALL_DIR="${2:?--install-dir needs a value}"; shift 2 ;;
        --reuse) REUSE="${2:?--reuse needs a value}"; shift 2 ;;
        -h|--help) sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
done
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive integer, got '$RUNS'"

command -v node >/dev/null || die "node is not installed (needed: node >= 20.6 and npm)"
command -v npm >/dev/null || die "npm is not installed"
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=6)?0:1)' \
    || die "node $(node --version) is too old: pi ${PI_VERSION} needs node >= 20.6"

cd "$ROOT"

if [[ "$RUN_OURS" == 1 ]]; then
    FIRST_OURS="${OURS%%,*}"
    say "running the sessiontree harness (sizes $SIZES, dialects $DIALECTS, $RUNS runs) into $FIRST_OURS"
    cargo bench -p sessiontree --bench harness -- --sizes "$SIZES" --dialects "$DIALECTS" \
        --runs "$RUNS" --seed "$SEED" --json "$FIRST_OURS" \
        || die "the sessiontree harness failed (cargo bench -p sessiontree --bench harness)"
fi

COMPARE=(node "$ROOT/bench/agents/compare.mjs" --root "$ROOT" --sizes "$SIZES" --dialects "$DIALECTS"
    --runs "$RUNS" --seed "$SEED" --ours "$OURS")
[[ -n "$MARKDOWN" ]] && COMPARE+=(--markdown "$MARKDOWN")

if [[ -n "$REUSE" ]]; then
    exec "${COMPARE[@]}" --reuse "$REUSE"
fi

# The temporary folder: agents' installs (pi/, omp/), scratch copies and a private HOME (work/).
if [[ -n "$INSTALL_DIR" ]]; then
    mkdir -p "$INSTALL_DIR"
    TMP="$(cd "$INSTALL_DIR" && pwd)"
    KEEP=1
else
    TMP="$(mktemp -d "${TMPDIR:-/tmp}/sessiontree-bench-agents.XXXXXX")"
    KEEP=0
fi
cleanup() {
    rm -rf "$TMP/work"
    if [[ "$KEEP" == 0 ]]; then rm -rf "$TMP"; fi
}
trap cleanup EXIT
say "temporary folder: $TMP"

# install NAME PACKAGE_JSON: npm install into $TMP/NAME unless the same package.json is installed.
install() {
    local name="$1" manifest="$2" dir="$TMP/$1"
    mkdir -p "$dir"
    if [[ -f "$dir/package.json" && -d "$dir/node_modules" ]] && [[ "$(cat "$dir/package.json")" == "$manifest" ]]; then
        say "$name: already installed in $dir"
    else
        say "$name: npm install in $dir (a minute or two)…"
        rm -rf "$dir/node_modules" "$dir/package-lock.json"
        printf '%s' "$manifest" > "$dir/package.json"
        if ! (cd "$dir" && npm install --no-audit --no-fund --loglevel=error >"$dir/npm-install.log" 2>&1); then
            tail -n 20 "$dir/npm-install.log" >&2 || true
            rm -f "$dir/package.json"
            die "npm install of $name failed (log above; full log: $dir/npm-install.log)"
        fi
    fi
    cp "$ROOT/bench/agents/probe.mjs" "$dir/probe.mjs"
}

need_pi=0; need_omp=0
[[ ",$DIALECTS," == *",pi,"* ]] && need_pi=1
[[ ",$DIALECTS," == *",omp,"* ]] && need_omp=1

if [[ "$need_pi" == 1 ]]; then
    install pi "{\"private\":true,\"type\":\"module\",\"dependencies\":{\"$PI_PACKAGE\":\"$PI_VERSION\"}}"
fi
if [[ "$need_omp" == 1 ]]; then
    install omp "{\"private\":true,\"type\":\"module\",\"dependencies\":{\"$OMP_PACKAGE\":\"$OMP_VERSION\",\"bun\":\"$BUN_VERSION\"}}"
    BUN="$TMP/omp/node_modules/.bin/bun"
    [[ -x "$BUN" ]] || die "the bun package did not install a bun binary at $BUN"
    got="$("$BUN" --version 2>&1)" || die "bun from npm does not run: $got"
    [[ "$got" == "$BUN_VERSION" ]] || die "bun reports version '$got', expected $BUN_VERSION"
fi

say "measuring (runs: $RUNS; open in a fresh process per run)…"
"${COMPARE[@]}" --install "$TMP" --work "$TMP/work" --json "$JSON_OUT"
