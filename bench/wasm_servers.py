"""The numbers behind bench/wasm_servers.sh: what running an MCP server sandboxed costs.

    wasm_servers.py --toolport BIN --server-files BIN --peers DIR --npx BIN --out DIR
                    [--calls N] [--big-calls N] [--warmup N] [--diag-calls N] [--runs N]
                    [--idle-runs N] [--idle-seconds S] [--walk-calls N] [--walk-big-calls N]
                    [--parts calls,walks,start,idle]

The sandboxed server is toolport's built-in `files` (`{"type": "wasm", "builtin": "files"}`, a
wasm32-wasip2 component run in-process by wasmtime); its native twin is the same crate built
for the host (`server_files DIR`, an ordinary stdio child). Every figure is from this run.

1. One `read_text_file` call, wasm vs native: two long-lived `toolport serve` processes (stdio),
   one fronting the wasm `files` over a temporary folder, one fronting `server_files` over the
   same folder, both driven by the official Python SDK client in one event loop; after a
   warm-up, each round calls every side once (the order rotating each round), so a load spike
   hits all sides alike. A 4 KiB file (--calls rounds) and a 1 MiB file (--big-calls rounds).
   A third side, the Python client calling `server_files` directly (no toolport), is the
   diagnostic that shows what the serve hop itself costs; then, on the two serve sides, calls
   with less and less file-system work (--diag-calls rounds each) show where the wasm side's
   extra time goes (every stat, open and read of the guest is a wasmtime-wasi host call).
   Walks and searches: `list_directory`, `search_files` and `search_content` over 200 files
   (--walk-calls rounds) and 10,000 (--walk-big-calls rounds), wasm vs native, the same way.
2. Start to first `tools/list`: one `toolport tools --json` process per run (connect, list,
   close, exit) with one server enabled: the wasm `files` with its compiled cache warm; the
   same in a fresh home (compiling it); the native `server_files`; the reference
   `@modelcontextprotocol/server-filesystem` (npm) as people configure it, through `npx -y`
   (run from the peers folder, where it is installed, so npx downloads nothing), and through
   `node …/dist/index.js`; and no server at all (the floor). Each repetition runs every row
   once, in turn, after one warm-up each.
3. Idle CPU: a `toolport serve` fronting only the wasm `files`, and the baseline, one fronting
   only the native `server_files` (the wasm engine loaded all the same); once each has
   answered a call, utime+stime of each process (/proc/PID/stat) over --idle-seconds, read for
   both over the same window; the baseline's child separately. The same window also read per
   thread from /proc/PID/task/TID/schedstat (nanoseconds, where stat counts clock ticks).

Writes DIR/wasm_servers.md (with --parts naming fewer than all four, DIR/wasm_servers.PARTS.md).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

FS_PACKAGE = "@modelcontextprotocol/server-filesystem"
# The built-in `files` server's tools (and its native twin's).
FILES_TOOLS = 9
SMALL = 4096
BIG = 1024 * 1024  # the most `read_text_file` returns at once (READ_CAP)
GUEST = "/data"
# Each one-shot command is well under a few seconds; this only stops a hang.
COMMAND_SECONDS = 120
# The same for one MCP call (a 1 MiB read is tens of milliseconds).
CALL_SECONDS = 60
CLK_TCK = os.sysconf("SC_CLK_TCK")


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("RUST_LOG", "TOOLPORT_HOME")}
    env.update(extra)
    return env


def fail(message):
    sys.exit(f"wasm_servers.py: {message}")


class Home:
    """A temporary home and workspace with `defs` (name → definition) in the store, all enabled."""

    def __init__(self, args, work, label, defs):
        self.args = args
        self.home = Path(tempfile.mkdtemp(prefix=f"{label}-", dir=work))
        self.ws = self.home / "ws"
        (self.ws / ".toolport").mkdir(parents=True)
        (self.home / "mcp.json").write_text(json.dumps({"mcpServers": defs}))
        # No reserved names: the npm server's `read_file` and `write_file` are two of the default
        # four (an agent's own tools), which would keep it out; the same file for every row.
        # A result is stored and cut past `maxResultTokens` (25,000 by default): the 1 MiB read
        # is measured whole, as it was before serve cut long results.
        workspace = {"enabledMcpServers": list(defs), "reservedToolNames": [], "maxResultTokens": 10_000_000}
        (self.ws / ".toolport" / "workspace.json").write_text(json.dumps(workspace))

    def cmd(self, *words):
        return [self.args.toolport, "--home", str(self.home), "--workspace", str(self.ws), *words]

    def tools(self, expected=None):
        """`toolport tools --json`, spawn to exit; returns (wall seconds, tools listed)."""
        started = time.perf_counter()
        out = subprocess.run(self.cmd("tools", "--json"), stdin=subprocess.DEVNULL, capture_output=True,
                             text=True, env=clean_env(), timeout=COMMAND_SECONDS)
        wall = time.perf_counter() - started
        if out.returncode != 0:
            fail(f"tools --json in {self.home} exited {out.returncode}:\n{out.stdout}{out.stderr}")
        if out.stderr.strip():
            # A server that failed to connect is a warning on stderr and no tools: not a figure.
            fail(f"tools --json in {self.home} warned:\n{out.stderr}")
        count = len(json.loads(out.stdout))
        if expected is not None and count != expected:
            fail(f"tools --json in {self.home} listed {count} tools, wanted {expected}")
        return wall, count


def wasm_def(data):
    return {"type": "wasm", "builtin": "files", "grants": {"dirs": [{"host": str(data), "guest": GUEST}]}}


def native_def(args, data):
    return {"type": "stdio", "command": args.server_files, "args": [str(data)]}


def npx_def(args, data):
    # The peers' node first on PATH: npx is a `#!/usr/bin/env node` script.
    path = f"{Path(args.peers) / 'bin'}:{os.environ.get('PATH', '')}"
    return {"type": "stdio", "command": args.npx, "args": ["-y", FS_PACKAGE, str(data)], "cwd": args.peers,
            "env": {"PATH": path}}


def node_def(args, data):
    return {"type": "stdio", "command": str(Path(args.peers) / "bin" / "node"), "args": [fs_entry(args), str(data)]}


def fs_entry(args):
    return str(Path(args.peers) / "node_modules" / FS_PACKAGE / "dist" / "index.js")


def stats(samples, scale=1000.0):
    xs = sorted(s * scale for s in samples)
    q = statistics.quantiles(xs, n=10, method="inclusive") if len(xs) >= 2 else [xs[0]] * 9
    return {"median": statistics.median(xs), "p10": q[0], "p90": q[-1], "min": xs[0], "max": xs[-1], "n": len(xs)}


# --- 1. calls ---------------------------------------------------------------------------------

class Side:
    """One MCP session over stdio; `root` is where it sees the data folder."""

    def __init__(self, key, command, root):
        self.key, self.command, self.root = key, command, root
        self.session = None
        self.samples = {}

    async def open(self, stack, errlog):
        params = StdioServerParameters(command=self.command[0], args=self.command[1:], env=clean_env())
        read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
        self.session = await stack.enter_async_context(ClientSession(read, write))
        with anyio.fail_after(CALL_SECONDS):
            await self.session.initialize()
            names = [t.name for t in (await self.session.list_tools()).tools]
        if not {"read_text_file", "list_allowed_directories", "get_file_info"} <= set(names):
            fail(f"{self.key}: the files tools are not all among {names}")

    async def call(self, probe):
        """One timed call of `probe`; the answer is checked after the clock stops."""
        arguments = probe.arguments(self.root)
        with anyio.fail_after(CALL_SECONDS):
            started = time.perf_counter()
            result = await self.session.call_tool(probe.tool, arguments)
            wall = time.perf_counter() - started
        text = "".join(c.text for c in result.content if getattr(c, "type", None) == "text")
        if result.is_error or (probe.size is not None and len(text) != probe.size):
            fail(f"{self.key}: {probe.tool} {arguments} answered "
                 f"{'isError' if result.is_error else f'{len(text)} characters'}: {text[:200]!r}")
        return wall

    async def read(self, which, size):
        return await self.call(Probe(which, "read_text_file", {"path": f"{which}.txt"}, size))


class Probe:
    """A tool call with its arguments (`path` taken under the side's root) and the expected size."""

    def __init__(self, key, tool, arguments, size=None):
        self.key, self.tool, self.args, self.size = key, tool, arguments, size

    def arguments(self, root):
        return {k: (f"{root}/{v}" if k == "path" else v) for k, v in self.args.items()}


# Where the wasm side's extra time per call goes: the same server code behind serve, with more
# and more file-system work per call. In the guest each stat, open, read and directory read is a
# wasmtime-wasi host call; the last two probes make hundreds of them (MANY files) for a short
# answer. (key, tool, arguments, expected text size, rounds divisor)
MANY = 200
PROBES = [
    (Probe("dirs", "list_allowed_directories", {}), 1),
    (Probe("info", "get_file_info", {"path": "small.txt"}), 1),
    (Probe("small", "read_text_file", {"path": "small.txt"}, SMALL), 1),
    (Probe("list", "list_directory", {"path": "many"}), 5),
    (Probe("search", "search_content", {"path": "many", "pattern": "no such text"}), 5),
]


# Walks and searches, wasm vs native (the `files` server has no `directory_tree`): `many` is
# 200 files of 4 KiB in one folder; `tree` is 10,000 of 4 KiB in 100 folders of 100; `flat` is
# 10,000 empty files in one folder. Every search finds nothing, so it goes through everything.
# (key, tool, arguments, files, big: rounds from --walk-big-calls)
LOTS = 10_000
WALKS = [
    ("list200", "list_directory", {"path": "many"}, MANY, False),
    ("list10k", "list_directory", {"path": "flat"}, LOTS, True),
    ("names200", "search_files", {"path": "many", "pattern": "no such name"}, MANY, False),
    ("names10k", "search_files", {"path": "tree", "pattern": "no such name"}, LOTS, True),
    ("content200", "search_content", {"path": "many", "pattern": "no such text"}, MANY, False),
    ("content10k", "search_content", {"path": "tree", "pattern": "no such text"}, LOTS, True),
]


async def rounds(sides, probe, count, warmup, label):
    for _ in range(warmup):
        for side in sides:
            await side.call(probe)
    samples = {side.key: [] for side in sides}
    for i in range(count):
        if i % 100 == 0:
            print(f"{label}: round {i + 1}/{count} …", file=sys.stderr)
        # The order rotates every round, so no side always goes first after the client's pause.
        for side in sides[i % len(sides):] + sides[:i % len(sides)]:
            samples[side.key].append(await side.call(probe))
    for side in sides:
        side.samples[(label, probe.key)] = samples[side.key]


async def measure_calls(args, work, data):
    wasm = Home(args, work, "calls-wasm", {"files": wasm_def(data)})
    native = Home(args, work, "calls-native", {"files": native_def(args, data)})
    sides = [
        Side("wasm", wasm.cmd("serve", "--no-watch"), GUEST),
        Side("native", native.cmd("serve", "--no-watch"), str(data)),
        Side("direct", [args.server_files, str(data)], str(data)),
    ]
    small = Probe("small", "read_text_file", {"path": "small.txt"}, SMALL)
    big = Probe("big", "read_text_file", {"path": "big.txt"}, BIG)
    # The first start compiles the component into the home's cache: not a figure here, and
    # done before `serve` starts, whose first `tools/list` would not wait for a slow compile.
    wasm.tools(FILES_TOOLS)
    with open(work / "calls-stderr.log", "w") as errlog:
        async with AsyncExitStack() as stack:
            for side in sides:
                await side.open(stack, errlog)
            if "calls" in args.parts:
                await rounds(sides, small, args.calls, args.warmup, "calls")
                await rounds(sides, big, args.big_calls, max(1, args.warmup // 10), "calls")
                for probe, divisor in PROBES:
                    await rounds(sides[:2], probe, max(1, args.diag_calls // divisor), args.warmup // 5, "diag")
            if "walks" in args.parts:
                for key, tool, arguments, _, big in WALKS:
                    count = args.walk_big_calls if big else args.walk_calls
                    await rounds(sides[:2], Probe(key, tool, arguments), count, max(1, count // 10), "walks")
    return {s.key: {k: stats(v) for k, v in s.samples.items()} for s in sides}


# --- 2. start to first tools/list -------------------------------------------------------------

def measure_startup(args, work, data):
    homes = {
        "floor": Home(args, work, "start-none", {}),
        "wasm": Home(args, work, "start-wasm", {"files": wasm_def(data)}),
        "native": Home(args, work, "start-native", {"files": native_def(args, data)}),
        "node": Home(args, work, "start-node", {"fs": node_def(args, data)}),
        "npx": Home(args, work, "start-npx", {"fs": npx_def(args, data)}),
    }
    expected = {"floor": 0, "wasm": FILES_TOOLS, "native": FILES_TOOLS, "node": None, "npx": None}

    def fresh():
        """The wasm `files` in a home whose cache is empty: compiled at this start."""
        return Home(args, work, "start-fresh", {"files": wasm_def(data)}).tools(FILES_TOOLS)[0]

    counts = {}
    # Warm-up: page cache, the binary, Node's compile cache; and the wasm home's component cache.
    for key, home in homes.items():
        counts[key] = home.tools(expected[key])[1]
    if counts["npx"] != counts["node"] or counts["node"] == 0:
        fail(f"{FS_PACKAGE} listed {counts['node']} tools through node and {counts['npx']} through npx")
    cache = homes["wasm"].home / "cache"
    if not cache.is_dir() or not any(cache.rglob("*")):
        fail(f"the wasm home's cache {cache} is empty after a start: the cached rows would not be cached")
    fresh()

    samples = {key: [] for key in [*homes, "fresh"]}
    for i in range(args.runs):
        print(f"start: run {i + 1}/{args.runs} …", file=sys.stderr)
        for key, home in homes.items():
            samples[key].append(home.tools(expected[key])[0])
        samples["fresh"].append(fresh())
    return {k: stats(v) for k, v in samples.items()}, counts


# --- 3. idle CPU -------------------------------------------------------------------------------

def proc_cpu_ticks(pid):
    """utime + stime of a process, in clock ticks (/proc/PID/stat fields 14 and 15)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[11]) + int(fields[12])


def thread_ns(pid):
    """Each live thread by id: (name, ns on CPU, times it was run), from schedstat."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            fields = (task / "schedstat").read_text().split()
            out[task.name] = (name, int(fields[0]), int(fields[2]))
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended meanwhile
    return out


def children(pid):
    kids = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            kids += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return kids


def serve_pid(home):
    """The `toolport serve` this process spawned for `home` (the SDK does not expose it)."""
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue
        if ppid == me and str(home.home).encode() in argv and b"serve" in argv:
            return int(entry.name)
    fail(f"no toolport serve process for {home.home} among this process's children")


def snapshot(pid):
    return {"ticks": proc_cpu_ticks(pid), "threads": thread_ns(pid)}


def window(before, after):
    """CPU over the window: ms from stat's ticks, ms from schedstat, and per thread name the ms
    and the number of times its threads were run (each is a wake-up)."""
    per_name, runs = {}, {}
    for tid, (name, ns, count) in after["threads"].items():
        _, ns0, count0 = before["threads"].get(tid, (name, 0, 0))
        per_name[name] = per_name.get(name, 0) + (ns - ns0) / 1e6
        runs[name] = runs.get(name, 0) + count - count0
    return {"stat_ms": (after["ticks"] - before["ticks"]) * 1000 / CLK_TCK, "ns_ms": sum(per_name.values()),
            "threads": per_name, "runs": runs, "nthreads": len(after["threads"])}


async def measure_idle(args, work, data):
    reps = []
    for rep in range(args.idle_runs):
        print(f"idle: run {rep + 1}/{args.idle_runs} ({args.idle_seconds:g} s) …", file=sys.stderr)
        wasm = Home(args, work, "idle-wasm", {"files": wasm_def(data)})
        base = Home(args, work, "idle-native", {"files": native_def(args, data)})
        # Each home's first start compiles the component into its own cache, before the window.
        sides = [
            Side("wasm", wasm.cmd("serve", "--no-watch"), GUEST),
            Side("native", base.cmd("serve", "--no-watch"), str(data)),
        ]
        with open(work / "idle-stderr.log", "a") as errlog:
            async with AsyncExitStack() as stack:
                for side in sides:
                    await side.open(stack, errlog)
                    await side.read("small", SMALL)  # connected: the first call answered
                pids = {"wasm": serve_pid(wasm), "native": serve_pid(base)}
                kids = children(pids["native"])
                if len(kids) != 1:
                    fail(f"the baseline serve has children {kids}, expected the one server_files")
                if children(pids["wasm"]):
                    fail(f"the wasm serve has child processes {children(pids['wasm'])}")
                pids["child"] = kids[0]
                # Let the start settle (the guest's first tick, rmcp's tasks) before the window.
                await anyio.sleep(1.0)
                before = {k: snapshot(p) for k, p in pids.items()}
                await anyio.sleep(args.idle_seconds)
                after = {k: snapshot(p) for k, p in pids.items()}
                engines = {k: any(t[0] == "toolport-epoch" for t in after[k]["threads"].values())
                           for k in ("wasm", "native")}
        if not all(engines.values()):
            fail(f"the wasm engine's ticker thread (toolport-epoch) is missing: {engines}; "
                 "the baseline would not carry the engine's own idle cost")
        reps.append({k: window(before[k], after[k]) for k in pids})
    return reps


# --- report -------------------------------------------------------------------------------------

def tool_version(argv):
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--toolport", required=True)
    p.add_argument("--server-files", required=True, help="the native server_files build")
    p.add_argument("--peers", required=True, help="<target>/peers, with server-filesystem installed")
    p.add_argument("--npx", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--calls", type=int, default=500, help="rounds of 4 KiB reads (each side once a round)")
    p.add_argument("--big-calls", type=int, default=100, help="rounds of 1 MiB reads")
    p.add_argument("--warmup", type=int, default=50, help="warm-up calls per side (a tenth for 1 MiB)")
    p.add_argument("--diag-calls", type=int, default=500, help="rounds of each diagnostic call")
    p.add_argument("--runs", type=int, default=20, help="repetitions of the start rows")
    p.add_argument("--idle-runs", type=int, default=3)
    p.add_argument("--idle-seconds", type=float, default=10.0)
    p.add_argument("--walk-calls", type=int, default=100, help="rounds of each walk over 200 files")
    p.add_argument("--walk-big-calls", type=int, default=20, help="rounds of each walk over 10,000 files")
    p.add_argument("--parts", default="calls,walks,start,idle",
                   help="which parts to measure (a comma-separated subset of calls, walks, start, idle)")
    args = p.parse_args()
    args.parts = set(args.parts.split(","))
    if not args.parts <= {"calls", "walks", "start", "idle"}:
        fail(f"--parts: unknown {sorted(args.parts - {'calls', 'walks', 'start', 'idle'})}")
    for what, path in (("--toolport", args.toolport), ("--server-files", args.server_files), ("--npx", args.npx)):
        if not os.access(path, os.X_OK):
            fail(f"{what} {path} is not an executable file")
    node = Path(args.peers) / "bin" / "node"
    if not os.access(node, os.X_OK) or not Path(fs_entry(args)).is_file():
        fail(f"{FS_PACKAGE} is not installed in {args.peers} (run tests/peers/install_filesystem.sh)")
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load_before = os.getloadavg()

    work = Path(tempfile.mkdtemp(prefix="toolport-wasm-bench-"))
    try:
        data = work / "data"
        data.mkdir()
        line = "".join(chr(ord("a") + i % 26) for i in range(63)) + "\n"
        for name, size in (("small.txt", SMALL), ("big.txt", BIG)):
            (data / name).write_text((line * (size // len(line) + 1))[:size])
        (data / "many").mkdir()
        small_text = (line * (SMALL // len(line) + 1))[:SMALL]
        for i in range(MANY):
            (data / "many" / f"f{i:03}.txt").write_text(small_text)
        if "walks" in args.parts:
            for d in range(LOTS // 100):
                folder = data / "tree" / f"d{d:02}"
                folder.mkdir(parents=True)
                for i in range(100):
                    (folder / f"f{i:02}.txt").write_text(small_text)
            (data / "flat").mkdir()
            for i in range(LOTS):
                (data / "flat" / f"f{i:05}.txt").touch()
        startup, counts = measure_startup(args, work, data) if "start" in args.parts else (None, None)
        calls = anyio.run(measure_calls, args, work, data) if {"calls", "walks"} & args.parts else None
        idle = anyio.run(measure_idle, args, work, data) if "idle" in args.parts else None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()

    fs_version = json.loads((Path(args.peers) / "node_modules" / FS_PACKAGE / "package.json").read_text())["version"]
    node_real = os.path.realpath(node)
    text = report(args, when, load_before, load_after, calls, startup, counts, idle, fs_version, node_real)
    # A run of some parts only does not replace the whole run's file.
    name = "wasm_servers.md" if len(args.parts) == 4 else f"wasm_servers.{'-'.join(sorted(args.parts))}.md"
    (out_dir / name).write_text(text)
    print(text)


def report(args, when, load_before, load_after, calls, startup, counts, idle, fs_version, node_real):
    node_v = tool_version([node_real, "--version"])
    npx_v = tool_version([args.npx, "--version"])

    def ms(r, digits=3):
        return f"{r['median']:.{digits}f} ms"

    def spread(r, digits=3):
        return f"{r['p10']:.{digits}f}–{r['p90']:.{digits}f} ms"

    lines = [
        "# Sandboxed servers: the built-in wasm `files` against native and Node",
        "",
        f"Measured by `bench/wasm_servers.sh` on {when}, {os.cpu_count()} cores (load average before "
        f"{load_before[0]:.1f}, after {load_after[0]:.1f}), release build `{args.toolport}`, native "
        f"`{args.server_files}`, npm `{FS_PACKAGE}` {fs_version} on Node {node_v} (`{node_real}`), npx {npx_v} "
        f"(`{args.npx}`). Every figure is from this run; medians, with the 10th–90th percentile as the spread.",
        "Expect ±60% between runs on this machine on absolute numbers; the ratios come from interleaved runs.",
        "",
    ]

    if "calls" in args.parts:
        c = {side: {key: r for (label, key), r in v.items() if label == "calls"} for side, v in calls.items()}
        d = {side: {key: r for (label, key), r in v.items() if label == "diag"} for side, v in calls.items()}
        lines += [
            "## 1. One `read_text_file` call through `toolport serve` (stdio), wasm vs native",
            "",
            "Python SDK client, one long-lived `toolport serve` per side, each side's session open at once and "
            f"called in turn (the order rotating every round): {args.calls} rounds of a {SMALL // 1024} KiB file "
            f"and {args.big_calls} rounds of a {BIG // (1024 * 1024)} MiB file, after "
            f"{args.warmup} and {max(1, args.warmup // 10)} warm-up calls per side. Latency is the client's, "
            "request sent to result parsed.",
            "",
            "| file | server behind serve | median | p10–p90 | N | vs native |",
            "|---|---|---|---|---|---|",
        ]
        for which, label, digits in (("small", f"{SMALL // 1024} KiB", 3), ("big", f"{BIG // (1024 * 1024)} MiB", 2)):
            base = c["native"][which]["median"]
            lines += [
                f"| {label} | native `server_files` (stdio child; baseline) | {ms(c['native'][which], digits)} | "
                f"{spread(c['native'][which], digits)} | {c['native'][which]['n']} | 1.00× |",
                f"| {label} | wasm `files` (built-in, in-process) | {ms(c['wasm'][which], digits)} | "
                f"{spread(c['wasm'][which], digits)} | {c['wasm'][which]['n']} | "
                f"**{c['wasm'][which]['median'] / base:.2f}×** |",
                f"| {label} | diagnostic: no serve, the client spawning `server_files` itself | "
                f"{ms(c['direct'][which], digits)} | {spread(c['direct'][which], digits)} | {c['direct'][which]['n']} | "
                f"{c['direct'][which]['median'] / base:.2f}× |",
            ]
        lines += [
            "",
            f"wasm − native per call: {c['wasm']['small']['median'] - c['native']['small']['median']:+.3f} ms "
            f"({SMALL // 1024} KiB), {c['wasm']['big']['median'] - c['native']['big']['median']:+.2f} ms "
            f"({BIG // (1024 * 1024)} MiB); the serve hop (native − direct): "
            f"{c['native']['small']['median'] - c['direct']['small']['median']:+.3f} ms and "
            f"{c['native']['big']['median'] - c['direct']['big']['median']:+.2f} ms.",
            "",
            f"### Diagnostic: where the wasm side's extra time goes ({args.diag_calls} rounds each, "
            f"{args.diag_calls // 5} for the last two; interleaved)",
            "",
            "The same two serve processes, calls with more and more file-system work. In the guest each stat, "
            "open, read and directory read is a wasmtime-wasi host call; the last two make hundreds of them "
            f"({MANY} files of {SMALL // 1024} KiB) for a short answer.",
            "",
            "| call | native | wasm | wasm − native | wasm / native |",
            "|---|---|---|---|---|",
        ]
        labels = {
            "dirs": "`list_allowed_directories` (no file-system call)",
            "info": "`get_file_info small.txt` (the path checks and a stat)",
            "small": f"`read_text_file small.txt` ({SMALL // 1024} KiB: the path checks, open, reads; the table above)",
            "list": f"`list_directory many` ({MANY} entries)",
            "search": f"`search_content many` ({MANY} files read through, nothing found)",
        }
        for key, label in labels.items():
            n, w = d["native"][key]["median"], d["wasm"][key]["median"]
            digits = 3 if key in ("dirs", "info", "small") else 2
            lines.append(f"| {label} | {n:.{digits}f} ms | {w:.{digits}f} ms | {w - n:+.{digits}f} ms | {w / n:.2f}× |")
        per_file = (d["wasm"]["search"]["median"] - d["native"]["search"]["median"]) / MANY
        lines += [
            "",
            f"`search_content` costs the wasm side {per_file * 1000:.0f} µs more per file searched than the native "
            "one in this run: the guest's opens, stats and reads, each a host call.",
            "",
        ]

    if "walks" in args.parts:
        w = {side: {key: r for (label, key), r in v.items() if label == "walks"} for side, v in calls.items()}
        lines += [
            f"## Walks and searches through `toolport serve`, wasm vs native ({args.walk_calls} rounds over "
            f"{MANY} files, {args.walk_big_calls} over {LOTS:,}; interleaved)",
            "",
            f"`many`: {MANY} files of {SMALL // 1024} KiB in one folder; `tree`: {LOTS:,} files of "
            f"{SMALL // 1024} KiB in {LOTS // 100} folders of 100; `flat`: {LOTS:,} empty files in one folder. "
            "Every search finds nothing, so it goes through everything (`search_content` reads every file). "
            "The `files` server has no `directory_tree`.",
            "",
            "| call | files | native | wasm | wasm − native | wasm / native |",
            "|---|---|---|---|---|---|",
        ]
        for key, tool, arguments, files, _ in WALKS:
            n, m = w["native"][key]["median"], w["wasm"][key]["median"]
            shown = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
            lines.append(f"| `{tool}` ({shown}) | {files:,} | {n:.2f} ms | {m:.2f} ms | {m - n:+.2f} ms | "
                         f"**{m / n:.2f}×** |")
        lines.append("")
    if "start" in args.parts:
        s = startup
        cached = s["wasm"]["median"]
        floor = s["floor"]["median"]
        rows = [
            ("floor", "no server at all (the floor)"),
            ("wasm", "wasm `files`, compiled cache warm"),
            ("fresh", "wasm `files`, fresh home (compiles the component, and the `openai` shape plugin: its cache is per home too)"),
            ("native", "native `server_files` (stdio)"),
            ("node", f"`node …/{FS_PACKAGE}/dist/index.js DIR`"),
            ("npx", f"`npx -y {FS_PACKAGE} DIR` (run from the peers folder: the local install, no download)"),
        ]
        lines += [
            f"## 2. Start to first `tools/list`: one `toolport tools --json` process ({args.runs} runs each, interleaved)",
            "",
            "Spawn to exit: start, connect the one server (initialize), list, convert (`openai`), close the "
            "server, exit. Each run of a row uses the same home, except the fresh-home row (a new home, empty "
            "cache, every run).",
            "",
            "| server enabled | tools | median | p10–p90 | × cached wasm | above the floor | × cached wasm, above the floor |",
            "|---|---|---|---|---|---|---|",
        ]
        tool_counts = {**counts, "fresh": counts["wasm"]}
        for key, label in rows:
            r = s[key]
            above = r["median"] - floor
            base_above = cached - floor
            ratio_above = "—" if key == "floor" or base_above <= 0 else f"{above / base_above:.2f}×"
            mark = "**" if key in ("npx", "node", "native", "fresh") else ""
            lines.append(
                f"| {label} | {tool_counts[key]} | {ms(r, 1)} | {spread(r, 1)} | {mark}{r['median'] / cached:.2f}×{mark} | "
                f"{'—' if key == 'floor' else f'{above:.1f} ms'} | {ratio_above} |"
            )
        above = ""
        if cached - floor > 0:
            above = (f"; counting only what each adds to the floor, "
                     f"{(s['npx']['median'] - floor) / (cached - floor):.0f}× and "
                     f"{(s['node']['median'] - floor) / (cached - floor):.0f}×")
        lines += [
            "",
            f"The npx row against the cached wasm row: **{s['npx']['median'] / cached:.1f}×** slower "
            f"(node alone {s['node']['median'] / cached:.1f}×){above}. The cached wasm start against the "
            f"native one: {cached / s['native']['median']:.2f}×; compiling (fresh home) against cached: "
            f"{s['fresh']['median'] / cached:.0f}×.",
            "",
        ]

    if "idle" in args.parts:
        def med(key, field):
            return statistics.median(r[key][field] for r in idle)

        lines += [
            f"## 3. Idle CPU over {args.idle_seconds:g} s of a connected server ({args.idle_runs} runs)",
            "",
            "Two `toolport serve` processes at once, each connected and past its first answered call: one "
            "fronting only the wasm `files`, the baseline fronting only the native `server_files` (its wasm "
            "engine loaded too: the `toolport-epoch` ticker thread runs in both). Host CPU = utime+stime of the "
            f"toolport process from /proc/PID/stat (clock ticks of {1000 / CLK_TCK:g} ms), and the same window "
            "summed over its threads from /proc/PID/task/TID/schedstat (ns).",
            "",
            "| run | wasm serve, stat | baseline serve, stat | difference | baseline's child `server_files`, stat | "
            "wasm serve, schedstat | baseline serve, schedstat | difference | difference without `toolport-epoch` |",
            "|---|---|---|---|---|---|---|---|---|",
        ]

        def worker_runs(k):
            return f"{statistics.median(r[k]['runs'].get('tokio-rt-worker', 0) for r in idle):.0f}"

        def no_ticker(r, k):
            return r[k]["ns_ms"] - r[k]["threads"].get("toolport-epoch", 0.0)

        for i, r in enumerate(idle, 1):
            lines.append(
                f"| {i} | {r['wasm']['stat_ms']:.0f} ms | {r['native']['stat_ms']:.0f} ms | "
                f"{r['wasm']['stat_ms'] - r['native']['stat_ms']:+.0f} ms | {r['child']['stat_ms']:.0f} ms | "
                f"{r['wasm']['ns_ms']:.2f} ms | {r['native']['ns_ms']:.2f} ms | "
                f"{r['wasm']['ns_ms'] - r['native']['ns_ms']:+.2f} ms | "
                f"{no_ticker(r, 'wasm') - no_ticker(r, 'native'):+.2f} ms |"
            )
        diffs = [r["wasm"]["ns_ms"] - r["native"]["ns_ms"] for r in idle]
        stat_diffs = [r["wasm"]["stat_ms"] - r["native"]["stat_ms"] for r in idle]
        bare = [no_ticker(r, "wasm") - no_ticker(r, "native") for r in idle]
        lines += [
            f"| median | {med('wasm', 'stat_ms'):.0f} ms | {med('native', 'stat_ms'):.0f} ms | "
            f"{statistics.median(stat_diffs):+.0f} ms | {med('child', 'stat_ms'):.0f} ms | "
            f"{med('wasm', 'ns_ms'):.2f} ms | {med('native', 'ns_ms'):.2f} ms | {statistics.median(diffs):+.2f} ms | "
            f"{statistics.median(bare):+.2f} ms |",
            "",
            "Per thread (schedstat, median over the runs; threads of the same name summed; a wake-up is one "
            "time the thread was put on a CPU):",
            "",
            "| thread | wasm serve: CPU | wake-ups | baseline serve: CPU | wake-ups |",
            "|---|---|---|---|---|",
        ]
        names = sorted({n for r in idle for k in ("wasm", "native") for n in r[k]["threads"]})
        for name in names:
            cells = []
            for k in ("wasm", "native"):
                cells.append(statistics.median(r[k]["threads"].get(name, 0.0) for r in idle))
                cells.append(statistics.median(r[k]["runs"].get(name, 0) for r in idle))
            if cells[0] >= 0.005 or cells[2] >= 0.005:
                lines.append(f"| `{name}` | {cells[0]:.2f} ms | {cells[1]:.0f} | {cells[2]:.2f} ms | {cells[3]:.0f} |")
        lines += [
            f"| (threads, last run) | {idle[-1]['wasm']['nthreads']} | | {idle[-1]['native']['nthreads']} | |",
            "",
            "The wasm server's share of idle CPU is the difference: the guest idles blocked in `wasi:io/poll` "
            "with a 1 s tick (`plugins/wasi-stdio`, so about one wake-up of a runtime thread a second), and the "
            f"engine's 10 ms epoch ticker is in both processes ({worker_runs('wasm')} against "
            f"{worker_runs('native')} `tokio-rt-worker` wake-ups in the window, medians).",
            "",
        ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
