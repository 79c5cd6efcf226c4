#!/usr/bin/env bash
# The official MCP conformance suite's server scenarios against server-everything, first
# directly and then through `toolport serve --http` fronting that same server; compares the two
# check by check.
#
#   tests/conformance/server.sh
#
# Environment: TOOLPORT_BIN (default <target>/debug/toolport), CARGO_TARGET_DIR,
# CONFORMANCE_OUT (where results and logs go; default a temporary folder, printed at the end).
#
# Prints a markdown table (check | direct | through toolport) and exits non-zero when a check
# that passes directly does not pass through toolport, or when `dns-rebinding-protection`
# (which server-everything fails: it accepts any Host) does not pass against toolport.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target="${CARGO_TARGET_DIR:-$here/../../target}"
bin="${TOOLPORT_BIN:-$target/debug/toolport}"
# How long server-everything and toolport may take to start listening.
START_TIMEOUT_S=30

[[ -x "$bin" ]] || { echo "server.sh: $bin is missing: build it first (cargo build -p toolport)" >&2; exit 1; }
suite_dir="$(bash "$here/install.sh" "$target")"
peers="$(bash "$here/../peers/install.sh" "$target")"
node="$suite_dir/bin/node"
suite="$suite_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
everything="$peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

out="${CONFORMANCE_OUT:-$(mktemp -d)}"
mkdir -p "$out"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  wait 2>/dev/null || true
}
trap cleanup EXIT

# Waits until FILE has a line matching REGEX (printing the line), or fails naming WHAT.
wait_for_line() {
  local file="$1" regex="$2" what="$3" pid="$4" deadline=$((SECONDS + START_TIMEOUT_S))
  while (( SECONDS < deadline )); do
    if grep -Eo "$regex" "$file" 2>/dev/null | head -n1 | grep .; then
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || { echo "server.sh: $what exited before listening:" >&2; cat "$file" >&2; return 1; }
    sleep 0.1
  done
  echo "server.sh: $what did not listen within ${START_TIMEOUT_S}s:" >&2
  cat "$file" >&2
  return 1
}

port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
PORT="$port" "$node" "$everything" streamableHttp >"$out/everything.log" 2>&1 </dev/null &
pids+=($!)
wait_for_line "$out/everything.log" "listening on port $port" "server-everything" "${pids[-1]}" >/dev/null
direct_url="http://127.0.0.1:$port/mcp"

# The suite exits non-zero whenever a check fails; the comparison below is the verdict.
echo "direct: $direct_url" >&2
"$node" "$suite" server --url "$direct_url" -o "$out/direct" >"$out/direct.log" 2>&1 || true

home="$out/home"
workspace="$out/workspace"
mkdir -p "$home" "$workspace/.toolport"
printf '{"mcpServers": {"everything": {"type": "http", "url": "%s"}}}\n' "$direct_url" >"$home/mcp.json"
printf '{"enabledMcpServers": ["everything"]}\n' >"$workspace/.toolport/workspace.json"
env -u RUST_LOG -u TOOLPORT_HOME "$bin" --home "$home" --workspace "$workspace" serve --http 127.0.0.1:0 \
  >"$out/serve.stdout" 2>"$out/serve.log" </dev/null &
pids+=($!)
line="$(wait_for_line "$out/serve.log" 'toolport serve: listening on http://[^ ]+/mcp' "toolport serve" "${pids[-1]}")"
serve_url="${line#toolport serve: listening on }"

echo "through toolport: $serve_url" >&2
"$node" "$suite" server --url "$serve_url" -o "$out/through" >"$out/through.log" 2>&1 || true

status=0
python3 - "$out/direct" "$out/through" <<'PY' || status=$?
import json, os, re, sys

def checks(folder):
    """{(scenario, check id): status} from the suite's server-<scenario>-<time>/checks.json."""
    found = {}
    for entry in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        m = re.match(r"^server-(.+)-\d{4}-\d\d-\d\dT", entry)
        path = os.path.join(folder, entry, "checks.json")
        if not m or not os.path.isfile(path):
            continue
        for check in json.load(open(path)):
            found[(m.group(1), check["id"])] = check["status"], check.get("errorMessage") or ""
    return found

direct, through = checks(sys.argv[1]), checks(sys.argv[2])
if not direct:
    sys.exit("server.sh: the direct run produced no checks (see direct.log)")
if not through:
    sys.exit("server.sh: the run through toolport produced no checks (see through.log)")

def mark(entry):
    return "missing" if entry is None else ("pass" if entry[0] == "SUCCESS" else entry[0].lower())

regressions = []
print("| check | direct | through toolport |")
print("|---|---|---|")
for key in sorted(set(direct) | set(through)):
    d, t = direct.get(key), through.get(key)
    name = f"{key[0]} / {key[1]}"
    must_pass = (d is not None and d[0] == "SUCCESS") or key[0] == "dns-rebinding-protection"
    regressed = must_pass and (t is None or t[0] != "SUCCESS")
    if regressed:
        regressions.append(f"{name}: {mark(t)} {t[1] if t else ''}".strip())
    print(f"| {name} | {mark(d)} | {mark(t)}{' **REGRESSION**' if regressed else ''} |")
passed = lambda r: sum(1 for s, _ in r.values() if s == "SUCCESS")
print()
print(f"direct: {passed(direct)} of {len(direct)} checks pass; "
      f"through toolport: {passed(through)} of {len(through)}")
if regressions:
    print()
    print(f"{len(regressions)} regression(s) through toolport:")
    for r in regressions:
        print(f"- {r}")
    sys.exit(1)
PY
echo "results in $out" >&2
exit "$status"
