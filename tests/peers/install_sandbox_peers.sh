#!/usr/bin/env bash
# Installs the real Python MCP servers the sandbox tests run confined (tests/it/sandbox/
# real_servers.rs), into <target>/sandbox-peers, once: one venv (<sandbox-peers>/venv) with
#   - PyPI `mcp-server-fetch` (<venv>/bin/mcp-server-fetch): fetches a URL through the
#     sandbox's HTTP egress proxy (httpx reads HTTP_PROXY, as any Python client does);
#   - PyPI `mcp-server-git` (<venv>/bin/mcp-server-git): runs the machine's `git` on a granted
#     repository.
# The hostile server itself (tests/sandbox/hostile_server.py) runs on the Python SDK venv of
# tests/peers/install_clients.sh, as the other SDK fixtures do.
#
#   tests/peers/install_sandbox_peers.sh [TARGET_DIR]     prints the sandbox-peers folder on success
#
# Same shape as tests/peers/install_time.sh: idempotent and locked (tests/peers/once.sh). A
# missing server is a failure, never a skip.
set -euo pipefail

MCP_SERVER_FETCH_VERSION="${MCP_SERVER_FETCH_VERSION:-2026.10.24}"
MCP_SERVER_GIT_VERSION="${MCP_SERVER_GIT_VERSION:-2026.10.19}"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target="${1:-${CARGO_TARGET_DIR:-$here/../../target}}"
source "$here/once.sh"
once_begin "$target/sandbox-peers" "$MCP_SERVER_FETCH_VERSION-$MCP_SERVER_GIT_VERSION"
sandbox_peers="$once_dir"

command -v git >/dev/null \
  || { echo "install_sandbox_peers.sh: mcp-server-git needs git on PATH" >&2; exit 1; }

# A half-made venv from an interrupted run is replaced, not trusted.
rm -rf "$sandbox_peers/venv"
python3 -m venv "$sandbox_peers/venv"
"$sandbox_peers/venv/bin/pip" install --quiet --disable-pip-version-check \
  "mcp-server-fetch==$MCP_SERVER_FETCH_VERSION" "mcp-server-git==$MCP_SERVER_GIT_VERSION" >&2
for bin in mcp-server-fetch mcp-server-git; do
  [[ -x "$sandbox_peers/venv/bin/$bin" ]] \
    || { echo "install_sandbox_peers.sh: no $bin entry point after pip install" >&2; exit 1; }
done
"$sandbox_peers/venv/bin/python" -c 'import mcp_server_fetch, mcp_server_git' \
  || { echo "install_sandbox_peers.sh: the servers do not import" >&2; exit 1; }

once_done
