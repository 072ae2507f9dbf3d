#!/usr/bin/env bash
# Fuzzing the engine (not part of the default test run).
#
#   scripts/fuzz.sh            install cargo-fuzz if needed, run every target for $FUZZ_SECONDS (default 30)
#   scripts/fuzz.sh load 600   run one target for 10 minutes
#
# Targets (server/core/fuzz/fuzz_targets/):
#   load    arbitrary bytes as a session file: reader, migrations, index, context, row renderer
#   params  arbitrary JSON as the params of every client request (protocol decoding)
#
# Needs a nightly toolchain (`rustup toolchain install nightly`). The corpus grows in
# server/core/fuzz/corpus/<target>; crashes land in server/core/fuzz/artifacts/<target> — turn each
# into a regression test (server/core/tests/properties.rs or the module's unit tests).
set -euo pipefail
cd "$(dirname "$0")/../server/core"
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi
seconds=${2:-${FUZZ_SECONDS:-30}}
targets=${1:-"load params"}
for target in $targets; do
  mkdir -p "fuzz/corpus/$target"
  if [ "$target" = load ] && [ -z "$(ls -A fuzz/corpus/load)" ]; then
    # Seed with the conformance sessions when they are at hand.
    shared=${SESSIONTREE_SHARED:-../../../shared}
    i=0
    for f in "$shared"/conformance/*/*/session.jsonl "$shared"/conformance/*/input.jsonl; do
      [ -f "$f" ] || continue
      cp "$f" "fuzz/corpus/load/seed$i"; i=$((i + 1))
    done
  fi
  echo "# fuzz $target for ${seconds}s"
  cargo +nightly fuzz run "$target" "fuzz/corpus/$target" -- -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048
done
