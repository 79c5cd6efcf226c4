#!/usr/bin/env bash
# Installs the peers the benches run against, once:
#   - server-everything (through tests/peers/install.sh, shared with the black-box tests);
#   - the official Python MCP SDK (PyPI `mcp`) in a venv and the MCP Inspector (npm
#     `@modelcontextprotocol/inspector`, for its `--cli` mode), through
#     tests/peers/install_clients.sh into <target>/clients, shared with the `serve` tests
#     (the pins live there);
#   - matplotlib, added to that venv, for the plots.
# Prints the bench folder: <target>/bench, whose `venv` and `inspector` link to the clients'.
set -euo pipefail

MATPLOTLIB_VERSION="${MATPLOTLIB_VERSION:-3.11.2}"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
bench="$target/bench"
mkdir -p "$bench"

exec 9>"$bench/.lock"
flock 9

bash "$root/tests/peers/install.sh" "$target" >/dev/null
clients="$(bash "$root/tests/peers/install_clients.sh" "$target")"

stamp="$bench/.installed-matplotlib-$MATPLOTLIB_VERSION"
if [[ ! -f "$stamp" ]]; then
  # A venv or inspector folder left by the old layout of this script is replaced by the links.
  rm -rf "$bench/venv" "$bench/inspector"
  ln -sfn "$clients/venv" "$bench/venv"
  ln -sfn "$clients/inspector" "$bench/inspector"
  "$bench/venv/bin/pip" install --quiet --disable-pip-version-check "matplotlib==$MATPLOTLIB_VERSION" >&2
  touch "$stamp"
fi
echo "$bench"
