#!/usr/bin/env bash
# The first run of the built-ins (issue 31, part 2): `toolport demo` (its sandboxed `files`
# server is an embedded WebAssembly component) and the first `toolport tools --json` on a new
# home (the default `openai` shape is a built-in component too), each with the user's shared
# cache of the built-ins warm (`TOOLPORT_CACHE_DIR`, what every run after the very first one
# meets) and cold (a fresh cache folder: what every new home paid before the shared cache),
# against `tools --json` with no server on a new home (the process and its config, nothing
# compiled) and the second `tools --json` of the same home. Medians of N runs, interleaved.
# Not run in CI.
#
#   bench/first_run.sh [--runs N] [--cold-runs N] [--no-build]
#   TOOLPORT=/path/to/toolport bench/first_run.sh --no-build      (measure another build)
#
# Writes bench/results/first_run.md (bench/first_run.py does the measuring).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/prelude.sh"

exec python3 "$here/first_run.py" \
  --toolport "$(cd "$(dirname "$toolport")" && pwd)/$(basename "$toolport")" \
  --out "$here/results" \
  "${extra[@]}"
