#!/usr/bin/env bash
# Runs the official MCP conformance suite's client scenarios (every one, `auth/*` included, or
# the ones named) against the built toolport binary, judged against the baseline of known failures.
#
#   tests/conformance/run.sh [SCENARIO...]
#
# Environment: TOOLPORT_BIN (default <target>/debug/toolport), CARGO_TARGET_DIR,
# CONFORMANCE_JOBS (scenarios run at once, default 4), CONFORMANCE_OUT (where results go;
# default a temporary folder, kept and printed when something fails).
#
# Exit 0 only when every failure is listed in expected-failures.yml AND every listed failure
# still fails: a fixed scenario must leave the baseline in the same change.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target="${CARGO_TARGET_DIR:-$here/../../target}"
bin="${TOOLPORT_BIN:-$target/debug/toolport}"
jobs="${CONFORMANCE_JOBS:-4}"
baseline="$here/expected-failures.yml"

[[ -x "$bin" ]] || { echo "run.sh: $bin is missing: build it first (cargo build -p toolport)" >&2; exit 1; }
suite_dir="$(bash "$here/install.sh" "$target")"
node="$suite_dir/bin/node"
suite="$suite_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"

if (( $# > 0 )); then
  scenarios=("$@")
else
  # The client scenarios as the suite lists them (`  - name [revisions]`).
  mapfile -t scenarios < <("$node" "$suite" list 2>/dev/null \
    | sed -n '/^Client scenarios/,/^$/p' | sed -n 's/^  - \([^ ]*\).*/\1/p')
fi
(( ${#scenarios[@]} > 0 )) || { echo "run.sh: the suite listed no client scenarios" >&2; exit 1; }

out="${CONFORMANCE_OUT:-$(mktemp -d)}"
mkdir -p "$out/logs"
export TOOLPORT_BIN="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")" CONFORMANCE_NODE="$node"

# One scenario: the suite's own verdict against the baseline is its exit status.
run_one() {
  local scenario="$1" log="$out/logs/${1//\//_}.log"
  if "$node" "$suite" client --command "$here/adapter.sh" --scenario "$scenario" \
      --expected-failures "$baseline" -o "$out/results" >"$log" 2>&1; then
    if grep -Eq "^ *- *['\"]?$scenario(['\"]|:|\$| )" "$baseline"; then
      echo "ok   $scenario (fails as the baseline expects)"
    else
      echo "ok   $scenario"
    fi
  else
    echo "FAIL $scenario"
  fi
}
export -f run_one
export node suite here baseline out

started=$SECONDS
results="$(printf '%s\n' "${scenarios[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one "$1"' _ {})"
printf '%s\n' "$results" | sort -k2
echo "${#scenarios[@]} scenarios in $((SECONDS - started)) s (results in $out)"

if grep -q '^FAIL' <<<"$results"; then
  for scenario in $(sed -n 's/^FAIL //p' <<<"$results"); do
    echo
    echo "=== $scenario"
    cat "$out/logs/${scenario//\//_}.log"
  done
  exit 1
fi
