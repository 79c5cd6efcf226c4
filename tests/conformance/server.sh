#!/usr/bin/env bash
# The official MCP conformance suite's server scenarios, each server first directly and then
# through `toolport serve --http` fronting that same server, compared check by check:
#   - our fixture (tests/conformance/fixture_server.py, what the scenarios ask of a server), at
#     the suite's default revision and at 2025-11-25, twice: speaking 2026-07-28 to toolport
#     (questions as input-required results) and `--legacy` (questions as requests to the client,
#     what the suite's TypeScript reference server does);
#   - server-everything at the default revision;
#   - our TypeScript fixture (tests/conformance/sdk_server.mjs: the TypeScript SDK's `McpServer`,
#     built as the suite's reference server is: it answers `server/discover`, but its tools ask
#     the client only in a session), at both revisions, in the scenarios it implements (the
#     questions asked while a call waits, and `resources/subscribe`); toolport is told its
#     `"protocolVersion": "2025-11-25"`.
#
#   tests/conformance/server.sh
#
# Environment: TOOLPORT_BIN (default <target>/debug/toolport), CARGO_TARGET_DIR,
# CONFORMANCE_OUT (where results and logs go; default a temporary folder, printed at the end).
#
# Prints one markdown table per comparison (`### <server> at <revision>`, then
# check | direct | through toolport) and exits non-zero when a check that passes directly does
# not pass through toolport, or when `dns-rebinding-protection` (which server-everything fails:
# it accepts any Host) does not pass against toolport.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target="${CARGO_TARGET_DIR:-$here/../../target}"
bin="${TOOLPORT_BIN:-$target/debug/toolport}"
# How long a server and toolport may take to start listening.
START_TIMEOUT_S=30
# How long one suite run may take (about 30 s on 2 busy cores): a scenario left waiting on an
# answer that never comes must fail the comparison, not hold CI for hours.
SUITE_TIMEOUT_S=300

[[ -x "$bin" ]] || { echo "server.sh: $bin is missing: build it first (cargo build -p toolport)" >&2; exit 1; }
suite_dir="$(bash "$here/install.sh" "$target")"
peers="$(bash "$here/../peers/install.sh" "$target")"
node="$suite_dir/bin/node"
suite="$suite_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
everything="$peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
clients="$(bash "$here/../peers/install_clients.sh" "$target")"
python="$clients/venv/bin/python"

out="${CONFORMANCE_OUT:-$(mktemp -d)}"
mkdir -p "$out"
pids=()
# Ends every process started here: SIGTERM, then SIGKILL for any still there a few seconds on
# (a server waiting for its clients' streams to close must not hold the script open).
cleanup() {
  local pid deadline=$((SECONDS + 5))
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    while kill -0 "$pid" 2>/dev/null && (( SECONDS < deadline )); do
      sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
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

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Starts `toolport serve --http` fronting the one server NAME at URL, with more keys of its
# definition when given (JSON members, e.g. `"protocolVersion": "2025-11-25"`); sets
# `serve_url`. Not called in a command substitution: its pid must reach `pids` in this shell,
# for cleanup.
start_serve() {
  local name="$1" url="$2" more="${3:+, $3}" home="$out/$1/home" workspace="$out/$1/workspace"
  mkdir -p "$home" "$workspace/.toolport"
  printf '{"mcpServers": {"%s": {"type": "http", "url": "%s"%s}}}\n' "$name" "$url" "$more" >"$home/mcp.json"
  printf '{"enabledMcpServers": ["%s"]}\n' "$name" >"$workspace/.toolport/workspace.json"
  env -u RUST_LOG -u TOOLPORT_HOME "$bin" --home "$home" --workspace "$workspace" serve --http 127.0.0.1:0 \
    >"$out/$name/serve.stdout" 2>"$out/$name/serve.log" </dev/null &
  pids+=($!)
  local line
  line="$(wait_for_line "$out/$name/serve.log" 'toolport serve: listening on http://[^ ]+/mcp' "toolport serve ($name)" "${pids[-1]}")"
  serve_url="${line#toolport serve: listening on }"
}

# Runs the suite against URL into FOLDER, with any further suite options. The suite exits
# non-zero whenever a check fails; the comparison is the verdict.
suite_run() {
  local url="$1" folder="$2" status=0
  shift 2
  timeout --kill-after=5 "$SUITE_TIMEOUT_S" "$node" "$suite" server --url "$url" -o "$folder" "$@" \
    >>"$folder.log" 2>&1 || status=$?
  if (( status == 124 || status == 137 )); then
    echo "server.sh: the suite against $url did not finish within ${SUITE_TIMEOUT_S}s (see $folder.log)" >&2
    tail -n 20 "$folder.log" >&2
    exit 1
  fi
}

# LABEL DIRECT_URL SERVE_URL [suite options]: one comparison, results under $out/runs/LABEL.
compare() {
  local label="$1" direct="$2" through="$3" folder="$out/runs/${1// /_}"
  shift 3
  mkdir -p "$folder"
  echo "$label: direct $direct, through toolport $through" >&2
  suite_run "$direct" "$folder/direct" "$@"
  suite_run "$through" "$folder/through" "$@"
  comparisons+=("$label" "$folder")
}
comparisons=()

# The scenarios sdk_server.mjs implements: the checks issue 44 found lost through toolport in
# front of the suite's reference server.
SDK_SCENARIOS=(tools-call-elicitation tools-call-sampling elicitation-sep1034-defaults
  elicitation-sep1330-enums resources-subscribe)

# As `compare`, one suite run per scenario of SDK_SCENARIOS, all into the same folders.
compare_sdk_scenarios() {
  local label="$1" direct="$2" through="$3" folder="$out/runs/${1// /_}" scenario
  shift 3
  mkdir -p "$folder"
  echo "$label: direct $direct, through toolport $through" >&2
  for scenario in "${SDK_SCENARIOS[@]}"; do
    suite_run "$direct" "$folder/direct" --scenario "$scenario" "$@"
    suite_run "$through" "$folder/through" --scenario "$scenario" "$@"
  done
  comparisons+=("$label" "$folder")
}

for mode in modern legacy; do
  name="fixture-$mode"
  mkdir -p "$out/$name"
  port="$(free_port)"
  flag=()
  [[ "$mode" == legacy ]] && flag=(--legacy)
  "$python" "$here/fixture_server.py" "$port" "${flag[@]}" >"$out/$name/fixture.log" 2>&1 </dev/null &
  pids+=($!)
  wait_for_line "$out/$name/fixture.log" "fixture listening on port $port" "the fixture ($mode)" "${pids[-1]}" >/dev/null
  direct_url="http://127.0.0.1:$port/mcp"
  start_serve "$name" "$direct_url"
  compare "$name at the default revision" "$direct_url" "$serve_url"
  compare "$name at 2025-11-25" "$direct_url" "$serve_url" --spec-version 2025-11-25
done

mkdir -p "$out/everything"
port="$(free_port)"
PORT="$port" "$node" "$everything" streamableHttp >"$out/everything/server.log" 2>&1 </dev/null &
pids+=($!)
wait_for_line "$out/everything/server.log" "listening on port $port" "server-everything" "${pids[-1]}" >/dev/null
direct_url="http://127.0.0.1:$port/mcp"
start_serve everything "$direct_url"
compare "server-everything at the default revision" "$direct_url" "$serve_url"

mkdir -p "$out/sdk"
port="$(free_port)"
"$peers/bin/node" "$here/sdk_server.mjs" "$peers" "$port" >"$out/sdk/server.log" 2>&1 </dev/null &
pids+=($!)
wait_for_line "$out/sdk/server.log" "sdk server listening on port $port" "sdk_server.mjs" "${pids[-1]}" >/dev/null
direct_url="http://127.0.0.1:$port/mcp"
start_serve sdk "$direct_url" '"protocolVersion": "2025-11-25"'
compare_sdk_scenarios "sdk-server at the default revision" "$direct_url" "$serve_url"
compare_sdk_scenarios "sdk-server at 2025-11-25" "$direct_url" "$serve_url" --spec-version 2025-11-25

status=0
python3 - "${comparisons[@]}" <<'PY' || status=$?
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

def mark(entry):
    return "missing" if entry is None else ("pass" if entry[0] == "SUCCESS" else entry[0].lower())

passed = lambda r: sum(1 for s, _ in r.values() if s == "SUCCESS")
# Checks toolport is known to lose, with why; each is printed as "known loss", never passes
# quietly, and is a regression again once it passes (so the entry must then go).
# None today: fill it as {(server label, scenario, check): "why"}.
KNOWN = {}
regressions, figures, known = [], [], []
pairs = sys.argv[1:]
for label, folder in zip(pairs[0::2], pairs[1::2]):
    direct, through = checks(os.path.join(folder, "direct")), checks(os.path.join(folder, "through"))
    if not direct:
        sys.exit(f"server.sh: {label}: the direct run produced no checks (see {folder}/direct.log)")
    if not through:
        sys.exit(f"server.sh: {label}: the run through toolport produced no checks (see {folder}/through.log)")
    print(f"### {label}")
    print()
    print("| check | direct | through toolport |")
    print("|---|---|---|")
    for key in sorted(set(direct) | set(through)):
        d, t = direct.get(key), through.get(key)
        name = f"{key[0]} / {key[1]}"
        must_pass = (d is not None and d[0] == "SUCCESS") or key[0] == "dns-rebinding-protection"
        regressed = must_pass and (t is None or t[0] != "SUCCESS")
        why = KNOWN.get((label.split(" ")[0], *key))
        if why and regressed:
            known.append(f"{label}: {name}: {why}")
            print(f"| {name} | {mark(d)} | {mark(t)} (known loss) |")
            continue
        if why:
            regressions.append(f"{label}: {name}: passes now: drop it from KNOWN in server.sh")
        if regressed:
            regressions.append(f"{label}: {name}: {mark(t)} {t[1] if t else ''}".strip())
        print(f"| {name} | {mark(d)} | {mark(t)}{' **REGRESSION**' if regressed else ''} |")
    print()
    figures.append(f"{label}: {passed(direct)}/{len(direct)} direct, {passed(through)}/{len(through)} through toolport")
for figure in figures:
    print(figure)
if known:
    print()
    print(f"{len(known)} known loss(es) through toolport:")
    for k in known:
        print(f"- {k}")
if regressions:
    print()
    print(f"{len(regressions)} regression(s) through toolport:")
    for r in regressions:
        print(f"- {r}")
    sys.exit(1)
PY
echo "results in $out" >&2
exit "$status"
