#!/usr/bin/env bash
# Smoke test of server_fetch.wasm without the toolport host: the component under wasmtime
# (plugins/wasm_run.py --http, PyPI wasmtime 48) against a local HTTP server. wasmtime-py's
# wasi:http lets every destination through, so `not granted: …` (the host's request hook
# answering HTTP-request-denied) is the host's tests' to check, not this script's.
#
#   plugins/server-fetch/smoke.sh [--no-build]
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
wasm="$repo/target/plugins/wasm32-wasip2/release/server_fetch.wasm"

if [[ "${1:-}" != "--no-build" ]]; then
    cargo build --release --target wasm32-wasip2 --manifest-path "$repo/plugins/Cargo.toml" \
        --target-dir "$repo/target/plugins" -p server-fetch
fi
python3 -c 'import wasmtime' 2>/dev/null || pip install --quiet 'wasmtime==48.*'

python3 - "$repo/plugins/wasm_run.py" "$wasm" <<'EOF'
import http.server, json, os, socket, subprocess, sys, threading, time

runner, wasm = sys.argv[1:3]

class Pages(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass
    def do_GET(self):
        if self.path == "/slow":
            time.sleep(2)
        routes = {
            "/hello": (200, b"hello from the test server\n"),
            "/slow": (200, b"finally\n"),
            "/big": (200, b"0123456789" * 30_000),
            "/missing": (404, b"no such page"),
            "/redirect": (302, b""),
        }
        status, body = routes.get(self.path, (500, b"unexpected path"))
        self.send_response(status)
        self.send_header("content-type", "text/plain; charset=utf-8")
        if status == 302:
            self.send_header("location", "/hello")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

pages = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Pages)
threading.Thread(target=pages.serve_forever, daemon=True).start()
base = f"http://127.0.0.1:{pages.server_address[1]}"
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    closed_port = s.getsockname()[1]

server = subprocess.Popen([sys.executable, runner, "--http", wasm], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
next_id = 0
passed = failures = 0

def send(message):
    server.stdin.write((json.dumps(message) + "\n").encode())
    server.stdin.flush()

def receive(want_id):
    while True:
        line = server.stdout.readline()
        if not line:
            sys.exit("the server closed stdout")
        message = json.loads(line)
        if message.get("id") == want_id:
            if "error" in message:
                sys.exit(f"request {want_id} failed: {message}")
            return message["result"]

def request(method, params):
    global next_id
    next_id += 1
    send({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params})
    return receive(next_id)

def fetch(**arguments):
    result = request("tools/call", {"name": "fetch", "arguments": arguments})
    return bool(result.get("isError")), result["content"][0]["text"]

def check(name, ok, detail=""):
    global passed, failures
    print(("ok    " if ok else "FAIL  ") + name + ("" if ok else f": {detail}"))
    passed += bool(ok)
    failures += not ok

init = request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "smoke", "version": "0"}})
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
check("initialize", init["serverInfo"]["name"] == "toolport-fetch", init)
tools = request("tools/list", {})["tools"]
check("tools/list", [t["name"] for t in tools] == ["fetch"], tools)

r = fetch(url=f"{base}/hello")
check("200", r == (False, f"HTTP 200 OK from {base}/hello\ncontent-type: text/plain; charset=utf-8\n\nhello from the test server\n"), r)
r = fetch(url=f"{base}/missing")
check("404 is a tool error naming the status", r == (True, f"HTTP 404 Not Found from {base}/missing\n\nno such page"), r)
r = fetch(url=f"{base}/redirect")
check("redirect followed", not r[0] and r[1].startswith(f"HTTP 200 OK from {base}/hello"), r)
r = fetch(url=f"{base}/big", maxBytes=1000)
check("maxBytes truncates with a note", not r[0] and "0123456789" * 100 + "\n\n[truncated at 1000 bytes" in r[1], r[1][-200:])
r = fetch(url=f"{base}/big")
check("default cap 100000", not r[0] and "[truncated at 100000 bytes" in r[1], r[1][-200:])
r = fetch(url=f"http://127.0.0.1:{closed_port}/")
check("connection refused is a tool error", r[0] and "connection refused" in r[1].lower(), r)
r = fetch(url="ftp://example.com/")
check("non-http refused", r == (True, "only http and https URLs can be fetched, not ftp:"), r)

# A slow response must not hold up other requests: the reactor serves stdin meanwhile.
next_id += 1
slow_id = next_id
started = time.time()
send({"jsonrpc": "2.0", "id": slow_id, "method": "tools/call", "params": {"name": "fetch", "arguments": {"url": f"{base}/slow"}}})
time.sleep(0.3)
ping_started = time.time()
request("ping", {})
check("ping answered while a fetch waits", time.time() - ping_started < 0.5, f"{time.time() - ping_started:.2f} s")
slow = receive(slow_id)
check("... and the slow fetch completes", not slow.get("isError") and time.time() - started >= 2, slow)

def cpu_ticks(pid):
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        fields = open(f"/proc/{pid}/task/{task}/stat").read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total

before = cpu_ticks(server.pid)
time.sleep(3)
used = (cpu_ticks(server.pid) - before) / os.sysconf("SC_CLK_TCK")
check("idle server burns no CPU", used <= 0.15, f"{used:.2f} s in 3 s")

server.stdin.close()
check("stdin EOF ends the server with exit code 0", server.wait(timeout=30) == 0)
print(f"{passed} passed, {failures} failed")
sys.exit(1 if failures else 0)
EOF
