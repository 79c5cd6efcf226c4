#!/usr/bin/env bash
# Soak of `toolport serve --http`: several Python SDK clients calling tools concurrently across
# 10 demo-servers for --minutes (default 10), three of them started with `--crash-after N` so
# they crash on the way. Every call must be answered or fail with a clear error within a
# per-call timeout (nothing hangs); serve's RSS is sampled every 10 s and reported flat or not.
# Not run in CI; loopback only, bounded in time.
#
#   bench/soak_serve.sh [--minutes M] [--clients N] [--call-timeout S] [--no-build]
#
# Writes bench/results/soak_serve.md; exits non-zero on a hung call, a wrong answer, serve
# dying or memory that grows (bench/soak_serve.py does the work).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/prelude.sh"

mkdir -p "$here/results"
exec "$bench/venv/bin/python" "$here/soak_serve.py" \
  --toolport "$(cd "$(dirname "$toolport")" && pwd)/$(basename "$toolport")" \
  --out "$here/results/soak_serve.md" \
  "${extra[@]}"
