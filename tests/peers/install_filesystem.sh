#!/usr/bin/env bash
# The reference filesystem server (`@modelcontextprotocol/server-filesystem`): the peer
# bench/wasm_servers.sh compares the built-in sandboxed `files` server with.
#
#   tests/peers/install_filesystem.sh [TARGET_DIR]     prints the peers folder on success
exec bash "$(dirname "${BASH_SOURCE[0]}")/install_reference.sh" filesystem "$@"
