"""The numbers behind bench/observe.sh: what watching costs a client of `serve --http`.

    observe.py --toolport BIN --python VENV_PYTHON --client tests/serve/client.py --out DIR
               [--clients C] [--calls N] [--runs R]

Calls per second through `serve --http` fronting demo-server's `echo`, from C Python SDK
clients (tests/serve/client.py's `latency` scenario, `mcp.Client` in its default mode) calling
at once, N calls each: throughput is C×N over the busiest client's summed call time, so the
clients' own start-up is left out. Two settings of the same serve:
  - off: no OTEL variable, no --metrics, the audit log switched off;
  - on: the audit log written, OTLP traces and metrics sent over HTTP/protobuf to a receiver in
    this process (it answers 200 and drops the body, so the receiver's cost is not serve's),
    --metrics, and /metrics scraped once at the end of each run.
Runs alternate off, on, off, on … R times each; the medians and their ratio go to
DIR/observe.md. Every figure is measured on this run; nothing is carried over.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from served import ServeHttp, demo_home


PREFIX = "observe-bench-"
LABELS = {
    "off": "off: no audit log, no OTEL variables, no --metrics",
    "on": "on: audit log, OTLP traces + metrics (HTTP), --metrics",
}


class Sink(BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver that reads each request whole, counts it and answers 200."""

    received = 0

    def do_POST(self):  # noqa: N802 (http.server's name)
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        Sink.received += 1
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_args):
        pass


def throughput(args, url):
    argv = [args.python, args.client, "latency", "--client", "default", "--url", url, "--tool", "echo",
            "--args", json.dumps({"message": "bench"}), "--calls", str(args.calls), "--timeout", "600"]
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(args.clients)]
    busiest = 0.0
    for p in procs:
        out, err = p.communicate(timeout=900)
        try:
            value = json.loads(out)
        except ValueError:
            sys.exit(f"observe.py: a client printed no JSON:\n{out}\n{err}")
        if "error" in value:
            sys.exit(f"observe.py: a client failed: {value['error']}")
        busiest = max(busiest, sum(value["ms"]) / 1000)
    return args.clients * args.calls / busiest


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--toolport", required=True)
    p.add_argument("--python", required=True)
    p.add_argument("--client", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--clients", type=int, default=4)
    p.add_argument("--calls", type=int, default=500)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--parts", action="store_true", help="also each part alone (audit, OTLP, --metrics)")
    args = p.parse_args()

    sink = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{sink.server_address[1]}"

    base = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_") and k not in ("RUST_LOG", "TOOLPORT_HOME")}
    settings = {
        "off": (demo_home(args.toolport, PREFIX, audit={"enabled": False}), base, []),
        "on": (demo_home(args.toolport, PREFIX, audit={"enabled": True}), {
            **base,
            "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        }, ["--metrics"]),
    }
    if args.parts:
        otlp = {**base, "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}
        settings["audit log only"] = (demo_home(args.toolport, PREFIX, audit={"enabled": True}), base, [])
        settings["OTLP only (traces + metrics)"] = (demo_home(args.toolport, PREFIX, audit={"enabled": False}), otlp, [])
        settings["--metrics only"] = (demo_home(args.toolport, PREFIX, audit={"enabled": False}), base, ["--metrics"])
    rates = {name: [] for name in settings}
    cpu = {name: [] for name in settings}
    audit_lines = 0
    for _ in range(args.runs):
        for name, ((home_dir, cmd), env, extra) in settings.items():
            serve = ServeHttp(cmd, env, extra)
            try:
                before = serve.cpu_seconds()
                rates[name].append(throughput(args, serve.url))
                cpu[name].append((serve.cpu_seconds() - before) * 1e6 / (args.clients * args.calls))
                if name == "on":
                    scraped = urllib.request.urlopen(serve.url.replace("/mcp", "/metrics"), timeout=10).read()
                    if b"toolport" not in scraped:
                        sys.exit("observe.py: /metrics has no toolport series")
            finally:
                serve.stop()
            if name == "on":
                log = os.path.join(home_dir, "audit", "calls.jsonl")
                audit_lines = sum(1 for _ in open(log)) if os.path.exists(log) else 0
    off, on = statistics.median(rates["off"]), statistics.median(rates["on"])
    cpu_off = statistics.median(cpu["off"])
    if audit_lines == 0:
        sys.exit("observe.py: the audit log stayed empty with audit on")
    if Sink.received == 0:
        sys.exit("observe.py: the OTLP receiver got nothing with OTLP on")
    lines = [
        "# What watching costs (bench/observe.sh)",
        "",
        f"{args.clients} clients × {args.calls} `echo` calls through `serve --http` → demo-server, "
        f"{args.runs} runs of each setting, alternating; medians.",
        "",
        "| setting | calls/s (median) | runs | serve's CPU per call (median) |",
        "|---|---|---|---|",
        *[f"| {LABELS.get(name, name)} | {statistics.median(r):.0f} ({off / statistics.median(r):.3f}×) | "
          f"{', '.join(f'{x:.0f}' for x in r)} | {statistics.median(cpu[name]):.0f} µs "
          f"({statistics.median(cpu[name]) / cpu_off:.2f}×) |"
          for name, r in rates.items()],
        "",
        f"off / on: **{off / on:.3f}×** calls/s (aim ≤ 1.05×); serve's CPU per call "
        f"{statistics.median(cpu['on']) / cpu_off:.2f}×. The receiver took {Sink.received} OTLP requests; "
        f"the last run's audit log holds {audit_lines} lines.",
    ]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "observe.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
