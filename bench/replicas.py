"""The numbers behind bench/replicas.sh: calls/s of `serve --http` replicas behind nginx.

    replicas.py --toolport BIN --python VENV_PYTHON --client tests/team/replicas_client.py
                --nginx NGINX_BIN --out DIR [--clients C] [--calls N] [--runs R]

The same clients each time: tests/team/replicas_client.py's `load` (C default `mcp.Client`s,
2026-07-28, N `echo` calls between them, each answer checked), against demo-server's `echo`
behind three settings:
  - direct: one replica, the clients talk to it;
  - nginx → 1: the same behind nginx (what the proxy hop costs);
  - nginx → 3: three replicas behind nginx, round robin, sharing --session-key-env.
Runs alternate the settings R times; the medians and their ratios go to DIR/replicas.md.
Every figure is measured on this run; nothing is carried over.
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from served import ServeHttp, demo_home

KEY_VAR = "TOOLPORT_BENCH_SESSION_KEY"
# The message nginx answers with when a replica went away (tests/team/nginx.conf.in).
GONE = "the toolport replica serving this request went away before it answered (502 from the load balancer): call again"


class Nginx:
    """nginx round robin over `upstreams`, as docs/src/serve/team.md "Replicas" shows it."""

    def __init__(self, binary, upstreams):
        self.dir = tempfile.mkdtemp(prefix="replicas-nginx-")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        d = self.dir
        servers = "".join(f"    server {u};\n" for u in upstreams)
        user = "user root;\n" if os.geteuid() == 0 else ""
        conf = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "team", "nginx.conf.in")).read()
        for name, value in (("@USER@", user), ("@DIR@", d), ("@UPSTREAMS@", servers), ("@PORT@", str(port)), ("@GONE@", GONE)):
            conf = conf.replace(name, value)
        path = os.path.join(d, "nginx.conf")
        open(path, "w").write(conf)
        self.proc = subprocess.Popen([binary, "-p", d, "-c", path, "-g", "daemon off;"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.authority = f"127.0.0.1:{port}"
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    sys.exit("replicas.py: nginx did not listen:\n" + open(os.path.join(d, "error.log")).read())
                time.sleep(0.05)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=15)


def throughput(args, authority):
    argv = [args.python, args.client, "load", "--url", f"http://{authority}/mcp", "--clients",
            str(args.clients), "--calls", str(args.calls), "--prefix", "bench", "--timeout", "600"]
    out = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=900)
    try:
        value = json.loads(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        sys.exit(f"replicas.py: the client printed no JSON:\n{out.stdout}\n{out.stderr}")
    if "error" in value:
        sys.exit(f"replicas.py: the client failed: {value['error']}")
    failed = [c for c in value["calls"] if not c.get("ok")]
    if failed:
        sys.exit(f"replicas.py: {len(failed)} calls failed, e.g. {failed[0]}")
    return value["calls_per_second"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--toolport", required=True)
    p.add_argument("--python", required=True)
    p.add_argument("--client", required=True)
    p.add_argument("--nginx", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--clients", type=int, default=4)
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()

    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_") and k not in ("RUST_LOG", "TOOLPORT_HOME")}
    env[KEY_VAR] = "bench-only-key-" + "x" * 32
    load = os.getloadavg()[0]
    helped = subprocess.run([args.toolport, "serve", "--help"], capture_output=True, text=True).stdout
    key = "--session-key-env" in helped
    # The key only changes 2025-11-25 sessions (these clients have none); a build from before
    # --session-key-env is measured without it.
    extra = ["--session-key-env", KEY_VAR] if key else []
    serves = [ServeHttp(demo_home(args.toolport, "replicas-bench-", audit={"enabled": False})[1], env, extra)
              for _ in range(3)]
    settings = {
        "direct: one replica": None,
        "nginx → one replica": [serves[0].authority],
        "nginx → three replicas (round robin)": [s.authority for s in serves],
    }
    rates = {name: [] for name in settings}
    try:
        for _ in range(args.runs):
            for name, upstreams in settings.items():
                if upstreams is None:
                    rates[name].append(throughput(args, serves[0].authority))
                    continue
                nginx = Nginx(args.nginx, upstreams)
                try:
                    rates[name].append(throughput(args, nginx.authority))
                finally:
                    nginx.stop()
    finally:
        for s in serves:
            s.stop()
    direct = statistics.median(rates["direct: one replica"])
    cores = os.cpu_count()
    lines = [
        "# Replicas behind nginx (bench/replicas.sh)",
        "",
        f"{args.clients} default `mcp.Client`s (2026-07-28), {args.calls} `echo` calls between them, through "
        f"`serve --http` → demo-server; {args.runs} runs of each setting, alternating; medians. "
        f"{cores} CPU cores, shared by the clients, nginx and every replica; load average before the run "
        f"{load:.1f}; the replicas {'share' if key else 'without'} --session-key-env.",
        "",
        "| setting | calls/s (median) | vs direct | runs |",
        "|---|---|---|---|",
        *[f"| {name} | {statistics.median(r):.0f} | {statistics.median(r) / direct:.2f}× | "
          f"{', '.join(f'{x:.0f}' for x in r)} |" for name, r in rates.items()],
    ]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "replicas.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
