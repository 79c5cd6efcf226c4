"""Measures the first run of the built-ins; see bench/first_run.sh for what and why."""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLPORT_") and k != "RUST_LOG"}
    env.update(extra)
    return env


def timed(cmd, env, cwd):
    """Wall time of one process from spawn to exit, in seconds; fails loudly on an error."""
    started = time.perf_counter()
    out = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if out.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed ({out.returncode}):\n{out.stderr}")
    return elapsed, out.stdout


class Home:
    """A fresh home and workspace; `servers` is the store's mcpServers, all enabled."""

    def __init__(self, work, toolport, servers):
        self.dir = Path(tempfile.mkdtemp(dir=work))
        self.home, self.root = self.dir / "home", self.dir / "ws"
        (self.root / ".toolport").mkdir(parents=True)
        self.home.mkdir()
        (self.home / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
        enabled = {"enabledMcpServers": sorted(servers)}
        (self.root / ".toolport" / "workspace.json").write_text(json.dumps(enabled))
        self.toolport = toolport

    def tools(self, env):
        cmd = [self.toolport, "--home", self.home, "--workspace", self.root, "tools", "--json"]
        elapsed, stdout = timed(cmd, env, self.root)
        json.loads(stdout)
        return elapsed


def ms(samples):
    return statistics.median(samples) * 1000.0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--toolport", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--runs", type=int, default=15)
    p.add_argument("--cold-runs", type=int, default=3)
    args = p.parse_args()

    work = Path(tempfile.mkdtemp(prefix="toolport-first-run-"))
    try:
        shared = work / "shared-cache"
        warm_env = clean_env(TOOLPORT_CACHE_DIR=str(shared))
        demo_server = {"demo": {"type": "stdio", "command": args.toolport, "args": ["demo-server"]}}
        # Warm the shared cache once: the built-ins `demo` and `tools` load.
        timed([args.toolport, "demo"], warm_env, work)
        Home(work, args.toolport, demo_server).tools(warm_env)

        rows = {k: [] for k in ["none", "second", "first", "demo", "first_cold", "demo_cold"]}
        for i in range(args.runs):
            rows["none"].append(Home(work, args.toolport, {}).tools(warm_env))
            home = Home(work, args.toolport, demo_server)
            rows["first"].append(home.tools(warm_env))
            rows["second"].append(home.tools(warm_env))
            rows["demo"].append(timed([args.toolport, "demo"], warm_env, work)[0])
            if i < args.cold_runs:
                cold_env = clean_env(TOOLPORT_CACHE_DIR=str(work / f"cold-{i}"))
                rows["first_cold"].append(Home(work, args.toolport, demo_server).tools(cold_env))
                cold_env = clean_env(TOOLPORT_CACHE_DIR=str(work / f"cold-demo-{i}"))
                rows["demo_cold"].append(timed([args.toolport, "demo"], cold_env, work)[0])
    finally:
        shutil.rmtree(work, ignore_errors=True)

    m = {k: ms(v) for k, v in rows.items()}
    base = m["none"]
    lines = [
        "# First run of the built-ins",
        "",
        f"{args.runs} runs of each warm row, {args.cold_runs} of each cold row, interleaved; medians. "
        "Baseline: `tools --json` on a new home with no server "
        f"({base:.1f} ms).",
        "",
        "| what | median | vs baseline |",
        "|---|---|---|",
        f"| `tools --json`, new home, no server (baseline) | {base:.1f} ms | 1.00× |",
        f"| `tools --json`, second run on the same home (demo-server, openai shape) | {m['second']:.1f} ms | {m['second'] / base:.2f}× |",
        f"| `tools --json`, first run on a new home, shared cache warm | {m['first']:.1f} ms | {m['first'] / base:.2f}× |",
        f"| `tools --json`, first run on a new home, shared cache cold | {m['first_cold']:.1f} ms | {m['first_cold'] / base:.2f}× |",
        f"| `demo`, shared cache warm | {m['demo']:.1f} ms | {m['demo'] / base:.2f}× |",
        f"| `demo`, shared cache cold | {m['demo_cold']:.1f} ms | {m['demo_cold'] / base:.2f}× |",
        "",
    ]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "first_run.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
