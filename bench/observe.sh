#!/usr/bin/env bash
# What watching costs: calls/s through `serve --http` with the audit log, OTLP traces and
# metrics and --metrics on, against the same serve with all of them off (ratio in one run).
# Not run in CI.
#
#   bench/observe.sh [--clients C] [--calls N] [--runs R] [--no-build]
#   TOOLPORT=/path/to/toolport bench/observe.sh --no-build      (measure another build)
#
# Installs the clients through bench/install.sh (once), builds toolport in release (skip with
# --no-build), and writes bench/results/observe.md (bench/observe.py does the measuring).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/prelude.sh"

exec "$bench/venv/bin/python" "$here/observe.py" \
  --toolport "$(cd "$(dirname "$toolport")" && pwd)/$(basename "$toolport")" \
  --python "$bench/venv/bin/python" \
  --client "$root/tests/serve/client.py" \
  --out "$here/results" \
  "${extra[@]}"
