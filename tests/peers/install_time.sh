#!/usr/bin/env bash
# Installs the reference time server (PyPI `mcp-server-time`, pinned) into <target>/time, once:
# a Python venv whose <time>/venv/bin/mcp-server-time speaks MCP over stdio. One of the real
# servers `toolport scan` must not flag (tests/it/trust/scan.rs).
#
#   tests/peers/install_time.sh [TARGET_DIR]     prints the time folder on success
#
# Same shape as tests/peers/install_observers.sh: idempotent and locked (tests/peers/once.sh).
set -euo pipefail

MCP_SERVER_TIME_VERSION="${MCP_SERVER_TIME_VERSION:-2026.10.19}"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target="${1:-${CARGO_TARGET_DIR:-$here/../../target}}"
source "$here/once.sh"
once_begin "$target/time" "$MCP_SERVER_TIME_VERSION"
time_dir="$once_dir"

# A half-made venv from an interrupted run is replaced, not trusted.
rm -rf "$time_dir/venv"
python3 -m venv "$time_dir/venv"
"$time_dir/venv/bin/pip" install --quiet --disable-pip-version-check \
  "mcp-server-time==$MCP_SERVER_TIME_VERSION" >&2
[[ -x "$time_dir/venv/bin/mcp-server-time" ]] \
  || { echo "install_time.sh: no mcp-server-time entry point after pip install" >&2; exit 1; }

once_done
