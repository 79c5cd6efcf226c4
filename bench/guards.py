"""The cost of a guard a call (issue 48, item 6): one pass-through guard plugin, and a chain of
three, against no guard, in one run.

Each row is one long-lived `toolport serve` over stdio, driven by the Python SDK's
`ClientSession` in this process, in front of the binary's own `demo-server`; the tool called is
its `echo` (`{"message": "hi"}`). Rows: `none` (no `guards`), `one` (`"guards": ["pass1"]`),
`three` (`["pass1", "pass2", "pass3"]`, three store entries naming the same component). The
guard is `fixture_guard_pass.wasm`, which passes both hooks without reading what it is given: a
bare name is both phases, so a guarded call is two sandboxed calls per guard. Each run: start
serve, `initialize`, `tools/list`, --warm calls (plugins compiled, the server connected, the
pools warm), then --calls timed calls. Per call: the wall time (the client's median over the
timed calls) and serve's own CPU over the timed calls (all its threads, not its server's; read
from /proc/PID/task/*/schedstat in ns when no thread left during the calls, else from
/proc/PID/stat in clock ticks). Rows interleaved over --rounds, the order turned each round; the
added cost and the ratios are paired by round against that round's `none`.

Before measuring, each guarded home is checked through `toolport call`: the chain as measured
answers `hi`, and the same chain with its last entry swapped for `fixture_guard_deny_all`
refuses the call (so the chain is read and every guard of it is on the path).

    guards.py --toolport TOOLPORT --plugins DIR [--calls N] [--warm N] [--rounds N] [--perf FILE]

--perf FILE records serve (`perf record --call-graph dwarf`: the release build has no frame
pointers) over one more run of the chain of three, after the rounds; read it with `perf report`.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROWS = {"none": [], "one": ["pass1"], "three": ["pass1", "pass2", "pass3"]}
LABELS = {"none": "no guard", "one": "one pass-through guard", "three": "chain of three"}
ARGS = {"message": "hi"}


def home(toolport, plugins, guards, prefix):
    """A temporary home + workspace enabling demo-server with the workspace's `guards`; the
    `toolport --home … --workspace …` prefix of its commands."""
    root = tempfile.mkdtemp(prefix=prefix)
    home_dir, workspace = os.path.join(root, "home"), os.path.join(root, "ws")
    os.makedirs(os.path.join(workspace, ".toolport"))
    os.makedirs(home_dir)
    guard = lambda stem: {"kind": "guard", "path": os.path.join(plugins, f"{stem}.wasm")}
    store = {
        "mcpServers": {"demo": {"type": "stdio", "command": toolport, "args": ["demo-server"]}},
        "plugins": {**{f"pass{i}": guard("fixture_guard_pass") for i in (1, 2, 3)},
                    "deny": guard("fixture_guard_deny_all")},
    }
    json.dump(store, open(os.path.join(home_dir, "mcp.json"), "w"))
    settings = {"enabledMcpServers": ["demo"]}
    if guards:
        settings["guards"] = guards
    json.dump(settings, open(os.path.join(workspace, ".toolport", "workspace.json"), "w"))
    return [toolport, "--home", home_dir, "--workspace", workspace]


def check(toolport, plugins, name, guards):
    """The chain as measured passes `echo`; with its last guard denying, the call is refused."""
    run = subprocess.run([*home(toolport, plugins, guards, "guards-check-"), "call", "echo", json.dumps(ARGS)],
                         capture_output=True, text=True, timeout=120)
    if run.returncode != 0 or "hi" not in run.stdout:
        sys.exit(f"{name}: `toolport call echo` failed ({run.returncode}): {run.stdout} {run.stderr[-2000:]}")
    if guards:
        denied = guards[:-1] + ["deny"]
        run = subprocess.run([*home(toolport, plugins, denied, "guards-check-"), "call", "echo", json.dumps(ARGS)],
                             capture_output=True, text=True, timeout=120)
        if run.returncode == 0 or "refused by guard deny" not in run.stderr:
            sys.exit(f"{name}: a chain ending in deny-all did not refuse ({run.returncode}): {run.stderr[-2000:]}")


def serve_pid(toolport):
    """The pid of the `toolport serve` this process spawned (its only child running TOOLPORT)."""
    for task in os.listdir("/proc/self/task"):
        for pid in open(f"/proc/self/task/{task}/children").read().split():
            try:
                if os.readlink(f"/proc/{pid}/exe") == os.path.realpath(toolport):
                    return int(pid)
            except OSError:
                pass
    sys.exit("no serve process found among this process's children")


def cpu(pid):
    """(ns on CPU per live thread, CPU seconds of the process from its clock ticks)."""
    threads = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            threads[task] = int(open(f"/proc/{pid}/task/{task}/schedstat").read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return threads, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_between(before, after):
    """CPU seconds between two `cpu` readings: exact when every thread of `before` is still
    there, else the clock ticks (a thread that left took its time with it)."""
    (t0, ticks0), (t1, ticks1) = before, after
    if set(t0) <= set(t1):
        return (sum(t1.values()) - sum(t0.values())) / 1e9, "ns"
    return ticks1 - ticks0, "ticks"


async def one_run(cmd, calls, warm, perf):
    """(median wall µs a call, serve's CPU µs a call, how the CPU was read) for one serve."""
    params = StdioServerParameters(command=cmd[0], args=[*cmd[1:], "serve"], env=dict(os.environ))
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for _ in range(50):
                    if "echo" in [t.name for t in (await session.list_tools()).tools]:
                        break
                    await anyio.sleep(0.1)
                for _ in range(warm):
                    await session.call_tool("echo", ARGS)
                pid = serve_pid(cmd[0])
                recorder = None
                if perf:
                    recorder = subprocess.Popen(["perf", "record", "-F", "2000", "--call-graph", "dwarf,32768", "-q",
                                                 "-o", perf, "-p", str(pid)],
                                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    await anyio.sleep(0.5)
                before, wall = cpu(pid), []
                for _ in range(calls):
                    started = time.perf_counter()
                    result = await session.call_tool("echo", ARGS)
                    wall.append(time.perf_counter() - started)
                    if result.is_error:
                        sys.exit(f"echo answered isError: {result.content}")
                spent, how = cpu_between(before, cpu(pid))
                if recorder:
                    recorder.send_signal(2)
                    recorder.wait(timeout=60)
    return statistics.median(wall) * 1e6, spent / calls * 1e6, how


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--toolport", required=True)
    parser.add_argument("--plugins", required=True, help="the folder holding fixture_guard_pass.wasm")
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--warm", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--perf", help="also `perf record --call-graph dwarf` serve over one extra run of `three` into this file")
    args = parser.parse_args()

    for name, guards in ROWS.items():
        check(args.toolport, args.plugins, name, guards)
    cmds = {name: home(args.toolport, args.plugins, guards, f"guards-{name}-") for name, guards in ROWS.items()}
    names = list(ROWS)
    wall = {n: [] for n in names}
    cpu_us = {n: [] for n in names}
    load = [os.getloadavg()[0]]
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            w, c, how = anyio.run(one_run, cmds[name], args.calls, args.warm, None)
            wall[name].append(w)
            cpu_us[name].append(c)
            print(f"round {r} {name}: wall {w:.1f} µs a call, serve's CPU {c:.1f} µs a call ({how})", flush=True)
    load.append(os.getloadavg()[0])
    if args.perf:
        anyio.run(one_run, cmds["three"], args.calls, args.warm, args.perf)
        print(f"perf record of serve over one run of `three`: {args.perf}", flush=True)

    def fmt(xs):
        return ", ".join(f"{x:.0f}" for x in sorted(xs))

    print(f"\n{args.rounds} rounds, {args.calls} timed calls a run after {args.warm} warm; "
          f"load average {load[0]:.2f} before, {load[1]:.2f} after\n")
    print("| row | wall a call, median of rounds (each round) | serve's CPU a call, median (each round) |")
    print("|---|---|---|")
    for n in names:
        print(f"| {LABELS[n]} | {statistics.median(wall[n]):.0f} µs ({fmt(wall[n])}) "
              f"| {statistics.median(cpu_us[n]):.0f} µs ({fmt(cpu_us[n])}) |")
    print("\nPaired by round against `no guard` of the same round (median of rounds, then each round):\n")
    print("| row | added wall a call | wall ratio | added CPU a call | CPU ratio |")
    print("|---|---|---|---|---|")
    verdict = None
    for n in names[1:]:
        dw = [x - b for x, b in zip(wall[n], wall["none"])]
        rw = [x / b for x, b in zip(wall[n], wall["none"])]
        dc = [x - b for x, b in zip(cpu_us[n], cpu_us["none"])]
        rc = [x / b for x, b in zip(cpu_us[n], cpu_us["none"])]
        print(f"| {LABELS[n]} | {statistics.median(dw):.1f} µs ({fmt(dw)}) "
              f"| **{statistics.median(rw):.3f}×** ({', '.join(f'{x:.3f}' for x in sorted(rw))}) "
              f"| {statistics.median(dc):.1f} µs ({fmt(dc)}) "
              f"| **{statistics.median(rc):.3f}×** ({', '.join(f'{x:.3f}' for x in sorted(rc))}) |")
        if n == "one":
            verdict = statistics.median(dw)
    print(f"\nAim (one guard adds ≤ 30 µs a call, median added wall time): {verdict:.1f} µs, "
          f"{'met' if verdict <= 30 else 'NOT met'}")


if __name__ == "__main__":
    main()
