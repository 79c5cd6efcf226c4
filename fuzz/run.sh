#!/usr/bin/env bash
# Runs every fuzz target for SECONDS (default 600), two at a time, from the binaries
# `cargo +1.95.0 fuzz build -s none` left in fuzz/target, and prints one summary line each.
# Corpora grow in fuzz/corpus/<target> (git-ignored), seeded from fuzz/seeds/<target>; crashes
# land in fuzz/artifacts/<target>/. Running the binaries directly (not `cargo fuzz run`) keeps a
# run from rebuilding toolport when its sources changed since the build.
#
#   fuzz/run.sh [SECONDS] [TARGET…]
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="$here/target/x86_64-unknown-linux-gnu/release"
seconds="${1:-600}"
shift || true
targets=("$@")
(( ${#targets[@]} )) || targets=(global_store workspace_file mcp_line expand_vars acp_messages)
logs="$here/target/run-logs"
mkdir -p "$logs"

run_one() {
  local t="$1"
  mkdir -p "$here/corpus/$t" "$here/artifacts/$t"
  local started=$SECONDS
  "$bin/$t" "$here/corpus/$t" "$here/seeds/$t" -max_total_time="$seconds" -rss_limit_mb=2048 \
    -artifact_prefix="$here/artifacts/$t/" >"$logs/$t.log" 2>&1
  local rc=$?
  local done_line
  done_line="$(grep -E '^#[0-9]+[[:space:]]+DONE' "$logs/$t.log" | tail -n1)"
  local runs
  runs="$(grep -E '^Done [0-9]+ runs' "$logs/$t.log" | tail -n1)"
  echo "$t: exit $rc after $((SECONDS - started)) s; ${runs:-no summary}; ${done_line:-see $logs/$t.log}"
}

for ((i = 0; i < ${#targets[@]}; i += 2)); do
  run_one "${targets[i]}" &
  if (( i + 1 < ${#targets[@]} )); then run_one "${targets[i + 1]}" & fi
  wait
done
