"""toolport against the clients users would pick instead, doing the same job: start, connect to
every configured stdio server, initialize, list all tools, exit.

Peers: the official Python MCP SDK (`bench/py_client.py`, one server after another, and all at
once) and the MCP Inspector CLI (`--cli … --method tools/list`, which takes one server per run,
so N servers are N runs one after another). Scenarios: one `server-everything`, ten
`toolport demo-server`s, and a scaling series (1, 5, 10, 20 demo-servers) plotted to a PNG.

Each repetition runs every client once, in turn, so a load spike on the shared machine hits all
of them; medians over the repetitions; ratios (peer / toolport) come from the same run.
Peak memory is the client process's own (`ru_maxrss` from `wait4`), servers excluded.
Run through `bench/compare.sh`, which installs the peers and builds toolport in release.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def measure(cmd, cwd=None):
    """Runs `cmd`; returns (wall seconds, peak RSS in KiB of that process, stdout)."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode()
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[0]} exited with {proc.returncode}: {' '.join(map(str, cmd))}")
    return wall, usage.ru_maxrss, text


class Clients:
    def __init__(self, args, work):
        self.args = args
        self.work = work
        # Python SDK: milliseconds after its imports, per (servers, concurrent).
        self.after_imports = {}

    def servers_file(self, servers):
        path = self.work / f"servers-{len(servers)}-{abs(hash(json.dumps(servers))) % 10**8}.json"
        path.write_text(json.dumps(servers))
        return path

    def toolport(self, servers):
        home = self.work / f"home-{len(servers)}-{abs(hash(json.dumps(servers))) % 10**8}"
        ws = home / "ws"
        (ws / ".toolport").mkdir(parents=True, exist_ok=True)
        defs = {s["name"]: {"type": "stdio", "command": s["command"], "args": s["args"]} for s in servers}
        (home / "mcp.json").write_text(json.dumps({"mcpServers": defs}))
        (ws / ".toolport/workspace.json").write_text(json.dumps({"enabledMcpServers": list(defs)}))
        wall, rss, out = measure([self.args.toolport, "--home", home, "--workspace", ws, "tools", "--json"])
        return wall, rss, len(json.loads(out))

    def python(self, servers, concurrent):
        cmd = [self.args.python, Path(__file__).with_name("py_client.py"), self.servers_file(servers)]
        wall, rss, out = measure(cmd + (["--concurrent"] if concurrent else []))
        count, after_imports_ms = out.split()
        self.after_imports.setdefault((len(servers), concurrent), []).append(float(after_imports_ms))
        return wall, rss, int(count)

    def inspector(self, servers):
        total, peak, count = 0.0, 0, 0
        for s in servers:
            cmd = [self.args.node, self.args.inspector, "--cli", s["command"], *s["args"], "--method", "tools/list"]
            wall, rss, out = measure(cmd)
            total += wall
            peak = max(peak, rss)
            count += len(json.loads(out[out.index("{"):])["tools"])
        return total, peak, count


def demo_servers(toolport, n):
    return [
        {"name": f"d{i}", "command": str(toolport), "args": ["demo-server", "--prefix", f"d{i}_"]}
        for i in range(n)
    ]


def run_scenario(clients, servers, names, runs):
    """Every client in `names` `runs` times, interleaved, plus one warm-up each."""
    fns = {
        "toolport": lambda: clients.toolport(servers),
        "python-sdk (sequential)": lambda: clients.python(servers, False),
        "python-sdk (concurrent)": lambda: clients.python(servers, True),
        "inspector-cli": lambda: clients.inspector(servers),
    }
    samples = {n: [] for n in names}
    counts = {}
    for n in names:
        counts[n] = fns[n]()[2]  # warm-up: caches, page cache, compiled plugin
    clients.after_imports = {}
    for _ in range(runs):
        for n in names:
            wall, rss, count = fns[n]()
            if count != counts[n]:
                raise RuntimeError(f"{n}: {count} tools, earlier {counts[n]}")
            samples[n].append((wall, rss))
    # server-everything offers extra tools to clients that declare more capabilities (the
    # Inspector declares roots, sampling, elicitation), so counts may differ there; they are
    # reported per client.
    inner = {}
    for (_, concurrent), values in clients.after_imports.items():
        inner["python-sdk (concurrent)" if concurrent else "python-sdk (sequential)"] = statistics.median(values)
    return samples, counts, inner


def summary(samples, counts, inner):
    base = statistics.median(w for w, _ in samples["toolport"])
    rows = []
    for name, s in samples.items():
        wall = statistics.median(w for w, _ in s)
        rss = statistics.median(r for _, r in s)
        rows.append({"client": name, "tools": counts[name], "after_imports_ms": inner.get(name), "median_ms": wall * 1000, "ratio": wall / base, "peak_rss_mib": rss / 1024,
                     "min_ms": min(w for w, _ in s) * 1000, "max_ms": max(w for w, _ in s) * 1000})
    return rows


def table(title, rows, runs):
    lines = [f"**{title}** ({runs} runs each, medians; ratio = client / toolport)", "",
             "| client | tools listed | connect + list (median) | range | × toolport | peak RSS of the client "
             "| of which after the SDK's imports |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        inner = "—" if r["after_imports_ms"] is None else f"{r['after_imports_ms']:.0f} ms"
        lines.append(f"| {r['client']} | {r['tools']} | {r['median_ms']:.0f} ms | {r['min_ms']:.0f}–{r['max_ms']:.0f} ms "
                     f"| **{r['ratio']:.2f}×** | {r['peak_rss_mib']:.1f} MiB | {inner} |")
    return "\n".join(lines)


def plot(series, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    for name, points in series.items():
        xs = [n for n, _ in points]
        ys = [ms for _, ms in points]
        ax.plot(xs, ys, marker="o", label=name, linestyle="--" if "after imports" in name else "-")
    ax.set_xlabel("stdio servers (toolport demo-server)")
    ax.set_ylabel("connect + list tools, median (ms)")
    ax.set_title("Start-up time against the number of servers")
    ax.set_xticks([n for n, _ in next(iter(series.values()))])
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--toolport", required=True)
    p.add_argument("--python", required=True, help="the venv's python, with `mcp` installed")
    p.add_argument("--node", required=True)
    p.add_argument("--inspector", required=True, help="the inspector's launcher script")
    p.add_argument("--everything", required=True, help="server-everything's dist/index.js")
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--scaling-runs", type=int, default=5)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    all_clients = ["toolport", "python-sdk (sequential)", "python-sdk (concurrent)", "inspector-cli"]
    results = {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "runs": args.runs,
               "toolport": args.toolport, "cpus": os.cpu_count(), "load_before": os.getloadavg()}
    report = []
    with tempfile.TemporaryDirectory(prefix="toolport-bench-") as work:
        clients = Clients(args, Path(work))
        everything = [{"name": "everything", "command": args.node, "args": [args.everything]}]
        for key, title, servers in [
            ("everything", "One `@modelcontextprotocol/server-everything` (stdio)", everything),
            ("demo10", "Ten `toolport demo-server`s (stdio)", demo_servers(args.toolport, 10)),
        ]:
            print(f"scenario {key} …", file=sys.stderr)
            samples, counts, inner = run_scenario(clients, servers, all_clients, args.runs)
            rows = summary(samples, counts, inner)
            results[key] = {"rows": rows, "samples": samples}
            report.append(table(title, rows, args.runs))
        series = {"toolport": [], "python-sdk, sequential (baseline)": [], "python-sdk, concurrent": [],
                  "python-sdk, sequential, after imports": []}
        scaling = {}
        for n in (1, 5, 10, 20):
            print(f"scaling {n} …", file=sys.stderr)
            names = ["toolport", "python-sdk (sequential)", "python-sdk (concurrent)"]
            samples, counts, inner = run_scenario(clients, demo_servers(args.toolport, n), names, args.scaling_runs)
            if len(set(counts.values())) != 1:
                raise RuntimeError(f"clients disagree on the tool count: {counts}")
            rows = summary(samples, counts, inner)
            scaling[n] = rows
            for label, row in zip(series, rows):
                series[label].append((n, row["median_ms"]))
            series["python-sdk, sequential, after imports"].append((n, rows[1]["after_imports_ms"]))
        results["scaling"] = scaling
        lines = ["**Scaling** (demo-servers; medians of "
                 f"{args.scaling_runs} runs; ratio = client / toolport at the same N)", "",
                 "| servers | toolport | python-sdk sequential | python-sdk concurrent |", "|---|---|---|---|"]
        for n, rows in scaling.items():
            cells = [f"{r['median_ms']:.0f} ms" + ("" if r["client"] == "toolport" else
                     f" ({r['ratio']:.2f}×; {r['after_imports_ms']:.0f} ms after imports)") for r in rows]
            lines.append(f"| {n} | " + " | ".join(cells) + " |")
        report.append("\n".join(lines))
        plot(series, out / "scaling.png")
    results["load_after"] = os.getloadavg()
    (out / "peers.json").write_text(json.dumps(results, indent=2, default=str))
    text = (f"Measured {results['when']} on {results['cpus']} CPUs (load average before "
            f"{results['load_before'][0]:.1f}, after {results['load_after'][0]:.1f}).\n\n" + "\n\n".join(report) + "\n")
    (out / "peers.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
