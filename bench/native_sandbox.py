"""The numbers behind bench/native_sandbox.sh (issue 46): what the native sandbox of stdio
servers costs, each figure a ratio against the same server unsandboxed in the same run.

1. Start to first `tools/list` of `@modelcontextprotocol/server-filesystem` (`toolport tools
   --json`, one process a run): `"sandbox": true` with its folder granted, against no sandbox.
2. One call (`read_text_file`, 4 KiB) through a long-lived `toolport serve` (stdio), sandboxed
   against unsandboxed: the launcher is out of the way once the server runs, so this is the
   price of Landlock's and seccomp's checks on the server's own system calls.
3. One `fetch` of a loopback page by PyPI's `mcp-server-fetch` through `toolport serve`: the
   sandboxed server goes through toolport's egress proxy (the page's host granted), the
   unsandboxed one straight to the page, once as users run it and once with the same six proxy
   variables and a `NO_PROXY` that sends it straight (httpx builds a transport per proxy
   variable for every client, and mcp-server-fetch makes a client per fetch).
4. The proxy's hop alone: 50 raw-socket GETs timed inside one server (`http_get_server.py`),
   sandboxed (through the proxy) against unsandboxed (straight), repeated.

Runs interleaved after a warm-up; medians. Writes DIR/native_sandbox.md.

    native_sandbox.py --toolport BIN --peers DIR --fetch BIN --python BIN --out DIR [--runs N] [--calls N]
"""

import argparse
import http.server
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

FS_ENTRY = "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"


def fail(message):
    sys.exit(f"native_sandbox.py: {message}")


class Home:
    """A temporary home and workspace with `defs` (name → definition), all enabled."""

    def __init__(self, toolport, work, label, defs):
        self.toolport = toolport
        self.home = Path(tempfile.mkdtemp(prefix=f"{label}-", dir=work))
        self.ws = self.home / "ws"
        (self.ws / ".toolport").mkdir(parents=True)
        (self.home / "mcp.json").write_text(json.dumps({"mcpServers": defs}))
        workspace = {"enabledMcpServers": list(defs), "reservedToolNames": []}
        (self.ws / ".toolport" / "workspace.json").write_text(json.dumps(workspace))

    def cmd(self, *words):
        return [self.toolport, "--home", str(self.home), "--workspace", str(self.ws), *words]

    def tools(self):
        started = time.perf_counter()
        out = subprocess.run(self.cmd("tools", "--json"), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             timeout=120)
        wall = time.perf_counter() - started
        if out.returncode != 0 or not json.loads(out.stdout or "[]"):
            fail(f"tools --json in {self.home} exited {out.returncode}:\n{out.stdout}{out.stderr}")
        return wall


class Serve:
    """A `toolport serve` on stdio, spoken to with raw JSON-RPC lines."""

    def __init__(self, home):
        self.proc = subprocess.Popen(home.cmd("serve", "--allow-unpinned"), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        deadline = time.time() + 60
        while not self.request("tools/list", {})["result"]["tools"]:
            if time.time() > deadline:
                fail("serve listed no tools within 60 s")
            time.sleep(0.2)

    def send(self, message):
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                fail(f"serve ended during {method}")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                return message

    def call(self, tool, arguments):
        started = time.perf_counter()
        answer = self.request("tools/call", {"name": tool, "arguments": arguments})
        wall = time.perf_counter() - started
        result = answer.get("result") or {}
        if "error" in answer or result.get("isError"):
            fail(f"{tool} failed: {json.dumps(answer)[:400]}")
        return wall

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def page_server():
    """A loopback HTTP server with one 4 KiB page; returns its port."""
    body = b"<html><body>" + b"<p>toolport bench</p>" * 200 + b"</body></html>"

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


def median_ms(values):
    return statistics.median(values) * 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--toolport", required=True)
    ap.add_argument("--peers", required=True)
    ap.add_argument("--fetch", required=True)
    ap.add_argument("--python", required=True, help="a Python with the MCP SDK (bench/install.sh's venv)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--calls", type=int, default=300)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="native-sandbox-"))
    data = work / "data"
    data.mkdir()
    (data / "page.txt").write_text("x" * 4096)
    node = str(Path(args.peers) / "bin" / "node")
    # Its own folder argument, not the workspace root toolport would offer as a root.
    fs = {"command": node, "args": [str(Path(args.peers) / FS_ENTRY), str(data)], "roots": "none"}
    fs_boxed = {**fs, "sandbox": True, "grants": {"dirs": [str(data)]}}

    # 1. Start to first tools/list.
    homes = {"unsandboxed": Home(args.toolport, work, "plain", {"fs": fs}),
             "sandboxed": Home(args.toolport, work, "boxed", {"fs": fs_boxed})}
    starts = {k: [] for k in homes}
    for home in homes.values():
        home.tools()
    for _ in range(args.runs):
        for label, home in homes.items():
            starts[label].append(home.tools())

    # 2. One call through serve.
    serves = {label: Serve(home) for label, home in homes.items()}
    calls = {k: [] for k in serves}
    arguments = {"path": str(data / "page.txt")}
    for serve in serves.values():
        for _ in range(20):
            serve.call("read_text_file", arguments)
    for _ in range(args.calls):
        for label, serve in serves.items():
            calls[label].append(serve.call("read_text_file", arguments))
    for serve in serves.values():
        serve.close()

    # 3. A fetch through the egress proxy against one straight to the page.
    port = page_server()
    url = f"http://127.0.0.1:{port}/"
    fetch = {"command": args.fetch, "args": ["--ignore-robots-txt", "--allow-private-ips"]}
    fetch_boxed = {**fetch, "sandbox": True, "grants": {"hosts": [f"http://127.0.0.1:{port}"]}}
    # The same client work on both sides: httpx builds one transport (and SSL context) per proxy
    # variable for every client, and mcp-server-fetch makes a client per fetch, so the direct
    # side gets the six variables too (to a closed port) with NO_PROXY sending it straight.
    dead = "http://127.0.0.1:9"
    same_client = {k: dead for k in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"]}
    fetch_same = {**fetch, "env": {**same_client, "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}}
    fetch_homes = {"direct": Home(args.toolport, work, "fetch-plain", {"fetch": fetch}),
                   "direct, same client": Home(args.toolport, work, "fetch-same", {"fetch": fetch_same}),
                   "through the proxy": Home(args.toolport, work, "fetch-boxed", {"fetch": fetch_boxed})}
    fetch_serves = {label: Serve(home) for label, home in fetch_homes.items()}
    fetches = {k: [] for k in fetch_serves}
    fetch_args = {"url": url, "raw": True}
    for serve in fetch_serves.values():
        for _ in range(5):
            serve.call("fetch", fetch_args)
    for _ in range(max(args.calls // 3, 30)):
        for label, serve in fetch_serves.items():
            fetches[label].append(serve.call("fetch", fetch_args))
    for serve in fetch_serves.values():
        serve.close()

    # 4. The proxy's hop alone: raw GETs timed inside one server, sandboxed against not.
    getter = {"command": args.python, "args": [str(Path(__file__).with_name("http_get_server.py"))]}
    getter_boxed = {**getter, "sandbox": True, "grants": {"hosts": [f"http://127.0.0.1:{port}"]}}
    hop_homes = {"direct": Home(args.toolport, work, "get-plain", {"get": getter}),
                 "through the proxy": Home(args.toolport, work, "get-boxed", {"get": getter_boxed})}
    hop_serves = {label: Serve(home) for label, home in hop_homes.items()}
    hops = {k: [] for k in hop_serves}
    for _ in range(max(args.runs, 10)):
        for label, serve in hop_serves.items():
            answer = serve.request("tools/call", {"name": "get_many", "arguments": {
                "host": "127.0.0.1", "port": port, "path": "/", "n": 50}})
            text = answer["result"]["content"][0]["text"]
            hops[label].append(float(text.split()[0]) / 1000)
    for serve in hop_serves.values():
        serve.close()

    rows = [
        ("one HTTP GET of a loopback page, raw sockets timed in the server: the proxy's hop",
         hops["direct"], hops["through the proxy"], "≤ 1.2×"),
        ("start + connect + `tools/list`, server-filesystem", starts["unsandboxed"], starts["sandboxed"], "≤ 1.1× or ≤ +15 ms"),
        ("one `read_text_file` call (4 KiB) through serve", calls["unsandboxed"], calls["sandboxed"], "≤ 1.03×"),
        ("one `fetch` of a loopback page by mcp-server-fetch, the same client work each side",
         fetches["direct, same client"], fetches["through the proxy"], "≤ 1.2×"),
        ("one `fetch` end to end as users see it (httpx's proxy transports included)",
         fetches["direct"], fetches["through the proxy"], "—"),
    ]
    lines = [
        "| figure | unsandboxed (ms, median) | sandboxed (ms, median) | ratio | difference | aim |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for name, base, boxed, aim in rows:
        b, s = median_ms(base), median_ms(boxed)
        lines.append(f"| {name} | {b:.2f} | {s:.2f} | {s / b:.3f}× | {s - b:+.2f} ms | {aim} |")
    header = (f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {os.cpu_count()} cores; "
              f"{args.runs} starts, {args.calls} calls, {len(fetches['direct'])} fetches a side, interleaved.")
    text = header + "\n\n" + "\n".join(lines) + "\n"
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "native_sandbox.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
