"""The numbers behind bench/serve.sh: what `toolport serve` costs a client.

    serve.py --toolport BIN --python VENV_PYTHON --client tests/serve/client.py --out DIR [--calls N] [--runs N]

1. One tool call (`echo`) through `serve` against the same Python SDK client calling the
   demo-server directly: the median over --calls calls in one session, and the ratio. Over
   stdio (the client spawns the server, or serve) and through `serve --http`; and, as the
   floor under the hop, through --bare (a relay with nothing but rmcp on both sides).
2. `tools/list` through `serve` fronting 10 demo-servers: the first listing from a cold start
   (spawn, connect all ten, list; the Python SDK's own import time included, as for the direct
   row) against the Python SDK connecting to the ten itself (bench/py_client.py, concurrently),
   and the median of --calls re-lists in one session.
3. Peak RSS (`VmHWM` in /proc/PID/status) of `serve --http` with those 10 servers after the
   calls and listings of 1 and 2 went through it.
4. Throughput of --clients clients at once over HTTP (bench/serve_load.py: one process and
   one session each, --load-calls `echo` calls each): through `serve --http` fronting
   demo-server over stdio, against the same clients calling `demo-server --http` directly.
Writes DIR/serve.md. Every figure is measured on this run; nothing is carried over.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from served import ServeHttp

SERVERS = 10
TOOLS_EACH = 5  # plus demo-server's six own tools


def run_client(args, scenario, *extra, url=None, command=None):
    argv = [args.python, args.client, scenario, *extra]
    argv += ["--url", url] if url else ["--", *command]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    try:
        value = json.loads(out.stdout)
    except ValueError:
        sys.exit(f"serve.py: {scenario} printed no JSON:\n{out.stdout}\n{out.stderr}")
    if "error" in value:
        sys.exit(f"serve.py: {scenario} failed: {value['error']}")
    return value


def home_with(servers, toolport, defs=None):
    """A temporary home + workspace whose enabled servers are `servers` (name → demo args), or
    `defs` (name → a whole definition) when given; returns the `serve` command line for it."""
    root = tempfile.mkdtemp(prefix="serve-bench-")
    home, workspace = os.path.join(root, "home"), os.path.join(root, "ws")
    os.makedirs(os.path.join(workspace, ".toolport"))
    os.makedirs(home)
    if defs is None:
        defs = {n: {"type": "stdio", "command": toolport, "args": ["demo-server", *a]} for n, a in servers.items()}
    json.dump({"mcpServers": defs}, open(os.path.join(home, "mcp.json"), "w"))
    json.dump({"enabledMcpServers": list(defs)}, open(os.path.join(workspace, ".toolport", "workspace.json"), "w"))
    return [toolport, "--home", home, "--workspace", workspace, "serve"]


class DemoHttp:
    """`toolport demo-server --http 127.0.0.1:0`: the direct baseline over HTTP."""

    def __init__(self, toolport):
        self.proc = subprocess.Popen([toolport, "demo-server", "--http", "127.0.0.1:0"], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()
        m = re.match(r"listening on (\S+)", line)
        if not m:
            self.proc.kill()
            sys.exit(f"serve.py: demo-server --http printed {line!r}")
        self.url = m.group(1)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def serve_http(serve_cmd):
    """`serve --http` on a free port, with neither RUST_LOG nor TOOLPORT_HOME of the caller's."""
    env = {k: v for k, v in os.environ.items() if k not in ("RUST_LOG", "TOOLPORT_HOME")}
    return ServeHttp(serve_cmd, env)


def median(values):
    return statistics.median(values)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--toolport", required=True)
    p.add_argument("--python", required=True)
    p.add_argument("--client", required=True)
    p.add_argument("--py-client", required=True, help="bench/py_client.py")
    p.add_argument("--node", required=True, help="the Node.js that runs server-everything")
    p.add_argument("--everything", required=True, help="server-everything's dist/index.js")
    p.add_argument("--out", required=True)
    p.add_argument("--calls", type=int, default=300)
    p.add_argument("--runs", type=int, default=5, help="cold starts per row of the listing table")
    p.add_argument("--load", required=True, help="bench/serve_load.py")
    p.add_argument("--bare", required=True, help="the bare rmcp relay (host/examples/bare_relay.rs), the floor")
    p.add_argument("--clients", type=int, default=16, help="clients at once in the throughput row")
    p.add_argument("--load-calls", type=int, default=100, help="calls per client in the throughput row")
    args = p.parse_args()
    calls = ["--calls", str(args.calls)]
    echo = ["--tool", "echo", "--args", '{"message": "bench"}']

    # 1. One call: direct vs through serve.
    one = home_with({"demo": []}, args.toolport)
    direct = run_client(args, "latency", *echo, *calls, command=[args.toolport, "demo-server"])["ms"]
    stdio = run_client(args, "latency", *echo, *calls, command=one)["ms"]
    # The floor: the same hop through a relay with nothing but rmcp on both sides.
    bare = run_client(args, "latency", *echo, *calls, command=[args.bare, args.toolport, "demo-server"])["ms"]
    http_serve = serve_http(one)
    try:
        http = run_client(args, "latency", *echo, *calls, url=http_serve.url)["ms"]
    finally:
        http_serve.stop()

    # The same hop against other baselines: demo-server's own HTTP, a tool that does 5 ms of
    # work, and a real server (server-everything, in Node).
    demo_http = DemoHttp(args.toolport)
    try:
        http_direct = run_client(args, "latency", *echo, *calls, url=demo_http.url)["ms"]
    finally:
        demo_http.stop()
    work = ["--tool", "sleep", "--args", '{"ms": 5}']
    work_direct = run_client(args, "latency", *work, *calls, command=[args.toolport, "demo-server"])["ms"]
    work_serve = run_client(args, "latency", *work, *calls, command=one)["ms"]
    node = {"every": {"type": "stdio", "command": args.node, "args": [args.everything]}}
    every = home_with({}, args.toolport, defs=node)
    node_echo = ["--tool", "echo", "--args", '{"message": "bench"}']
    node_direct = run_client(args, "latency", *node_echo, *calls, command=[args.node, args.everything])["ms"]
    node_serve = run_client(args, "latency", *node_echo, *calls, command=every)["ms"]
    node_bare = run_client(args, "latency", *node_echo, *calls, command=[args.bare, args.node, args.everything])["ms"]

    # 4. Many clients at once over HTTP: direct, then through serve (the same client code).
    load = lambda url: load_run(args, url)
    demo_http = DemoHttp(args.toolport)
    try:
        load_direct = load(demo_http.url)
    finally:
        demo_http.stop()
    http_serve = serve_http(one)
    try:
        load_serve = load(http_serve.url)
    finally:
        http_serve.stop()

    # 2. tools/list with ten servers.
    ten = {f"s{i}": ["--prefix", f"s{i}_", "--tools", str(TOOLS_EACH)] for i in range(1, SERVERS + 1)}
    ten_cmd = home_with(ten, args.toolport)
    cold = []
    tools = 0
    for _ in range(args.runs):
        started = time.perf_counter()
        tools = run_client(args, "list", "--calls", "1", command=ten_cmd)["tools"]
        cold.append((time.perf_counter() - started) * 1000)
    servers_json = os.path.join(tempfile.mkdtemp(prefix="serve-bench-"), "servers.json")
    json.dump([{"name": n, "command": args.toolport, "args": ["demo-server", *a]} for n, a in ten.items()],
              open(servers_json, "w"))
    py_cold, py_tools = [], 0
    for _ in range(args.runs):
        started = time.perf_counter()
        out = subprocess.run([args.python, args.py_client, servers_json, "--concurrent"], capture_output=True,
                             text=True, timeout=300, check=True)
        py_cold.append((time.perf_counter() - started) * 1000)
        py_tools = int(out.stdout.split()[0])
    relist = run_client(args, "list", *calls, command=ten_cmd)["ms"]

    # 3. Peak RSS of serve --http with ten servers, after calls and listings went through it.
    serve = serve_http(ten_cmd)
    try:
        rss_idle = serve.status("VmRSS")
        run_client(args, "list", *calls, url=serve.url)
        run_client(args, "latency", "--tool", "s1_echo", "--args", '{"message": "bench"}', *calls, url=serve.url)
        hwm, rss = serve.status("VmHWM"), serve.status("VmRSS")
    finally:
        serve.stop()

    expected_tools = SERVERS * (TOOLS_EACH + 6)
    ms = lambda v: f"{v:.3f} ms"
    lines = [
        "# toolport serve: what fronting costs a client",
        "",
        f"Measured by `bench/serve.sh` on {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, "
        f"Python SDK client (`tests/serve/client.py`), demo-servers of this build (`{args.toolport}`).",
        "Medians; expect ±60% between runs on this machine.",
        "",
        f"## One tool call (`echo`), median of {args.calls} calls in one session",
        "",
        "| path | median | p90 | vs direct |",
        "|---|---|---|---|",
        f"| Python SDK → demo-server (stdio), direct | {ms(median(direct))} | {ms(p90(direct))} | 1.00× |",
        f"| Python SDK → `toolport serve` (stdio) → demo-server | {ms(median(stdio))} | {ms(p90(stdio))} | "
        f"{median(stdio) / median(direct):.2f}× |",
        f"| floor: Python SDK → bare rmcp relay (`examples/bare_relay.rs`) → demo-server | {ms(median(bare))} | "
        f"{ms(p90(bare))} | {median(bare) / median(direct):.2f}× |",
        f"| Python SDK → `toolport serve --http` → demo-server (stdio) | {ms(median(http))} | {ms(p90(http))} | "
        f"{median(http) / median(direct):.2f}× |",
        "",
        "The same hop against other baselines (each ratio against its own direct row):",
        "",
        "| path | median | p90 | vs its direct |",
        "|---|---|---|---|",
        f"| Python SDK → demo-server `--http`, direct | {ms(median(http_direct))} | {ms(p90(http_direct))} | 1.00× |",
        f"| Python SDK → `toolport serve --http` → demo-server (stdio) | {ms(median(http))} | {ms(p90(http))} | "
        f"{median(http) / median(http_direct):.2f}× |",
        f"| Python SDK → demo-server `sleep 5 ms`, direct | {ms(median(work_direct))} | {ms(p90(work_direct))} | 1.00× |",
        f"| Python SDK → `toolport serve` → demo-server `sleep 5 ms` | {ms(median(work_serve))} | "
        f"{ms(p90(work_serve))} | {median(work_serve) / median(work_direct):.2f}× |",
        f"| Python SDK → server-everything `echo` (Node, stdio), direct | {ms(median(node_direct))} | "
        f"{ms(p90(node_direct))} | 1.00× |",
        f"| Python SDK → `toolport serve` → server-everything `echo` | {ms(median(node_serve))} | "
        f"{ms(p90(node_serve))} | {median(node_serve) / median(node_direct):.2f}× |",
        f"| floor: Python SDK → bare rmcp relay → server-everything `echo` | {ms(median(node_bare))} | "
        f"{ms(p90(node_bare))} | {median(node_bare) / median(node_direct):.2f}× |",
        "",
        f"## {args.clients} clients at once over HTTP, {args.load_calls} `echo` calls each "
        f"(`bench/serve_load.py`, one process and session per client)",
        "",
        "| path | calls/s | wall time | errors | vs direct |",
        "|---|---|---|---|---|",
        f"| {args.clients} × Python SDK → demo-server `--http`, direct | {load_direct['per_second']:.0f} | "
        f"{load_direct['seconds']:.2f} s | {load_direct['errors']} | 1.00× |",
        f"| {args.clients} × Python SDK → `toolport serve --http` → demo-server (stdio) | "
        f"{load_serve['per_second']:.0f} | {load_serve['seconds']:.2f} s | {load_serve['errors']} | "
        f"{load_serve['per_second'] / load_direct['per_second']:.2f}× |",
        "",
        f"## `tools/list` with {SERVERS} demo-servers ({tools} tools through serve; {py_tools} listed directly; "
        f"{expected_tools} expected)",
        "",
        "| what | median |",
        "|---|---|",
        f"| cold: spawn `serve`, connect {SERVERS} servers, initialize, first `tools/list` ({args.runs} runs) | "
        f"{median(cold):.1f} ms |",
        f"| cold: the Python SDK connecting to the {SERVERS} itself, concurrently, listing each ({args.runs} runs) | "
        f"{median(py_cold):.1f} ms |",
        f"| warm: one more `tools/list` through serve, in the same session ({args.calls} times) | {ms(median(relist))} |",
        "",
        f"## Memory of `serve --http` with {SERVERS} servers",
        "",
        "| what | kB |",
        "|---|---|",
        f"| RSS once listening | {rss_idle} |",
        f"| RSS after {args.calls} listings and {args.calls} calls | {rss} |",
        f"| peak RSS (VmHWM) | {hwm} |",
        "",
        "The demo-servers' own memory is not included (each is its own process).",
    ]
    if tools != expected_tools:
        lines += ["", f"**Warning:** serve listed {tools} tools, expected {expected_tools}."]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "serve.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def load_run(args, url):
    """bench/serve_load.py against `url`: calls/s of --clients clients at once."""
    argv = [args.python, args.load, "--url", url, "--clients", str(args.clients), "--calls", str(args.load_calls)]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        sys.exit(f"serve.py: serve_load.py printed no JSON:\n{out.stdout}\n{out.stderr}")


def p90(values):
    return sorted(values)[int(len(values) * 0.9)]


if __name__ == "__main__":
    main()
