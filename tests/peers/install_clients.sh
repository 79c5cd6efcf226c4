#!/usr/bin/env bash
# Installs the real MCP clients the `serve` tests and benches drive, into <target>/clients, once:
#   - the official Python MCP SDK (PyPI `mcp`), in a venv: <clients>/venv/bin/python;
#   - the MCP Inspector (npm `@modelcontextprotocol/inspector`), for its `--cli` mode:
#     <clients>/inspector/node_modules/@modelcontextprotocol/inspector/…
#
#   tests/peers/install_clients.sh [TARGET_DIR]     prints the clients folder on success
#
# Same shape as tests/peers/install.sh (whose Node it uses, installing the peers first):
# idempotent and locked (tests/peers/once.sh). The pins are the ones bench/install.sh has always used, so the
# tests and the benches drive the same clients; bench/install.sh calls this script.
set -euo pipefail

MCP_VERSION="${MCP_VERSION:-2.3.0}"
INSPECTOR_VERSION="${INSPECTOR_VERSION:-2.12.0}"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target="${1:-${CARGO_TARGET_DIR:-$here/../../target}}"
peers="$(bash "$here/install.sh" "$target")"
source "$here/once.sh"
once_begin "$target/clients" "$MCP_VERSION-$INSPECTOR_VERSION"
clients="$once_dir"

# A half-made venv from an interrupted run is replaced, not trusted.
rm -rf "$clients/venv"
python3 -m venv "$clients/venv"
"$clients/venv/bin/pip" install --quiet --disable-pip-version-check "mcp==$MCP_VERSION" >&2
"$clients/venv/bin/python" -c 'import mcp.client.session, mcp.client.streamable_http' \
  || { echo "install_clients.sh: the mcp package does not import" >&2; exit 1; }

PATH="$peers/bin:$PATH" npm install --silent --no-audit --no-fund --prefix "$clients/inspector" \
  "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" >&2
cli="$clients/inspector/node_modules/@modelcontextprotocol/inspector/cli/build/cli.js"
launcher="$clients/inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
[[ -f "$cli" || -f "$launcher" ]] \
  || { echo "install_clients.sh: no Inspector CLI entry after npm install" >&2; exit 1; }

once_done
