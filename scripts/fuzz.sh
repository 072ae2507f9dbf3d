#!/usr/bin/env bash
# Fuzzing the engine and the protocol's decoding (cargo-fuzz, libFuzzer).
#
#   scripts/fuzz.sh ci           CI: every target for $FUZZ_CI_SECONDS (default 10) from the committed
#                                seeds, in a scratch corpus; fails on a crash (scripts/test.sh runs it)
#   scripts/fuzz.sh              every target for $FUZZ_SECONDS (default 30), growing the local corpus
#   scripts/fuzz.sh load 600     one target for 10 minutes
#   scripts/fuzz.sh cmin         reduce the local corpus of every target into the committed seeds
#   scripts/fuzz.sh long [target...]
#                                the long campaign (not in CI): each target, one after another,
#                                for $FUZZ_LONG_RUNS executions (default 10^7), growing the local
#                                corpus; each target's figures go to target/fuzz-long/<target>.log
#                                and a summary line to target/fuzz-long/summary.txt
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
fuzz() { cargo fuzz "$@"; }
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
    (cd "$dir" && fuzz build --sanitizer "$sanitizer")
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
    if fuzz run --sanitizer "$sanitizer" "$target" "$scratch/$target" "fuzz/seeds/$target" -- \
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
    fuzz cmin --sanitizer "$sanitizer" "$target" "$pool" -- -use_counters=0 -set_cover_merge=1
    rm -rf "fuzz/seeds/$target"
    mkdir -p "fuzz/seeds/$target"
    cp "$pool"/* "fuzz/seeds/$target/"
    rm -rf "$pool"
    echo "# $target: $(ls "fuzz/seeds/$target" | wc -l) seeds, $(cat "fuzz/seeds/$target"/* | wc -c) bytes"
  done
  ;;
long)
  # Each target for $FUZZ_LONG_RUNS executions, one after another (niced: the machine is shared).
  # A crash ends that target's run (its input is in fuzz/artifacts/<target>) and the next starts.
  shift
  runs=${FUZZ_LONG_RUNS:-10000000}
  logs="$root/target/fuzz-long"
  mkdir -p "$logs"
  failed=0
  for target in ${*:-$TARGETS}; do
    cd "$(folder "$target")"
    seed_corpus "$target"
    fuzz build --sanitizer "$sanitizer" "$target"
    log="$logs/$target.log"
    echo "# fuzz $target for $runs executions (log: $log)"
    started=$(date +%s)
    status=0
    nice -n 10 cargo fuzz run --sanitizer "$sanitizer" "$target" "fuzz/corpus/$target" "fuzz/seeds/$target" -- \
      -runs="$runs" "${LIMITS[@]}" -print_final_stats=1 >"$log" 2>&1 || status=$?
    seconds=$(($(date +%s) - started))
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    per_second=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -n 1)
    corpus=$(ls "fuzz/corpus/$target" | wc -l)
    verdict=ok
    if grep -q 'libFuzzer: run interrupted' "$log"; then
      # Stopped by hand (SIGINT to the fuzzer): no finding, fewer executions than asked.
      verdict="stopped before $runs executions, no crash"
    elif [ "$status" != 0 ]; then
      verdict="crash or error (exit $status; see the log and fuzz/artifacts/$target)"
      failed=1
    fi
    line="$(date -u +%FT%TZ) $target: ${executions:-?} executions in ${seconds}s (${per_second:-?}/s), peak RSS ${rss:-?} MB, corpus $corpus inputs: $verdict"
    echo "$line" | tee -a "$logs/summary.txt"
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
    fuzz run --sanitizer "$sanitizer" "$target" "fuzz/corpus/$target" -- \
      -max_total_time="$seconds" "${LIMITS[@]}" -print_final_stats=1
  done
  ;;
esac
