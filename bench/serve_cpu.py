"""serve's own CPU per tool call against the bare rmcp relay (issue 47, item 7).

Each row is one process between the Python SDK client (`tests/serve/client.py latency`, `echo`
over stdio) and the same `demo-server`: the bare relay (`host/examples/bare_relay.rs`, rmcp on
both sides and nothing else), and each toolport build given as NAME=PATH (`serve` on a demo
home). A row's CPU is its process's user + system time (all its threads, not its server's),
read from /proc/PID/stat until it exits. Each round runs every row twice, with CALLS calls and
with WARM calls, rows interleaved; a call's CPU is the difference over the difference in calls,
so the start and the end (plugins compiled, servers connected, the listing) are left out.
The total over CALLS calls, start included, is shown too.

    serve_cpu.py --bare BARE --demo TOOLPORT [--calls N] [--warm N] [--rounds N] NAME=TOOLPORT...
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)
sys.path.insert(0, here)


def wrapped(out, cmd):
    """Runs CMD on our stdin/stdout; writes its own CPU seconds (not its children's) to OUT
    just before it exits."""
    proc = subprocess.Popen(cmd)
    tick, last = os.sysconf("SC_CLK_TCK"), [0.0]

    def poll():
        while proc.poll() is None:
            try:
                fields = open(f"/proc/{proc.pid}/stat").read().rsplit(")", 1)[1].split()
                last[0] = (int(fields[11]) + int(fields[12])) / tick
            except (OSError, IndexError, ValueError):
                pass
            time.sleep(0.005)

    watcher = threading.Thread(target=poll, daemon=True)
    watcher.start()
    code = proc.wait()
    watcher.join(1)
    with open(out, "w") as f:
        f.write(str(last[0]))
    return code


def one_run(python, client, cmd, calls):
    """(CPU seconds of the row's process, the client's median latency in ms) over `calls`."""
    fd, out = tempfile.mkstemp(prefix="serve-cpu-")
    os.close(fd)
    try:
        run = subprocess.run(
            [python, client, "latency", "--tool", "echo", "--args", '{"message": "bench"}',
             "--calls", str(calls), "--", sys.executable, os.path.abspath(__file__), "--wrap", out, "--", *cmd],
            capture_output=True, text=True, timeout=900)
        try:
            ms = json.loads(run.stdout)["ms"]
        except (ValueError, KeyError):
            sys.exit(f"{cmd[0]}: {run.stdout[-500:]} {run.stderr[-2000:]}")
        return float(open(out).read()), statistics.median(ms)
    finally:
        os.unlink(out)


def main():
    if len(sys.argv) > 3 and sys.argv[1] == "--wrap":
        sys.exit(wrapped(sys.argv[2], sys.argv[4:]))
    parser = argparse.ArgumentParser()
    parser.add_argument("--bare", required=True)
    parser.add_argument("--demo", required=True, help="the toolport whose demo-server every row calls")
    parser.add_argument("--python", default=os.path.join(root, "target/bench/venv/bin/python"))
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--warm", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("rows", nargs="+", help="NAME=TOOLPORT")
    args = parser.parse_args()
    from served import demo_home

    client = os.path.join(root, "tests/serve/client.py")
    _, serve_cmd = demo_home(args.demo, "serve-cpu-")
    rows = {"bare": [args.bare, args.demo, "demo-server"]}
    for row in args.rows:
        name, toolport = row.split("=", 1)
        rows[name] = [toolport] + serve_cmd[1:]
    per_call = {name: [] for name in rows}
    total = {name: [] for name in rows}
    latency = {name: [] for name in rows}
    for r in range(args.rounds):
        for name, cmd in rows.items():
            cpu, ms = one_run(args.python, client, cmd, args.calls)
            warm, _ = one_run(args.python, client, cmd, args.warm)
            per_call[name].append((cpu - warm) / (args.calls - args.warm) * 1e6)
            total[name].append(cpu / args.calls * 1e6)
            latency[name].append(ms)
            print(f"round {r} {name}: {per_call[name][-1]:.0f} us a call ({total[name][-1]:.0f} with the start), "
                  f"median {ms:.3f} ms", flush=True)
    floor = statistics.median(per_call["bare"])
    floor_total = statistics.median(total["bare"])
    # A row over the bare relay measured in the same round, a minute apart at most: the
    # machine's drift between rounds (a 2-vCPU VM's wake-ups) cancels out of each ratio.
    paired = {name: statistics.median(x / b for x, b in zip(per_call[name], per_call["bare"])) for name in rows}
    print(f"\n| row | CPU a call (median of {args.rounds}) | vs bare | vs bare, paired by round "
          f"| with the start | vs bare | latency |")
    print("|---|---|---|---|---|---|---|")
    for name in rows:
        m, t = statistics.median(per_call[name]), statistics.median(total[name])
        runs = ", ".join(str(round(x)) for x in sorted(per_call[name]))
        print(f"| {name} | {m:.0f} µs ({runs}) | {m / floor:.2f}× | {paired[name]:.2f}× | {t:.0f} µs "
              f"| {t / floor_total:.2f}× | {statistics.median(latency[name]):.3f} ms |")


if __name__ == "__main__":
    main()
