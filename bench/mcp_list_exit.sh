#!/usr/bin/env bash
# A whole `toolport mcp list` of one stdio server-everything against a 20-line raw JSON-RPC
# client doing the same initialize + tools/list with the same server (issue 45, part 6): wall
# time of each, in one run, interleaved; the ratio toolport / raw. Not run in CI.
#
#   bench/mcp_list_exit.sh [--runs N] [--no-build]
#   TOOLPORT=/path/to/toolport bench/mcp_list_exit.sh --no-build      (measure another build)
#
# Writes bench/results/mcp_list_exit.md (bench/mcp_list_exit.py does the measuring).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/prelude.sh"

peers="$(bash "$root/tests/peers/install.sh" "$target")"
exec python3 "$here/mcp_list_exit.py" \
  --toolport "$(cd "$(dirname "$toolport")" && pwd)/$(basename "$toolport")" \
  --node "$peers/bin/node" \
  --entry "$peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js" \
  --out "$here/results" \
  "${extra[@]}"
