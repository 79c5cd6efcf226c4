#!/usr/bin/env bash
# Calls/s through one `serve --http` replica direct, the same replica behind nginx, and three
# replicas behind nginx (round robin, a shared --session-key-env), the same clients each time,
# in one run (ratios). Not run in CI.
#
#   bench/replicas.sh [--clients C] [--calls N] [--runs R] [--no-build]
#   TOOLPORT=/path/to/toolport bench/replicas.sh --no-build      (measure another build)
#
# Installs the clients through bench/install.sh and nginx through tests/peers/install_nginx.sh
# (once each), builds toolport in release (skip with --no-build), and writes
# bench/results/replicas.md (bench/replicas.py does the measuring).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/prelude.sh"
nginx="$(bash "$root/tests/peers/install_nginx.sh" "$target")/usr/sbin/nginx"

exec "$bench/venv/bin/python" "$here/replicas.py" \
  --toolport "$(cd "$(dirname "$toolport")" && pwd)/$(basename "$toolport")" \
  --python "$bench/venv/bin/python" \
  --client "$root/tests/team/replicas_client.py" \
  --nginx "$nginx" \
  --out "$here/results" \
  "${extra[@]}"
