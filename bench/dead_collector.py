"""How long `toolport serve --http` takes to leave on SIGTERM when its OTLP collector is down
(issue 44 item 10): the last metrics and spans are flushed within 300 ms after a signal
(docs/src/observe.md "Traces"), whatever the collector does.

    python3 bench/dead_collector.py --toolport target/release/toolport [--runs N] [--baseline BIN]

Three collectors: none configured (the floor), a port that refuses connections (bound, then
closed) and a port that takes connections and never answers (bound and listening, never
accepting). Each run: serve with the built-in demo server behind it and `--metrics`, exporting
traces and metrics over OTLP/HTTP; wait until every server settled; SIGTERM; time until the
process has exited. Prints medians (and the spread) per build and collector as a Markdown table.
Standard library only.
"""

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import tempfile
import time

SETTLED = "toolport serve: every server has connected or failed"
# Only a hang reaches these.
START_TIMEOUT_S = 60
EXIT_TIMEOUT_S = 30


def workspace(toolport):
    root = tempfile.mkdtemp(prefix="dead-collector-bench-")
    home, ws = os.path.join(root, "home"), os.path.join(root, "ws")
    os.makedirs(os.path.join(ws, ".toolport"))
    os.makedirs(home)
    with open(os.path.join(home, "mcp.json"), "w") as f:
        json.dump({"mcpServers": {"demo": {"type": "stdio", "command": toolport, "args": ["demo-server"]}}}, f)
    with open(os.path.join(ws, ".toolport", "workspace.json"), "w") as f:
        json.dump({"enabledMcpServers": ["demo"]}, f)
    return home, ws


def one_exit(toolport, endpoint):
    """Seconds from SIGTERM to the exit of one serve exporting to `endpoint` (None: no OTLP)."""
    home, ws = workspace(toolport)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_") and k != "RUST_LOG"}
    if endpoint:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
        env["OTEL_EXPORTER_OTLP_PROTOCOL"] = "http/protobuf"
    argv = [toolport, "--home", home, "--workspace", ws, "serve", "--http", "127.0.0.1:0", "--metrics"]
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + START_TIMEOUT_S
    for line in proc.stderr:
        if SETTLED in line:
            break
        if time.monotonic() > deadline:
            proc.kill()
            raise SystemExit("serve did not settle")
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=EXIT_TIMEOUT_S)
    took = time.monotonic() - start
    proc.stderr.close()
    if proc.returncode != 128 + signal.SIGTERM:
        raise SystemExit(f"serve exited {proc.returncode}, not 143")
    return took


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--toolport", required=True)
    p.add_argument("--baseline")
    p.add_argument("--runs", type=int, default=7)
    args = p.parse_args()
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    refused = f"http://127.0.0.1:{closed.getsockname()[1]}"
    closed.close()
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1024)
    hung = f"http://127.0.0.1:{silent.getsockname()[1]}"
    collectors = [("no OTLP", None), ("refusing port", refused), ("never-answering port", hung)]
    builds = [("this build", os.path.abspath(args.toolport))]
    if args.baseline:
        builds.append(("baseline", os.path.abspath(args.baseline)))
    times = {(b, c): [] for b, _ in builds for c, _ in collectors}
    for _ in range(args.runs):
        for build, binary in builds:
            for collector, endpoint in collectors:
                times[(build, collector)].append(one_exit(binary, endpoint))
    print("| build | collector | SIGTERM → exit, median | min – max |")
    print("|---|---|---|---|")
    for build, _ in builds:
        for collector, _ in collectors:
            t = times[(build, collector)]
            print(f"| {build} | {collector} | {statistics.median(t) * 1000:.0f} ms "
                  f"| {min(t) * 1000:.0f} – {max(t) * 1000:.0f} ms |")


if __name__ == "__main__":
    main()
