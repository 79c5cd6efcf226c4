#!/usr/bin/env bash
# Smoke test of the *component* build, without the toolport host: server_files.wasm under
# wasmtime (plugins/wasm_run.py over the PyPI `wasmtime` package, pinned to the host's 48),
# a read-only preopen /data and a read-write preopen /out, spoken to in JSON-RPC lines.
# Also measures the CPU the idle server uses (it should block in wasi:io/poll).
#
#   plugins/server-files/smoke.sh [--no-build]      (IDLE_SECONDS=5 by default)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
wasm="$repo/target/plugins/wasm32-wasip2/release/server_files.wasm"

if [[ "${1:-}" != "--no-build" ]]; then
    cargo build --release --target wasm32-wasip2 --manifest-path "$repo/plugins/Cargo.toml" \
        --target-dir "$repo/target/plugins" -p server-files
fi
python3 -c 'import wasmtime' 2>/dev/null || pip install --quiet 'wasmtime==48.*'

fixture="$(mktemp -d)"
trap 'rm -rf "$fixture"' EXIT
mkdir -p "$fixture/data/sub" "$fixture/out"
printf 'hello\nworld\n' >"$fixture/data/a.txt"
printf '# Title\nneedle here\n' >"$fixture/data/sub/b.md"
ln -s /etc "$fixture/data/escape"

IDLE_SECONDS="${IDLE_SECONDS:-5}" python3 - "$repo/plugins/wasm_run.py" "$wasm" "$fixture" <<'EOF'
import json, os, subprocess, sys, time

runner, wasm, fixture = sys.argv[1:4]
server = subprocess.Popen(
    [sys.executable, runner, "--dir", f"{fixture}/data::/data:ro", "--dir", f"{fixture}/out::/out", wasm],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE)
next_id = 0
passed = failures = 0

def send(message):
    server.stdin.write((json.dumps(message) + "\n").encode())
    server.stdin.flush()

def request(method, params):
    global next_id
    next_id += 1
    send({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params})
    while True:
        line = server.stdout.readline()
        if not line:
            sys.exit("the server closed stdout")
        message = json.loads(line)
        if message.get("id") == next_id:
            if "error" in message:
                sys.exit(f"{method} failed: {message}")
            return message["result"]

def call(tool, **arguments):
    result = request("tools/call", {"name": tool, "arguments": arguments})
    return bool(result.get("isError")), result["content"][0]["text"]

def check(name, ok, detail=""):
    global passed, failures
    print(("ok    " if ok else "FAIL  ") + name + ("" if ok else f": {detail}"))
    passed += bool(ok)
    failures += not ok

init = request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "smoke", "version": "0"}})
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
check("initialize", init["serverInfo"]["name"] == "toolport-files", init)
names = sorted(t["name"] for t in request("tools/list", {})["tools"])
check("tools/list", len(names) == 9 and "read_file" not in names and "write_file" not in names, names)
r = call("list_allowed_directories")
check("roots are the preopens", r == (False, "Allowed directories:\n/data (read-only)\n/out (read-write)"), r)
r = call("list_directory", path="/data")
check("list_directory", r == (False, "[FILE] a.txt\n[FILE] escape\n[DIR] sub"), r)
r = call("read_text_file", path="a.txt")
check("read_text_file (relative)", r == (False, "hello\nworld\n"), r)
r = call("read_text_file", path="/data/a.txt", tail=1)
check("read_text_file tail", r == (False, "world\n"), r)
r = call("search_content", path="/data", pattern="needle")
check("search_content", r == (False, "/data/sub/b.md:2: needle here"), r)
r = call("read_text_file", path="/data/../etc/passwd")
check("'..' refused", r == (True, "refused: /data/../etc/passwd: paths with '..' are not allowed"), r)
r = call("list_directory", path="/etc")
check("outside refused", r == (True, "refused: /etc is outside the allowed folders"), r)
r = call("read_text_file", path="/data/escape/hostname")
print("info  " + r[1])
check("symlink out refused by the sandbox", r[0] and r[1].startswith("refused: cannot read /data/escape/hostname: not permitted by the sandbox"), r)
r = call("write_text_file", path="/data/new.txt", content="x")
check("write in a read-only root refused", r == (True, "refused: /data/new.txt is in a read-only folder"), r)
check("... and nothing written", not os.path.exists(f"{fixture}/data/new.txt"))
r = call("write_text_file", path="/out/note.txt", content="written\n")
check("write in a read-write root", r == (False, "wrote 8 bytes to /out/note.txt"), r)
check("... on the host", open(f"{fixture}/out/note.txt").read() == "written\n")
r = call("move_file", source="/out/note.txt", destination="/out/moved.txt")
check("move_file", not r[0] and os.path.exists(f"{fixture}/out/moved.txt"), r)
r = call("delete_file", path="/out/moved.txt")
check("delete_file", not r[0] and not os.path.exists(f"{fixture}/out/moved.txt"), r)

def cpu_ticks(pid):
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        fields = open(f"/proc/{pid}/task/{task}/stat").read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total

idle = float(os.environ["IDLE_SECONDS"])
before = cpu_ticks(server.pid)
time.sleep(idle)
used = (cpu_ticks(server.pid) - before) / os.sysconf("SC_CLK_TCK")
print(f"info  idle for {idle:.0f} s: {used:.2f} s of CPU (runner and wasmtime threads included)")
check("idle server burns no CPU", used <= 0.05 * idle, f"{used:.2f} s")

started = time.time()
server.stdin.close()
code = server.wait(timeout=30)
check("stdin EOF ends the server with exit code 0", code == 0, code)
print(f"info  exit {time.time() - started:.2f} s after EOF")
print(f"{passed} passed, {failures} failed")
sys.exit(1 if failures else 0)
EOF
