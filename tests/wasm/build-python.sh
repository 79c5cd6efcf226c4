#!/usr/bin/env bash
# Builds the Python MCP server (tests/wasm/python-server/app.py) into a wasi:cli/command component
# with componentize-py: <target>/wasm-peers/python_server.wasm. It proves a `wasm` server need not
# be Rust.
#
#   tests/wasm/build-python.sh [TARGET_DIR]     prints the component's path on success
#
# componentize-py (pinned) is installed with `pip install --target` into
# <target>/wasm-peers/python. The WASI 0.2 WIT is the one the host serves: wasmtime-wasi's, at the
# version the root Cargo.lock pins, from cargo's registry sources (there once the host's
# dependencies are fetched; WASI_WIT_DIR overrides). The build is skipped while the component is
# newer than app.py, this script and that WIT. Safe from several tests at once (an exclusive
# `flock`). Anything missing is an error, never a skip: a test without its peer must fail.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# The pinned componentize-py, shared with plugins/examples/build.sh.
source "$here/componentize-py.sh"
root="$(cd "$here/../.." && pwd)"
target="${1:-${CARGO_TARGET_DIR:-$root/target}}"
mkdir -p "$target/wasm-peers"
peers="$(cd "$target/wasm-peers" && pwd)"
app_dir="$here/python-server"
out="$peers/python_server.wasm"

fail() {
  echo "build-python.sh: $*" >&2
  exit 1
}

[[ -f "$app_dir/app.py" ]] || fail "$app_dir/app.py is missing"

# The WASI WIT folder: a `wit/` with `deps/cli.wit` holding `world command`.
wit="${WASI_WIT_DIR:-}"
if [[ -z "$wit" ]]; then
  wasi_version="$(awk '/^name = "wasmtime-wasi"$/ { getline; gsub(/version = |"/, ""); print; exit }' \
    "$root/Cargo.lock")"
  [[ -n "$wasi_version" ]] || fail "no wasmtime-wasi in $root/Cargo.lock: set WASI_WIT_DIR to a WASI 0.2 wit folder"
  cargo_home="${CARGO_HOME:-$HOME/.cargo}"
  for candidate in "$cargo_home"/registry/src/*/"wasmtime-wasi-$wasi_version"/src/p2/wit; do
    [[ -d "$candidate" ]] && wit="$candidate" && break
  done
  [[ -n "$wit" ]] || fail "wasmtime-wasi $wasi_version's WIT is not in $cargo_home/registry/src: \
run \`cargo fetch\` (or build the host) first, or set WASI_WIT_DIR"
fi
cli_wit="$wit/deps/cli.wit"
[[ -f "$cli_wit" ]] && grep -q '^world command' "$cli_wit" || fail "$wit has no deps/cli.wit with world command"
# The world's exact name, e.g. wasi:cli/command@0.2.12, from the WIT's own package line.
cli_package="$(sed -n 's/^package \(wasi:cli@0\.2\.[0-9]*\);$/\1/p' "$cli_wit")"
[[ -n "$cli_package" ]] || fail "$cli_wit declares no wasi:cli@0.2.x package"
world="${cli_package/@//command@}"

componentize_py_lock "$peers"
stamp="$(componentize_py_install "$peers")" || fail "componentize-py $COMPONENTIZE_PY_VERSION is not installed"

# Rebuild when anything it is made of is newer than the component (or the tool changed).
if [[ -f "$out" ]] && [[ -z "$(find "$app_dir" "$wit" "${BASH_SOURCE[0]}" "$stamp" -newer "$out" \
  -type f -print -quit)" ]]; then
  echo "$out"
  exit 0
fi

componentize_py "$peers" --quiet -d "$wit" -w "$world" \
  componentize --python-path "$app_dir" app -o "$out.tmp" >&2 ||
  fail "componentize-py $COMPONENTIZE_PY_VERSION failed to build $app_dir/app.py for $world"
mv "$out.tmp" "$out"
echo "$out"
