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

source "$(dirname "${BASH_SOURCE[0]}")/prelude.sh"
peers="$target/peers"

exec "$bench/venv/bin/python" "$here/compare.py" \
  --toolport "$toolport" \
  --python "$bench/venv/bin/python" \
  --node "$peers/bin/node" \
  --inspector "$bench/inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js" \
  --everything "$peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js" \
  --out "$here/results" \
  "${extra[@]}"
