#!/usr/bin/env bash
# What OAuth adds to a one-shot CLI command: `toolport tools --json` and `toolport call echo`
# to the OAuth fixture signed in with `mcp login` (stored tokens) against the same server
# reached through a static `Authorization: Bearer` header carrying the same access token
# (median wall time of N one-process runs each, interleaved, and the ratios), plus the wall
# time of `mcp login` itself. Not run in CI.
#
#   bench/oauth.sh [--runs N] [--login-runs N] [--token-seconds S] [--no-build]
#   TOOLPORT=/path/to/toolport bench/oauth.sh --no-build      (measure another build)
#
# Installs the Python SDK venv through bench/install.sh (once), builds toolport in release
# (skip with --no-build), and writes bench/results/oauth.md (bench/oauth.py does the
# measuring; the fixture is tests/auth/oauth_server.py, the browser tests/auth/browser.sh).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/prelude.sh"

exec "$bench/venv/bin/python" "$here/oauth.py" \
  --toolport "$(cd "$(dirname "$toolport")" && pwd)/$(basename "$toolport")" \
  --server "$root/tests/auth/oauth_server.py" \
  --browser "$root/tests/auth/browser.sh" \
  --out "$here/results" \
  "${extra[@]}"
