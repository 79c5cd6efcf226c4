#!/usr/bin/env bash
# Installs the ACP test client (the official @agentclientprotocol/sdk, pinned by
# package-lock.json) into <target>/acp-client, once.
#
#   tests/acp/install.sh [TARGET_DIR]     prints "<client folder> <node>" on success
#
# Node comes from tests/peers/install.sh (the machine's, or a private one when it is too old),
# so both test clients run on the same Node. Idempotent and safe to run from several tests at
# once: the work happens under an exclusive `flock`, and a stamp keyed by the lockfile's hash
# (written last) marks a complete install. The scripts (client.mjs, permission.mjs) are copied
# on every run so edits to them take effect without reinstalling.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target="${1:-${CARGO_TARGET_DIR:-$here/../../target}}"
mkdir -p "$target"
target="$(cd "$target" && pwd)"
peers="$(bash "$here/../peers/install.sh" "$target")"
node="$peers/bin/node"
node_dir="$(dirname "$(readlink -f "$node")")"
# npm that belongs to that Node: beside it, or inside a private Node's own tree; else PATH's.
npm_cmd=(npm)
if [[ -x "$node_dir/npm" ]]; then
  npm_cmd=("$node_dir/npm")
elif [[ -f "$node_dir/../lib/node_modules/npm/bin/npm-cli.js" ]]; then
  npm_cmd=("$node" "$node_dir/../lib/node_modules/npm/bin/npm-cli.js")
fi

client="$target/acp-client"
mkdir -p "$client"
exec 9>"$client/.lock"
flock 9

lock_hash="$(sha256sum "$here/package-lock.json" | cut -c1-16)"
stamp="$client/.installed-$lock_hash"
if [[ ! -f "$stamp" ]]; then
  rm -f "$client"/.installed-*
  cp "$here/package.json" "$here/package-lock.json" "$client/"
  PATH="$node_dir:$PATH" "${npm_cmd[@]}" ci --silent --no-audit --no-fund --prefix "$client" >&2
  [[ -f "$client/node_modules/@agentclientprotocol/sdk/package.json" ]] || {
    echo "install.sh: @agentclientprotocol/sdk is missing after npm ci" >&2
    exit 1
  }
  touch "$stamp"
fi
for script in client.mjs permission.mjs; do
  cp "$here/$script" "$client/$script.tmp"
  mv "$client/$script.tmp" "$client/$script"
done
echo "$client $node"
