#!/usr/bin/env bash
# What `toolport serve` costs a client: one tool call through serve against the same Python SDK
# client calling the server directly (median over N calls in one session, and the ratio),
# `tools/list` through serve with 10 demo-servers (cold and warm), serve's peak RSS with 10
# servers (VmHWM), and the calls/s of 16 clients at once over HTTP through `serve --http`
# against `demo-server --http` (bench/serve_load.py); the floor under the hop is a bare rmcp
# relay (host/examples/bare_relay.rs), built beside. Not run in CI.
#
#   bench/serve.sh [--calls N] [--runs N] [--clients N] [--load-calls N] [--no-build]
#   TOOLPORT=/path/to/toolport bench/serve.sh --no-build      (measure another build)
#
# Installs the clients through bench/install.sh (once), builds toolport in release (skip with
# --no-build), and writes bench/results/serve.md (bench/serve.py does the measuring).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/prelude.sh"

need_bare_relay

exec "$bench/venv/bin/python" "$here/serve.py" \
  --toolport "$(cd "$(dirname "$toolport")" && pwd)/$(basename "$toolport")" \
  --python "$bench/venv/bin/python" \
  --client "$root/tests/serve/client.py" \
  --py-client "$here/py_client.py" \
  --node "$target/peers/bin/node" \
  --everything "$target/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js" \
  --load "$here/serve_load.py" \
  --bare "$bare" \
  --out "$here/results" \
  "${extra[@]}"
