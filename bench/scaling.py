"""The numbers behind bench/scaling.sh: what toolport costs as the servers and tools grow.

    scaling.py --toolport BIN --python VENV_PYTHON --client tests/serve/client.py --out DIR
               [--runs N] [--calls N] [--lists N] [--idle S]

Every server is this build's own `toolport demo-server` over stdio, started with
`--prefix sI_ --tools N` (its six own tools come on top: `echo`, `add`, …). Three series, each
three steps of ×10 more work:
  servers grow    1, 10, 100 servers of 10 generated tools each (16, 160, 1,600 tools)
  tools grow      1 server of 100, 1,000, 10,000 generated tools (106, 1,006, 10,006 tools)
  tools spread    10 servers of 10, 100, 1,000 generated tools each (160, 1,060, 10,060 tools)
For each shape, in a fresh home prepared by one `toolport tools --json` first (the built-in
plugins compiled into the cache, the tools pinned in `tools.lock`, as a second run finds them):
  1. connect+list: `toolport tools --json` (spawn, connect all, list, shape, print, exit): wall
     and CPU (user+sys, the servers included), median of --runs;
  2. one call: `toolport call sS_echo` of the LAST-defined server (so it waits for every server
     before it), wall and CPU, median of --runs;
  3. one long-lived `toolport serve` (stdio, spoken to raw: newline-delimited JSON-RPC, so the
     figures are the host's and not a client library's): from spawn to its `every server has
     connected or failed` line, serve's own CPU by then, the first full `tools/list`, the median
     of --lists warm `tools/list`s and of --calls `echo` calls, serve's CPU while left idle for
     --idle seconds from 3 s on (none is expected), then the peak RSS (VmHWM) of serve itself and of its
     servers together;
  4. the steady call latency through `serve --http` (once every server has connected) with the
     Python SDK client (`tests/serve/client.py latency`, as bench/serve.py measures it): median
     of --calls calls in one session.
The defaults are measured: the `full` surface in the `openai` shape (a wasm plugin). The lazy
surface (`serve --lazy`) is measured once, at 10,000 tools, for comparison.
Writes DIR/scaling.md. Every figure is from this run; nothing is carried over.
"""

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from served import ServeHttp

SERIES = [
    ("servers grow (10 generated tools each)", [(1, 10), (10, 10), (100, 10)]),
    ("tools grow on one server", [(1, 100), (1, 1000), (1, 10000)]),
    ("tools spread over ten servers", [(10, 10), (10, 100), (10, 1000)]),
]
OWN_TOOLS = 6  # demo-server's own tools (`echo` among them), prefixed like the generated ones
homes = []  # each shape's temporary folder (home + workspace), removed once measured
SETTLED = re.compile(r"toolport serve: every server has connected or failed")


def fail(message):
    sys.exit(f"scaling.py: {message}")


def home_for(toolport, servers, each):
    """A temporary home + workspace with `servers` demo-servers of `each` generated tools; the
    command-line prefix that points toolport at it."""
    root = tempfile.mkdtemp(prefix=f"scaling-{servers}x{each}-")
    home, workspace = os.path.join(root, "home"), os.path.join(root, "ws")
    os.makedirs(os.path.join(workspace, ".toolport"))
    os.makedirs(home)
    defs = {
        f"s{i}": {"type": "stdio", "command": toolport,
                  "args": ["demo-server", "--prefix", f"s{i}_", "--tools", str(each)]}
        for i in range(1, servers + 1)
    }
    with open(os.path.join(home, "mcp.json"), "w") as f:
        json.dump({"mcpServers": defs}, f)
    with open(os.path.join(workspace, ".toolport", "workspace.json"), "w") as f:
        json.dump({"enabledMcpServers": list(defs)}, f)
    homes.append(root)
    return [toolport, "--home", home, "--workspace", workspace]


def clean_env():
    return {k: v for k, v in os.environ.items() if k not in ("RUST_LOG", "TOOLPORT_HOME")}


def timed(argv):
    """Runs argv to the end: (wall ms, CPU ms of it and every process it waited for, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=clean_env())
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        fail(f"{' '.join(argv[-3:])} exited {out.returncode}:\n{out.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu, out.stdout


def proc_status(pid, field):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith(field + ":"):
                return int(line.split()[1])  # kB
    except OSError:
        pass
    return 0


def proc_cpu_ms(pid):
    """utime + stime of `pid` itself (not its children), in ms."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def children(pid):
    kids = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            kids += [int(k) for k in open(f"/proc/{pid}/task/{task}/children").read().split()]
        except OSError:
            pass
    return kids


class RawServe:
    """`toolport serve` over stdio, spoken to as newline-delimited JSON-RPC by hand."""

    def __init__(self, base, *flags):
        self.spawned = time.perf_counter()
        self.proc = subprocess.Popen([*base, "serve", *flags], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=clean_env())
        self.settled_at = None
        self.settled = threading.Event()
        self.stderr = []
        threading.Thread(target=self._read_stderr, daemon=True).start()
        self.watchdog = threading.Timer(600, self.proc.kill)
        self.watchdog.start()
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "scaling", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read_stderr(self):
        for line in self.proc.stderr:
            text = line.decode(errors="replace")
            self.stderr.append(text)
            if self.settled_at is None and SETTLED.search(text):
                self.settled_at = time.perf_counter()
                self.settled.set()

    def send(self, message):
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method, params):
        """The result of one request, and how long it took (ms), its answer parsed."""
        self.next_id += 1
        started = time.perf_counter()
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                fail(f"serve closed stdout during {method}:\n{''.join(self.stderr)[-2000:]}")
            message = json.loads(line)
            if message.get("id") == self.next_id and "method" not in message:
                ms = (time.perf_counter() - started) * 1000
                if "error" in message:
                    fail(f"{method}: {message['error']}")
                return message["result"], ms

    def wait_settled(self):
        if not self.settled.wait(600):
            fail("serve never said every server had connected")
        return (self.settled_at - self.spawned) * 1000

    def stop(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.watchdog.cancel()


# tests/serve/client.py as it is, but with no cap on one SSE event: the SDK refuses events over
# 1 MiB by default, and the listing of 10,000 tools its `latency` scenario starts with is 2 MB.
SDK_SHIM = """
import functools, importlib.util, sys
import mcp.client.streamable_http as http
spec = importlib.util.spec_from_file_location("client", sys.argv[1])
client = importlib.util.module_from_spec(spec)
spec.loader.exec_module(client)
client.streamable_http_client = functools.partial(http.streamable_http_client, max_sse_event_size=None)
sys.argv = sys.argv[1:]
client.main()
"""


def sdk_latency(args, base, tool):
    serve = ServeHttp([*base, "serve"], clean_env(), until=SETTLED)
    argv = [args.python, "-c", SDK_SHIM, args.client, "latency", "--tool", tool, "--args",
            '{"message": "bench"}', "--calls", str(args.calls), "--url", serve.url]
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=clean_env())
    finally:
        serve.stop()
    try:
        value = json.loads(out.stdout)
    except ValueError:
        fail(f"latency printed no JSON:\n{out.stdout}\n{out.stderr[-2000:]}")
    if "error" in value:
        fail(f"latency failed: {value['error']}")
    return statistics.median(value["ms"])


def measure(args, servers, each):
    base = home_for(args.toolport, servers, each)
    expected = servers * (each + OWN_TOOLS)
    tool = f"s{servers}_echo"
    print(f"{servers} x {each} …", file=sys.stderr, flush=True)
    _, _, first = timed([*base, "tools", "--json"])  # prepares the home (plugin cache, pins)
    if len(json.loads(first)) != expected:
        fail(f"{servers}x{each}: tools listed {len(json.loads(first))}, expected {expected}")
    row = {"servers": servers, "each": each, "tools": expected}
    tools_runs = [timed([*base, "tools", "--json"])[:2] for _ in range(args.runs)]
    row["tools_wall"] = statistics.median(w for w, _ in tools_runs)
    row["tools_cpu"] = statistics.median(c for _, c in tools_runs)
    call_runs = [timed([*base, "call", tool, '{"message": "bench"}'])[:2] for _ in range(args.runs)]
    row["call_wall"] = statistics.median(w for w, _ in call_runs)
    row["call_cpu"] = statistics.median(c for _, c in call_runs)

    serve = RawServe(base)
    try:
        row["serve_settled"] = serve.wait_settled()
        row["serve_cpu"] = proc_cpu_ms(serve.proc.pid)
        listing, row["serve_first_list"] = serve.request("tools/list", {})
        row["serve_listed"] = len(listing["tools"])
        row["serve_list"] = statistics.median(serve.request("tools/list", {})[1] for _ in range(args.lists))
        echo = {"name": tool, "arguments": {"message": "bench"}}
        row["serve_call"] = statistics.median(serve.request("tools/call", echo)[1] for _ in range(args.calls))
        time.sleep(3)  # past the 2 s in which a just-written tools.lock is read again
        idle_from = proc_cpu_ms(serve.proc.pid)
        time.sleep(args.idle)
        row["serve_idle"] = (proc_cpu_ms(serve.proc.pid) - idle_from) / args.idle
        row["hwm"] = proc_status(serve.proc.pid, "VmHWM")
        row["children_hwm"] = sum(proc_status(k, "VmHWM") for k in children(serve.proc.pid))
    finally:
        serve.stop()
    row["sdk_call"] = sdk_latency(args, base, tool)

    if servers == 1 and each == 10000:
        lazy = RawServe(base, "--lazy")
        try:
            lazy.wait_settled()
            listing, _ = lazy.request("tools/list", {})
            row["lazy_listed"] = len(listing["tools"])
            row["lazy_list"] = statistics.median(lazy.request("tools/list", {})[1] for _ in range(args.lists))
            row["lazy_hwm"] = proc_status(lazy.proc.pid, "VmHWM")
        finally:
            lazy.stop()
    return row


METRICS = [
    ("`tools --json` wall", "tools_wall", "ms"),
    ("`tools --json` CPU (with servers)", "tools_cpu", "ms"),
    ("`call` wall", "call_wall", "ms"),
    ("`call` CPU (with servers)", "call_cpu", "ms"),
    ("serve: spawn → all connected", "serve_settled", "ms"),
    ("serve: its own CPU by then", "serve_cpu", "ms"),
    ("serve: first `tools/list`", "serve_first_list", "ms"),
    ("serve: warm `tools/list`", "serve_list", "ms"),
    ("serve: one call (raw JSON-RPC)", "serve_call", "ms"),
    ("serve --http: one call (Python SDK)", "sdk_call", "ms"),
    ("serve: CPU while idle, per second", "serve_idle", "ms"),
    ("serve: peak RSS (VmHWM)", "hwm", "kB"),
    ("servers' peak RSS, summed", "children_hwm", "kB"),
]


def fmt(value, unit):
    if unit == "kB":
        return f"{value / 1024:.1f} MB"
    return f"{value:.3f} ms" if value < 10 else f"{value:.1f} ms" if value < 100 else f"{value:.0f} ms"


def loadavg():
    return " / ".join(open("/proc/loadavg").read().split()[:3])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--toolport", required=True)
    p.add_argument("--python", required=True)
    p.add_argument("--client", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--runs", type=int, default=3, help="one-shot commands per shape (median)")
    p.add_argument("--calls", type=int, default=200, help="calls in one serve session (median)")
    p.add_argument("--lists", type=int, default=10, help="warm tools/list in one serve session (median)")
    p.add_argument("--idle", type=float, default=5.0, help="seconds serve is left idle, its CPU then measured")
    args = p.parse_args()

    load_before = loadavg()
    shapes = sorted({shape for _, steps in SERIES for shape in steps}, key=lambda s: (s[0] * (s[1] + OWN_TOOLS), s))
    rows = {}
    for shape in shapes:
        rows[shape] = measure(args, *shape)
        if os.path.basename(homes[-1]).startswith("scaling-"):  # the mkdtemp folder, nothing else
            shutil.rmtree(homes[-1], ignore_errors=True)
    load_after = loadavg()

    lines = [
        "# Cost as work grows",
        "",
        f"Measured by `bench/scaling.sh` on {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, "
        f"load average {load_before} before and {load_after} after; demo-servers of this build "
        f"(`{args.toolport}`), each with its {OWN_TOOLS} own tools on top of the generated ones. "
        f"Defaults: the full surface in the `openai` shape. One-shot commands: median of {args.runs}; "
        f"serve: median of {args.lists} warm listings and {args.calls} calls in one session.",
        "",
    ]
    for title, steps in SERIES:
        header = " | ".join(f"{s}×{e} ({rows[(s, e)]['tools']:,} tools)" for s, e in steps)
        lines += [f"## {title}", "", f"| what | {header} | growth per ×10 work |",
                  "|---|" + "---|" * len(steps) + "---|"]
        for label, key, unit in METRICS:
            values = [rows[step][key] for step in steps]
            growth = " → ".join(f"×{b / a:.1f}" if a > 0 else "–" for a, b in zip(values, values[1:]))
            lines.append(f"| {label} | " + " | ".join(fmt(v, unit) for v in values) + f" | {growth} |")
        listed = [rows[step]["serve_listed"] for step in steps]
        if listed != [rows[step]["tools"] for step in steps]:
            lines.append(f"\n**Warning:** serve's first listing had {listed} tools.")
        lines.append("")
    big = rows[(1, 10000)]
    lines += [
        "## The lazy surface at 10,000 tools (`serve --lazy`, one server)",
        "",
        "| what | full (default) | lazy |",
        "|---|---|---|",
        f"| tools listed | {big['serve_listed']:,} | {big['lazy_listed']} |",
        f"| warm `tools/list` | {fmt(big['serve_list'], 'ms')} | {fmt(big['lazy_list'], 'ms')} |",
        f"| serve's peak RSS | {fmt(big['hwm'], 'kB')} | {fmt(big['lazy_hwm'], 'kB')} |",
        "",
    ]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "scaling.md"), "w") as f:
        f.write("\n".join(lines))
    with open(os.path.join(args.out, "scaling.json"), "w") as f:
        json.dump({f"{s}x{e}": r for (s, e), r in rows.items()}, f, indent=1)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
