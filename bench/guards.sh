#!/usr/bin/env bash
# The cost of a guard a call (issue 48, item 6): one pass-through guard plugin
# (fixture_guard_pass, both hooks) and a chain of three, against no guard, through one
# long-lived `toolport serve` over stdio driven by the Python SDK client, calling demo-server's
# `echo`. Wall time and serve's own CPU per call, warm-up left out, rows interleaved over
# --rounds, added cost and ratios paired by round (bench/guards.py does the measuring). Run on
# an idle machine (about a minute with the defaults: --rounds 9 --calls 3000 --warm 300). Not
# run in CI.
#
#   bench/guards.sh [--no-build] [--calls N] [--warm N] [--rounds N] [--perf FILE]
#   TOOLPORT=/path/to/toolport bench/guards.sh --no-build      (measure another build)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/prelude.sh"

# The release build of the binary builds the guest components too, under target/plugins.
plugins="$target/plugins/wasm32-wasip2/release"
[[ -f "$plugins/fixture_guard_pass.wasm" && -f "$plugins/fixture_guard_deny_all.wasm" ]] ||
  { echo "guards.sh: $plugins/fixture_guard_pass.wasm is missing (run without --no-build)" >&2; exit 1; }

exec "$bench/venv/bin/python" "$here/guards.py" \
  --toolport "$(cd "$(dirname "$toolport")" && pwd)/$(basename "$toolport")" \
  --plugins "$plugins" "${extra[@]}"
