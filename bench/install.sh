#!/usr/bin/env bash
# Installs the peers the comparison runs against, into <target>/bench, once:
#   - server-everything (through tests/peers/install.sh, shared with the black-box tests);
#   - the official Python MCP SDK (PyPI `mcp`) and matplotlib, in a venv;
#   - the MCP Inspector (npm `@modelcontextprotocol/inspector`), for its `--cli` mode.
# Prints the bench folder. Versions are pinned so reruns compare like with like.
set -euo pipefail

MCP_VERSION="${MCP_VERSION:-2.3.0}"
MATPLOTLIB_VERSION="${MATPLOTLIB_VERSION:-3.11.2}"
INSPECTOR_VERSION="${INSPECTOR_VERSION:-2.12.0}"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
bench="$target/bench"
mkdir -p "$bench"

exec 9>"$bench/.lock"
flock 9

peers="$(bash "$root/tests/peers/install.sh" "$target")"

stamp="$bench/.installed-$MCP_VERSION-$MATPLOTLIB_VERSION-$INSPECTOR_VERSION"
if [[ ! -f "$stamp" ]]; then
  python3 -m venv "$bench/venv"
  "$bench/venv/bin/pip" install --quiet --disable-pip-version-check \
    "mcp==$MCP_VERSION" "matplotlib==$MATPLOTLIB_VERSION" >&2
  PATH="$peers/bin:$PATH" npm install --silent --no-audit --no-fund --prefix "$bench/inspector" \
    "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" >&2
  touch "$stamp"
fi
echo "$bench"
