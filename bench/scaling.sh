#!/usr/bin/env bash
# Cost as work grows: connect+list (`toolport tools --json`), one call (`toolport call`, and the
# steady latency through a long-lived `toolport serve`), `tools/list` through serve (cold and
# warm) and the host's peak RSS, for 1, 10 and 100 demo-servers and for 100, 1,000 and 10,000
# tools on one server and over ten; each step's growth factor against the ×10 more work. Not
# run in CI.
#
#   bench/scaling.sh [--runs N] [--calls N] [--lists N] [--idle S] [--no-build]
#   TOOLPORT=/path/to/toolport bench/scaling.sh --no-build      (measure another build)
#
# Installs the Python SDK client through bench/install.sh (once), builds toolport in release
# (skip with --no-build), and writes bench/results/scaling.md (bench/scaling.py measures).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/prelude.sh"

exec "$bench/venv/bin/python" "$here/scaling.py" \
  --toolport "$(cd "$(dirname "$toolport")" && pwd)/$(basename "$toolport")" \
  --python "$bench/venv/bin/python" \
  --client "$root/tests/serve/client.py" \
  --out "$here/results" \
  "${extra[@]}"
