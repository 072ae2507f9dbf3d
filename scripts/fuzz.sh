#!/usr/bin/env bash
# Fuzzing the engine and the protocol's decoding (cargo-fuzz, libFuzzer).
#
#   scripts/fuzz.sh ci           CI: every target for $FUZZ_CI_SECONDS (default 10) from the committed
#                                seeds, in a scratch corpus; fails on a crash (scripts/test.sh runs it)
#   scripts/fuzz.sh              every target for $FUZZ_SECONDS (default 30), growing the local corpus
#   scripts/fuzz.sh load 600     one target for 10 minutes
#   scripts/fuzz.sh cmin         reduce the local corpus of every target into the committed seeds
#   scripts/fuzz.sh long [target...]
#                                the long campaign (not in CI), resumable: each target, one after
#                                another at nice 19, from its kept corpus until the ledger
#                                docs/fuzz-campaign.tsv holds $FUZZ_LONG_RUNS executions for it
#                                (default 10^7); every run adds a line to the ledger (executions,
#                                time, rate, CPU per execution, coverage, corpus, result).
#                                FUZZ_LONG_SECONDS caps each target's run; SIGINT/SIGTERM stops
#                                the running target cleanly (recorded as stopped). libFuzzer's log
#                                of each run: target/fuzz-long/<target>.log
#
# Targets (fuzz_targets/ of each fuzz folder):
#   load    arbitrary bytes as a session file: reader, migrations, index, context, row renderer
#   params  arbitrary JSON as what the server decodes: every request's params (and the client's
#           answers to the server's requests), initialization options, client capabilities
#   rows    the row renderer on generated trees of every entry kind (odd ids and parents included)
#           under arbitrary view states: every view of TreeModel, cross-checked
#   (those three in server/core/fuzz)
#   frames  the client's byte stream through the frame checker in front of the LSP library
#           (server/frames/fuzz): the same events however the bytes are cut, only messages the
#           library decodes passed on, every answer a JSON-RPC error with id null, and after junk
#           between frames every framed message found again
#
# Runs on the stable toolchain: without a sanitizer (`--sanitizer none`) cargo-fuzz passes no
# nightly flag. The engine has no `unsafe`; FUZZ_SANITIZER=address turns AddressSanitizer on (it
# needs RUSTC_BOOTSTRAP=1 on stable, set here then). cargo-fuzz is installed at a pinned version.
#
# The committed seeds (<folder>/fuzz/seeds/<target>, kept small with `cmin`) start every run;
# long runs grow <folder>/fuzz/corpus/<target> (not committed). Crashes land in
# <folder>/fuzz/artifacts/<target>: turn each into a regression test
# (server/core/tests/fuzz_regressions.rs for the engine's) and a fix. The session file a `rows`
# input drew: `FUZZ_ROWS_DUMP=/tmp/s.jsonl cargo fuzz run --sanitizer none rows <artifact>` in
# server/core.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

CARGO_FUZZ_VERSION=0.13.2
TARGETS="load params rows frames"

# The crate folder whose fuzz/ holds a target.
folder() {
  case $1 in
  frames) echo "$root/server/frames" ;;
  *) echo "$root/server/core" ;;
  esac
}

# libfuzzer-sys builds libFuzzer's C++ sources.
if ! command -v c++ >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "# installing a C++ compiler (apt)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends g++ >/dev/null
  else
    echo "fuzz: a C++ compiler (c++) is needed to build libFuzzer" >&2
    exit 1
  fi
fi
if [ "$(cargo fuzz --version 2>/dev/null)" != "cargo-fuzz $CARGO_FUZZ_VERSION" ]; then
  echo "# installing cargo-fuzz $CARGO_FUZZ_VERSION"
  cargo install cargo-fuzz --locked --version "$CARGO_FUZZ_VERSION" --quiet
fi

sanitizer=${FUZZ_SANITIZER:-none}
if [ "$sanitizer" != none ]; then
  export RUSTC_BOOTSTRAP=1
fi
# The build every mode uses (the ledger names it).
BUILD_FLAGS=(--sanitizer "$sanitizer")
BUILD_NAME="sanitizer=$sanitizer"
# The long campaign's build: without comparison tracing (-sanitizer-coverage-trace-compares), in
# a target folder of its own so CI's build stays as it is. Comparison tracing only feeds
# libFuzzer's mutation hints (it changes no check of any target) and took half of each
# execution's time; the campaign's corpus already holds the values those hints find, so the
# campaign gains more from running each input about twice as fast.
LONG_DIR="$root/target/fuzz-ntc"
LONG_FLAGS=("${BUILD_FLAGS[@]}" --no-trace-compares --target-dir "$LONG_DIR")
LONG_NAME="$BUILD_NAME,no-trace-compares"
fuzz() { cargo fuzz "$@"; }

# The long campaign's ledger: one line per run (committed, so a campaign adds up across runs).
LEDGER=${FUZZ_LEDGER:-$root/docs/fuzz-campaign.tsv}
ledger_header() {
  [ -s "$LEDGER" ] && return
  printf 'started\ttarget\tcommit\tbuild\texecutions\tseconds\tper_second\tcpu_seconds\tcpu_us_per_execution\tcoverage\tcorpus\tresult\n' >"$LEDGER"
}
# Executions the ledger holds for a target, and in how many runs.
ledger_total() { awk -F'\t' -v t="$1" 'NR > 1 && $2 == t { s += $5 } END { print s + 0 }' "$LEDGER"; }
ledger_runs() { awk -F'\t' -v t="$1" 'NR > 1 && $2 == t { n++ } END { print n + 0 }' "$LEDGER"; }
# Sets the variable named $1 to the CPU seconds (user + system) of this shell's finished
# children. `times` must run in this shell: in a subshell it would count that subshell's children.
children_cpu() {
  local f
  f=$(mktemp)
  times >"$f"
  printf -v "$1" '%s' "$(tail -n 1 "$f" | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } printf "%.3f", t }')"
  rm -f "$f"
}
# libFuzzer flags for every run: inputs up to 64 KB, 2 GB of memory, 30 s per input at most.
LIMITS=(-max_len=65536 -rss_limit_mb=2048 -timeout=30)

# The local corpus starts from the committed seeds, and for `load` from the conformance sessions.
# Runs in the target's crate folder.
seed_corpus() {
  local target=$1
  mkdir -p "fuzz/corpus/$target"
  if [ -z "$(ls -A "fuzz/corpus/$target")" ]; then
    cp fuzz/seeds/"$target"/* "fuzz/corpus/$target/" 2>/dev/null || true
    if [ "$target" = load ]; then
      local shared=${SESSIONTREE_SHARED:-$root/../shared} i=0 f
      for f in "$shared"/conformance/*/*/session.jsonl "$shared"/conformance/*/input.jsonl; do
        [ -f "$f" ] || continue
        cp "$f" "fuzz/corpus/load/conformance$i"
        i=$((i + 1))
      done
    fi
  fi
}

# The fuzz folders of some targets, each once.
folders() {
  local target
  for target in "$@"; do folder "$target"; done | awk '!seen[$0]++'
}

case "${1:-}" in
ci)
  seconds=${FUZZ_CI_SECONDS:-10}
  echo "# building the fuzz targets"
  for dir in $(folders $TARGETS); do
    (cd "$dir" && fuzz build "${BUILD_FLAGS[@]}")
  done
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  for target in $TARGETS; do
    cd "$(folder "$target")"
    mkdir -p "$scratch/$target"
    echo "# fuzz $target for ${seconds}s from $(ls fuzz/seeds/"$target" | wc -l) seeds"
    # New inputs go to the scratch folder (first), the seeds are only read. Ends after $seconds or
    # 2 million runs, whichever comes first; a crash exits non-zero and leaves the input in
    # fuzz/artifacts/<target>.
    log="$scratch/$target.log"
    if fuzz run "${BUILD_FLAGS[@]}" "$target" "$scratch/$target" "fuzz/seeds/$target" -- \
      -max_total_time="$seconds" -runs=2000000 "${LIMITS[@]}" -print_final_stats=1 >"$log" 2>&1; then
      grep -E '^(#[0-9]+ +DONE|Done [0-9]+ runs)' "$log" || true
    else
      tail -n 80 "$log"
      echo "fuzz $target: crash or error (the input is above and in $PWD/fuzz/artifacts/$target)" >&2
      exit 1
    fi
  done
  ;;
cmin)
  # The seeds: the local corpus and the current seeds (inputs under 2 KB for `load`, whose corpus
  # holds whole sessions, under 16 KB for the others), reduced to a smallest set covering every
  # edge they cover (hit counts ignored), so the committed seeds stay a few hundred KB.
  for target in ${2:-$TARGETS}; do
    cd "$(folder "$target")"
    seed_corpus "$target"
    limit=16385c
    [ "$target" = load ] && limit=2049c
    pool=$(mktemp -d)
    find "fuzz/corpus/$target" "fuzz/seeds/$target" -type f -size "-$limit" -exec cp {} "$pool/" \; 2>/dev/null || true
    fuzz cmin "${BUILD_FLAGS[@]}" "$target" "$pool" -- -use_counters=0 -set_cover_merge=1
    rm -rf "fuzz/seeds/$target"
    mkdir -p "fuzz/seeds/$target"
    cp "$pool"/* "fuzz/seeds/$target/"
    rm -rf "$pool"
    echo "# $target: $(ls "fuzz/seeds/$target" | wc -l) seeds, $(cat "fuzz/seeds/$target"/* | wc -c) bytes"
  done
  ;;
long)
  # The long campaign, resumable: each target, one after another, from its kept corpus until the
  # executions the ledger records for it reach $FUZZ_LONG_RUNS; each run, finished or not, adds
  # one line to the ledger. FUZZ_LONG_SECONDS caps each target's run this time; SIGINT or SIGTERM
  # to this script stops the running fuzzer cleanly (its line says "stopped") and ends the campaign.
  shift
  goal=${FUZZ_LONG_RUNS:-10000000}
  logs="$root/target/fuzz-long"
  mkdir -p "$logs"
  ledger_header
  commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo "?")
  triple=$(rustc -vV | sed -n 's/^host: //p')
  failed=0
  stop=0
  trap 'stop=1; [ -n "${pid:-}" ] && kill -INT "$pid" 2>/dev/null' INT TERM
  for target in ${*:-$TARGETS}; do
    [ "$stop" = 0 ] || break
    cd "$(folder "$target")"
    done_runs=$(ledger_total "$target")
    runs=$((goal - done_runs))
    if [ "$runs" -le 0 ]; then
      echo "# $target: $done_runs executions in the ledger, the goal ($goal) is reached"
      continue
    fi
    seed_corpus "$target"
    mkdir -p "fuzz/artifacts/$target"
    fuzz build "${LONG_FLAGS[@]}" "$target"
    bin="$LONG_DIR/$triple/release/$target"
    log="$logs/$target.log"
    corpus_before=$(ls "fuzz/corpus/$target" | wc -l)
    budget=()
    [ -n "${FUZZ_LONG_SECONDS:-}" ] && budget=(-max_total_time="$FUZZ_LONG_SECONDS")
    echo "# fuzz $target: $done_runs executions in the ledger, $runs to go (log: $log)"
    children_cpu cpu_before
    started=$(date +%s)
    started_at=$(date -u +%FT%TZ)
    # The fuzzer itself (not cargo) at the lowest priority, so a signal reaches it and it
    # prints its final statistics; new inputs go to the kept corpus (first folder).
    nice -n "${FUZZ_NICE:-19}" "$bin" "fuzz/corpus/$target" "fuzz/seeds/$target" \
      -runs="$runs" "${budget[@]}" "${LIMITS[@]}" -print_final_stats=1 \
      -artifact_prefix="fuzz/artifacts/$target/" >"$log" 2>&1 &
    pid=$!
    status=0
    while :; do
      wait "$pid" && status=0 || status=$?
      kill -0 "$pid" 2>/dev/null || break
    done
    pid=
    seconds=$(($(date +%s) - started))
    children_cpu cpu_after
    cpu=$(awk -v a="$cpu_before" -v b="$cpu_after" 'BEGIN { printf "%.1f", b - a }')
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    if [ -z "$executions" ]; then
      # No final statistics (a crash): the last status line counts.
      executions=$(sed -n 's/^#\([0-9][0-9]*\).*/\1/p' "$log" | tail -n 1)
    fi
    executions=${executions:-0}
    coverage=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -n 1 | awk '{ print $2 "/" $4 }')
    corpus_after=$(ls "fuzz/corpus/$target" | wc -l)
    if grep -q 'libFuzzer: run interrupted' "$log"; then
      verdict="stopped (signal), no crash"
    elif grep -q '^Done [0-9]* runs' "$log" && [ "$status" = 0 ]; then
      if [ "$executions" -ge "$runs" ]; then verdict="done, no crash"; else verdict="stopped (time budget), no crash"; fi
    else
      unit=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
      verdict="CRASH (exit $status) ${unit:-see $log}"
      failed=1
    fi
    rate=$(awk -v e="$executions" -v s="$seconds" 'BEGIN { printf "%.0f", (s > 0 ? e / s : 0) }')
    per_exec=$(awk -v e="$executions" -v c="$cpu" 'BEGIN { printf "%.0f", (e > 0 ? c * 1e6 / e : 0) }')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$started_at" "$target" "$commit" \
      "$LONG_NAME" "$executions" "$seconds" "$rate" "$cpu" "$per_exec" "${coverage:-?}" \
      "$corpus_before>$corpus_after" "$verdict" >>"$LEDGER"
    echo "# $target: $executions executions in ${seconds}s ($rate/s, ${per_exec} µs CPU each), $verdict;" \
      "$(ledger_total "$target") of $goal in the ledger over $(ledger_runs "$target") runs"
  done
  exit $failed
  ;;
*)
  targets=${1:-$TARGETS}
  seconds=${2:-${FUZZ_SECONDS:-30}}
  for target in $targets; do
    cd "$(folder "$target")"
    seed_corpus "$target"
    echo "# fuzz $target for ${seconds}s"
    fuzz run "${BUILD_FLAGS[@]}" "$target" "fuzz/corpus/$target" -- \
      -max_total_time="$seconds" "${LIMITS[@]}" -print_final_stats=1
  done
  ;;
esac
