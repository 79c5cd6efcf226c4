#!/usr/bin/env bash
# toolport against the official Python MCP SDK client and the MCP Inspector CLI: time to
# connect and list tools, and peak memory, for one server-everything and for ten demo-servers,
# plus a plot of start-up time against 1, 5, 10 and 20 servers.
#
#   bench/compare.sh [--runs N] [--scaling-runs N] [--no-build]
#   TOOLPORT=/path/to/toolport bench/compare.sh --no-build      (measure another build)
#
# Installs the peers into target/bench (bench/install.sh, once), builds toolport in release
# (skip with --no-build), and writes bench/results/{peers.md,peers.json,scaling.png}.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
build=1
extra=()
for arg in "$@"; do
  case "$arg" in
    --no-build) build=0 ;;
    *) extra+=("$arg") ;;
  esac
done

bench="$(bash "$here/install.sh")"
peers="$target/peers"
if (( build )); then
  (cd "$root" && cargo build --release --bin toolport)
fi
toolport="${TOOLPORT:-$target/release/toolport}"
[[ -x "$toolport" ]] || { echo "compare.sh: $toolport is missing (run without --no-build)" >&2; exit 1; }

exec "$bench/venv/bin/python" "$here/compare.py" \
  --toolport "$toolport" \
  --python "$bench/venv/bin/python" \
  --node "$peers/bin/node" \
  --inspector "$bench/inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js" \
  --everything "$peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js" \
  --out "$here/results" \
  "${extra[@]}"
