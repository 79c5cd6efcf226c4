#!/usr/bin/env python3
"""How much memory a flood of `initialize` costs `toolport serve --http`: N sessions opened one
after another (each on its own connection, never closed by the client), with the default
session cap and, as the baseline in the same run, with the cap raised past N (what serve did
before it had one). Prints the RSS of the serve process before and after, and how many
initializes were answered 200 and 503. Not run in CI.

    bench/session_flood.py --toolport target/release/toolport [--sessions 10000]
"""

import argparse
import http.client
import json
import os
import re
import subprocess
import tempfile
import time

INITIALIZE = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "flood", "version": "1"}},
})


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        kb = int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))
    return kb / 1024


def flood(toolport, sessions, extra):
    home, workspace = tempfile.mkdtemp(), tempfile.mkdtemp()
    demo = {"mcpServers": {"demo": {"command": toolport, "args": ["demo-server"]}}}
    with open(os.path.join(home, "mcp.json"), "w") as f:
        json.dump(demo, f)
    os.makedirs(os.path.join(workspace, ".toolport"))
    with open(os.path.join(workspace, ".toolport", "workspace.json"), "w") as f:
        json.dump({"enabledMcpServers": ["demo"]}, f)
    serve = subprocess.Popen(
        [toolport, "--home", home, "--workspace", workspace, "serve", "--http", "127.0.0.1:0", *extra],
        stderr=subprocess.PIPE, text=True,
    )
    port = None
    for line in serve.stderr:
        if m := re.search(r"listening on http://127\.0\.0\.1:(\d+)/mcp", line):
            port = int(m.group(1))
        if "every server has connected or failed" in line:
            break
    time.sleep(0.5)
    before = rss_mb(serve.pid)
    statuses = {}
    started = time.monotonic()
    for _ in range(sessions):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("POST", "/mcp", INITIALIZE, {
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        })
        response = conn.getresponse()
        response.read()
        statuses[response.status] = statuses.get(response.status, 0) + 1
        conn.close()
    took = time.monotonic() - started
    time.sleep(1)
    after = rss_mb(serve.pid)
    serve.terminate()
    serve.wait(10)
    return before, after, statuses, took


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--toolport", required=True)
    p.add_argument("--sessions", type=int, default=10000)
    args = p.parse_args()
    toolport = os.path.abspath(args.toolport)
    for label, extra in [("default cap (512)", []), ("no cap (baseline)", ["--max-sessions", str(args.sessions * 2)])]:
        before, after, statuses, took = flood(toolport, args.sessions, extra)
        print(f"{label}: {args.sessions} initialize in {took:.1f} s, RSS {before:.0f} -> {after:.0f} MB, "
              f"statuses {dict(sorted(statuses.items()))}")


if __name__ == "__main__":
    main()
