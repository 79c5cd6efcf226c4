#!/usr/bin/env bash
# What the native sandbox of stdio servers costs (issue 46): start and list, one call, one HTTP
# fetch through the egress proxy, each sandboxed against unsandboxed in the same run (see
# bench/native_sandbox.py). Not run in CI.
#
#   bench/native_sandbox.sh [--runs N] [--calls N] [--no-build]
#
# Installs server-filesystem (tests/peers/install_filesystem.sh) and mcp-server-fetch
# (tests/peers/install_sandbox_peers.sh), builds toolport in release unless --no-build, and
# writes bench/results/native_sandbox.md.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/prelude.sh"

peers="$(bash "$root/tests/peers/install_filesystem.sh" "$target")"
sandbox_peers="$(bash "$root/tests/peers/install_sandbox_peers.sh" "$target")"
exec python3 "$here/native_sandbox.py" \
  --toolport "$(cd "$(dirname "$toolport")" && pwd)/$(basename "$toolport")" \
  --peers "$(cd "$peers" && pwd)" \
  --fetch "$sandbox_peers/venv/bin/mcp-server-fetch" \
  --python "$bench/venv/bin/python" \
  --out "$here/results" \
  "${extra[@]}"
