#!/usr/bin/env bash
# Installs the reference filesystem MCP server (npm `@modelcontextprotocol/server-filesystem`,
# pinned) into <target>/peers, once, beside server-everything (tests/peers/install.sh): the peer
# bench/wasm_servers.sh compares the built-in sandboxed `files` server with. Installed into the
# folder's own package.json, so `npx @modelcontextprotocol/server-filesystem` run from that
# folder finds it there and downloads nothing.
#
#   tests/peers/install_filesystem.sh [TARGET_DIR]     prints the peers folder on success
#
# Idempotent and safe to run beside install.sh: both work under the same exclusive `flock` on
# <peers>/.lock, and a stamp file of its own (written last) marks a complete install.
set -euo pipefail

PACKAGE="@modelcontextprotocol/server-filesystem"
VERSION="${SERVER_FILESYSTEM_VERSION:-2026.8.31}"
MIN_NODE_MAJOR=20

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/node.sh"
target="${1:-${CARGO_TARGET_DIR:-$here/../../target}}"
peers="$target/peers"
stamp="$peers/.installed-server-filesystem-$VERSION"
mkdir -p "$peers"

exec 9>"$peers/.lock"
flock 9

if [[ -f "$stamp" ]]; then
  echo "$peers"
  exit 0
fi

link_node "$peers" "$MIN_NODE_MAJOR"

# --save-exact: the folder's package.json names this version, so npx (which accepts any
# installed version of a bare name) and the bench agree on what ran.
npm install --silent --no-audit --no-fund --save-exact --prefix "$peers" "$PACKAGE@$VERSION" >&2
entry="$peers/node_modules/$PACKAGE/dist/index.js"
[[ -f "$entry" ]] || { echo "install_filesystem.sh: $entry is missing after npm install" >&2; exit 1; }
installed="$("$peers/bin/node" -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).version' \
  "$peers/node_modules/$PACKAGE/package.json")"
[[ "$installed" == "$VERSION" ]] || {
  echo "install_filesystem.sh: npm installed $PACKAGE $installed, wanted $VERSION" >&2
  exit 1
}

touch "$stamp"
echo "$peers"
