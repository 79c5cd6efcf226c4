"""The numbers behind bench/signal_exit.sh: how fast `toolport serve` leaves on a signal.

    signal_exit.py --toolport BIN --python VENV_PYTHON --out DIR [--runs N] [--baseline BIN]

`serve` fronts the built-in demo-server and a Python server on the official SDK (the servers an
agent's toolport typically has behind it), over stdio with the client's stdin kept open (as an
agent keeps it) and over HTTP with a session and its GET stream open. Each run: start, list the
tools (so every server is up), read serve's children, send the signal, time until serve's exit,
then check every child is gone. Medians over --runs, each mode's runs interleaved across the
builds measured.

The same-run baseline is the Python server alone: the time from SIGTERM to its own exit, started
and signalled the same way (toolport cannot be out with that server ended faster than it leaves).
With --baseline BIN an older build is measured in the same run too, and the table gives both.
Writes DIR/signal_exit.md.
"""

import argparse
import http.client
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

PY_SERVER = """from mcp.server.mcpserver import MCPServer
app = MCPServer('py')
@app.tool()
def now() -> str:
    return 'now'
app.run()
"""

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
# Only a hang reaches these.
START_TIMEOUT_S = 60
EXIT_TIMEOUT_S = 10


def home_for(toolport, python):
    root = tempfile.mkdtemp(prefix="signal-exit-bench-")
    home, workspace = os.path.join(root, "home"), os.path.join(root, "ws")
    os.makedirs(os.path.join(workspace, ".toolport"))
    os.makedirs(home)
    script = os.path.join(root, "py_server.py")
    with open(script, "w") as f:
        f.write(PY_SERVER)
    defs = {
        "demo": {"type": "stdio", "command": toolport, "args": ["demo-server"]},
        "py": {"type": "stdio", "command": python, "args": [script]},
    }
    with open(os.path.join(home, "mcp.json"), "w") as f:
        json.dump({"mcpServers": defs}, f)
    with open(os.path.join(workspace, ".toolport", "workspace.json"), "w") as f:
        json.dump({"enabledMcpServers": list(defs)}, f)
    return [toolport, "--home", home, "--workspace", workspace, "serve"], script


def children(pid):
    """Every thread's children (a server is the child of the thread that spawned it)."""
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(p) for p in f.read().split()]
        except OSError:
            pass
    return found


def alive(pid):
    """Whether `pid` exists as anything but a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def read_answer(stream, want_id):
    """Lines from a stdio server until the JSON-RPC answer with `want_id`."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        line = stream.readline()
        if not line:
            sys.exit("signal_exit.py: serve closed stdout before answering")
        message = json.loads(line)
        if message.get("id") == want_id and "method" not in message:
            return message
    sys.exit("signal_exit.py: no answer within the start timeout")


def timed_exit(proc, sig):
    """Sends `sig`; seconds until `proc` exits, and how many of its children outlive it."""
    kids = children(proc.pid)
    started = time.perf_counter()
    os.kill(proc.pid, sig)
    deadline = started + EXIT_TIMEOUT_S
    while proc.poll() is None:
        if time.perf_counter() > deadline:
            proc.kill()
            proc.wait()
            return None, len(kids)
        time.sleep(0.0005)
    took = time.perf_counter() - started
    # A child still ending when its parent left is given a moment; one that stays is left.
    until = time.monotonic() + 2
    while any(alive(k) for k in kids) and time.monotonic() < until:
        time.sleep(0.01)
    return took, sum(1 for k in kids if alive(k))


def stdio_run(command, sig):
    proc = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    for message in (INITIALIZE, INITIALIZED, LIST):
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        if "id" in message:
            read_answer(proc.stdout, message["id"])
    # stdin stays open, as an agent keeps it: serve must leave on the signal alone.
    return timed_exit(proc, sig)


def post(port, session, message):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=START_TIMEOUT_S)
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if session:
        headers["Mcp-Session-Id"] = session
        headers["MCP-Protocol-Version"] = "2025-11-25"
    conn.request("POST", "/mcp", json.dumps(message), headers)
    response = conn.getresponse()
    response.read()
    conn.close()
    return response.getheader("Mcp-Session-Id")


def http_run(command, sig):
    proc = subprocess.Popen(
        command + ["--http", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    port = None
    for line in proc.stderr:
        if "listening on http://" in line:
            port = int(line.split("http://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
            break
    if port is None:
        sys.exit("signal_exit.py: serve --http printed no listening line")
    threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
    session = post(port, None, INITIALIZE)
    post(port, session, INITIALIZED)
    post(port, session, LIST)
    # The session's standalone GET stream, held open as clients hold it.
    stream = http.client.HTTPConnection("127.0.0.1", port, timeout=EXIT_TIMEOUT_S)
    stream.request(
        "GET", "/mcp", headers={"Accept": "text/event-stream", "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    )
    stream.getresponse()
    try:
        return timed_exit(proc, sig)
    finally:
        stream.close()


def alone_run(python, script):
    """The Python server by itself, initialized, then SIGTERM: its own time to leave."""
    proc = subprocess.Popen(
        [python, script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    proc.stdin.write(json.dumps(INITIALIZE) + "\n")
    proc.stdin.flush()
    read_answer(proc.stdout, 1)
    return timed_exit(proc, signal.SIGTERM)


MODES = [
    ("stdio `serve`, SIGTERM", stdio_run, signal.SIGTERM),
    ("stdio `serve`, SIGINT", stdio_run, signal.SIGINT),
    ("`serve --http`, a session and its GET stream open, SIGTERM", http_run, signal.SIGTERM),
    ("`serve --http`, a session and its GET stream open, SIGINT", http_run, signal.SIGINT),
]


def ms(seconds):
    return "hung" if seconds is None else f"{seconds * 1000:.0f} ms"


def median(runs):
    times = [t for t, _ in runs]
    return None if None in times else statistics.median(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--toolport", required=True)
    p.add_argument("--python", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--runs", type=int, default=15)
    p.add_argument("--baseline", help="an older toolport build, measured in the same run")
    args = p.parse_args()
    builds = [("this build", args.toolport)] + ([("baseline", args.baseline)] if args.baseline else [])
    homes = {label: home_for(bin_, args.python) for label, bin_ in builds}
    script = homes["this build"][1]

    alone = [alone_run(args.python, script) for _ in range(args.runs)]
    results = {}
    for mode, run, sig in MODES:
        for _ in range(args.runs):
            for label, _bin in builds:
                results.setdefault((mode, label), []).append(run(homes[label][0], sig))
        print(f"signal_exit.py: {mode} done", file=sys.stderr)

    floor = median(alone)
    lines = [
        "# Exit on a signal",
        "",
        f"`bash bench/signal_exit.sh` on {os.cpu_count()} cores, median of {args.runs} runs each, one run of",
        "this script. `serve` fronts demo-server and a Python SDK server; time from the signal to",
        "serve's exit; `left` counts its servers still running afterwards (over every run). The",
        f"baseline: the Python server alone leaving on SIGTERM, {ms(floor)}.",
        "",
    ]
    if args.baseline:
        lines += ["| what | baseline build | this build | ratio | left | aim |", "|---|---|---|---|---|---|"]
    else:
        lines += ["| what | this build | ÷ server alone | left | aim |", "|---|---|---|---|---|"]
    for mode, _run, _sig in MODES:
        now = results[(mode, "this build")]
        left = sum(n for _, n in now)
        took = median(now)
        if args.baseline:
            before = median(results[(mode, "baseline")])
            ratio = f"{took / before:.3f}×" if took and before else "—"
            lines.append(f"| {mode} | {ms(before)} | {ms(took)} | **{ratio}** | {left} | ≤ 200 ms |")
        else:
            ratio = f"{took / floor:.2f}×" if took and floor else "—"
            lines.append(f"| {mode} | {ms(took)} | {ratio} | {left} | ≤ 200 ms |")
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "signal_exit.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"written to {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
