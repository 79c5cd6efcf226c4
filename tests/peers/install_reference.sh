#!/usr/bin/env bash
# Installs one of the reference MCP servers (npm `@modelcontextprotocol/server-NAME`, pinned)
# into <target>/peers, once (server-everything through tests/peers/install.sh). Installed into
# the folder's own package.json, so `npx @modelcontextprotocol/server-NAME` run from that folder
# finds it there and downloads nothing. `install_filesystem.sh` and `install_memory.sh` name
# the others the tests and benches use.
#
#   tests/peers/install_reference.sh NAME [TARGET_DIR]     prints the peers folder on success
#
# Idempotent and safe to run from several tests at once: every install works under one `flock` on
# <peers>/.lock, and a stamp file per server (written last) marks a complete install.
set -euo pipefail

name="${1:?usage: install_reference.sh NAME [TARGET_DIR]}"
shift
PACKAGE="@modelcontextprotocol/server-$name"
# SERVER_FILESYSTEM_VERSION, SERVER_MEMORY_VERSION, …
version_var="SERVER_$(tr 'a-z-' 'A-Z_' <<< "$name")_VERSION"
VERSION="${!version_var:-2026.8.31}"
MIN_NODE_MAJOR=20

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/node.sh"
target="${1:-${CARGO_TARGET_DIR:-$here/../../target}}"
peers="$target/peers"
stamp="$peers/.installed-server-$name-$VERSION"
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
[[ -f "$entry" ]] || { echo "install_reference.sh: $entry is missing after npm install" >&2; exit 1; }
installed="$("$peers/bin/node" -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).version' \
  "$peers/node_modules/$PACKAGE/package.json")"
[[ "$installed" == "$VERSION" ]] || {
  echo "install_reference.sh: npm installed $PACKAGE $installed, wanted $VERSION" >&2
  exit 1
}

touch "$stamp"
echo "$peers"
