#!/usr/bin/env bash
# How fast `toolport serve` leaves on SIGTERM and SIGINT with its servers ended: over stdio
# (stdin kept open) and over HTTP (a session and its GET stream open), demo-server and a Python
# SDK server behind it; medians over N runs against the Python server's own exit in the same
# run, and against an older build with --baseline. Not run in CI.
#
#   bench/signal_exit.sh [--runs N] [--baseline OLD_TOOLPORT] [--no-build]
#   TOOLPORT=/path/to/toolport bench/signal_exit.sh --no-build      (measure another build)
#
# Installs the clients through bench/install.sh (once), builds toolport in release (skip with
# --no-build), and writes bench/results/signal_exit.md (bench/signal_exit.py does the measuring).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/prelude.sh"

exec "$bench/venv/bin/python" "$here/signal_exit.py" \
  --toolport "$(cd "$(dirname "$toolport")" && pwd)/$(basename "$toolport")" \
  --python "$bench/venv/bin/python" \
  --out "$here/results" \
  "${extra[@]}"
