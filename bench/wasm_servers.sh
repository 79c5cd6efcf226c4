#!/usr/bin/env bash
# What running an MCP server sandboxed costs: the built-in wasm `files` server against the same
# crate built natively (`server_files`) and the npm reference `@modelcontextprotocol/server-
# filesystem`. One run measures (interleaved, medians, ratios against baselines of the same run):
#   1. one `read_text_file` call (4 KiB, 1 MiB) through `toolport serve`, wasm vs native, and
#      where the difference goes (calls with less and less file-system work); walks and searches
#      (`list_directory`, `search_files`, `search_content`) over 200 and 10,000 files;
#   2. start to first `tools/list` (`toolport tools --json`, one process a run): the cached and
#      the uncached wasm `files`, the native one, the npm server through `npx -y` and `node`,
#      and no server at all;
#   3. the idle CPU of a connected wasm server over 10 s, against a native one's.
# Not run in CI.
#
#   bench/wasm_servers.sh [--calls N] [--big-calls N] [--warmup N] [--diag-calls N] [--runs N]
#                         [--idle-runs N] [--idle-seconds S] [--walk-calls N] [--walk-big-calls N]
#                         [--parts calls,walks,start,idle] [--no-build]
#   TOOLPORT=/path/to/toolport bench/wasm_servers.sh --no-build      (measure another build)
#
# Installs the Python SDK venv through bench/install.sh and the npm server through
# tests/peers/install_filesystem.sh (once each), builds toolport in release and the native
# `server_files` (skip with --no-build: the builds are then used only if newer than their
# sources), and writes bench/results/wasm_servers.md (bench/wasm_servers.py does the measuring).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/prelude.sh"

peers="$(bash "$root/tests/peers/install_filesystem.sh" "$target")"
npx="$(command -v npx || true)"
[[ -n "$npx" ]] || { echo "wasm_servers.sh: npx is not on PATH (it comes with npm, which installed the peers)" >&2; exit 1; }

if (( build )); then
  cargo build --release -p server-files --manifest-path "$root/plugins/Cargo.toml" --target-dir "$target/plugins"
fi
server_files="$target/plugins/release/server_files"
[[ -x "$server_files" ]] || { echo "wasm_servers.sh: $server_files is missing (run without --no-build)" >&2; exit 1; }

# With --no-build, a build older than what it is built from would measure other code: refuse.
# (TOOLPORT=… names a build on purpose; it is not checked.)
stale() {
  local binary="$1"; shift
  (cd "$root" && find "$@" -type f -newer "$binary" -not -path '*/target/*' -print -quit)
}
if (( ! build )); then
  if [[ -z "${TOOLPORT:-}" ]]; then
    newer="$(stale "$toolport" Cargo.toml Cargo.lock host wit plugins)"
    [[ -z "$newer" ]] || { echo "wasm_servers.sh: $toolport is older than $newer: run without --no-build" >&2; exit 1; }
  fi
  newer="$(stale "$server_files" plugins/Cargo.toml plugins/Cargo.lock plugins/server-files plugins/wasi-stdio)"
  [[ -z "$newer" ]] || { echo "wasm_servers.sh: $server_files is older than $newer: run without --no-build" >&2; exit 1; }
fi

exec "$bench/venv/bin/python" "$here/wasm_servers.py" \
  --toolport "$(cd "$(dirname "$toolport")" && pwd)/$(basename "$toolport")" \
  --server-files "$(cd "$(dirname "$server_files")" && pwd)/$(basename "$server_files")" \
  --peers "$(cd "$peers" && pwd)" \
  --npx "$npx" \
  --out "$here/results" \
  "${extra[@]}"
