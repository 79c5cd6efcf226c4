#!/usr/bin/env bash
# Installs the reference knowledge-graph MCP server (npm `@modelcontextprotocol/server-memory`,
# pinned) into <target>/peers, once, beside server-everything (tests/peers/install.sh): one of the
# fixture servers of the lazy surface's search-quality test and its bench (tests/it/lazy_surface.rs,
# host/benches/lazy.rs).
#
#   tests/peers/install_memory.sh [TARGET_DIR]     prints the peers folder on success
#
# Idempotent and safe to run beside install.sh: both work under the same exclusive `flock` on
# <peers>/.lock, and a stamp file of its own (written last) marks a complete install.
set -euo pipefail

PACKAGE="@modelcontextprotocol/server-memory"
VERSION="${SERVER_MEMORY_VERSION:-2026.8.31}"
MIN_NODE_MAJOR=20

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/node.sh"
target="${1:-${CARGO_TARGET_DIR:-$here/../../target}}"
peers="$target/peers"
stamp="$peers/.installed-server-memory-$VERSION"
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
[[ -f "$entry" ]] || { echo "install_memory.sh: $entry is missing after npm install" >&2; exit 1; }
installed="$("$peers/bin/node" -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).version' \
  "$peers/node_modules/$PACKAGE/package.json")"
[[ "$installed" == "$VERSION" ]] || {
  echo "install_memory.sh: npm installed $PACKAGE $installed, wanted $VERSION" >&2
  exit 1
}

touch "$stamp"
echo "$peers"
