#!/usr/bin/env bash
# The reference knowledge-graph server (`@modelcontextprotocol/server-memory`): one of the
# fixture servers of the lazy surface's search-quality test and its bench
# (tests/it/serve/lazy_surface.rs, host/benches/lazy.rs).
#
#   tests/peers/install_memory.sh [TARGET_DIR]     prints the peers folder on success
exec bash "$(dirname "${BASH_SOURCE[0]}")/install_reference.sh" memory "$@"
