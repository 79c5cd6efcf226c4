#!/usr/bin/env bash
# What bounding a large result costs (`maxResultTokens`, docs/src/configure/calls.md "Large results"): one
# `toolport call big` of a 30 MiB text result from demo-server `--big-lines`, bounded at the
# default 25,000 tokens (preview + note, the whole stored under <home>/results/), against the
# same call with a bound the result fits in (passed through whole, no tokenizer). Wall time
# (median of N runs) and peak RSS (/usr/bin/time). Not run in CI.
#
#   bench/large_results.sh [--runs N] [--no-build]
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/prelude.sh"

runs=5
set -- "${extra[@]+"${extra[@]}"}"
while (( $# )); do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    *) echo "large_results.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

size=31457280
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# A home and workspace with demo-server --big-lines and the given maxResultTokens.
setup() {
  local dir="$scratch/$1" tokens="$2"
  mkdir -p "$dir/home" "$dir/ws/.toolport"
  printf '{"mcpServers": {"d": {"command": "%s", "args": ["demo-server", "--big-lines"]}}}\n' \
    "$toolport" > "$dir/home/mcp.json"
  printf '{"enabledMcpServers": ["d"], "maxResultTokens": %s}\n' "$tokens" > "$dir/ws/.toolport/workspace.json"
}

# Median wall seconds and max peak RSS (MB) of `runs` calls in setup $1.
measure() {
  local dir="$scratch/$1" times=() rss=0
  for _ in $(seq "$runs"); do
    /usr/bin/time -f '%e %M' -o "$scratch/t" \
      "$toolport" --home "$dir/home" --workspace "$dir/ws" call big "{\"size\": $size}" > "$scratch/out"
    read -r wall kb < "$scratch/t"
    times+=("$wall")
    (( kb > rss )) && rss=$kb
  done
  local median
  median="$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")"
  echo "$median $(( rss / 1024 )) $(wc -c < "$scratch/out")"
}

setup bounded 25000
setup whole "$size"
read -r b_wall b_rss b_out < <(measure bounded)
read -r w_wall w_rss w_out < <(measure whole)
stored="$(find "$scratch/bounded/home/results" -name '*.txt' | head -1)"
cmp -s "$stored" <(python3 -c "
import sys
size=$size; out=[]; n=0; i=0
while n < size:
    line=f'{i:08} the quick brown fox jumps over the lazy dog\n'; out.append(line); n+=len(line); i+=1
sys.stdout.write(''.join(out)[:size])") && same=yes || same=NO
ratio="$(python3 -c "print(f'{$b_wall/$w_wall:.2f}')")"
cat <<OUT
| what | baseline (same run) | bounded | ratio |
|---|---|---|---|
| \`call big\` 30 MiB text, wall (median of $runs) | passed through whole: ${w_wall} s, ${w_out} bytes printed | ${b_wall} s, ${b_out} bytes printed | **${ratio}×** |
| peak RSS | ${w_rss} MB | ${b_rss} MB | |
| stored file byte-identical to what the server sent | | ${same} | |
OUT
