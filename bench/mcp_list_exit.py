"""The numbers behind bench/mcp_list_exit.sh (issue 45, part 6): a whole `toolport mcp list` of
one stdio `@modelcontextprotocol/server-everything` against `bench/raw_list.py`, a 20-line raw
JSON-RPC client doing the same job over stdio (start the server, initialize, tools/list, close
its stdin, wait for its exit). Both start the same Node and the same server; the raw client
pays Python's start, toolport its own. Runs interleaved after one warm-up each; medians.

    mcp_list_exit.py --toolport BIN --node NODE --entry INDEX_JS --out DIR [--runs N]

For toolport the time its answer reached stdout is kept too: what follows it is the shutdown
(the servers' stdin closed, their exit waited for). Writes DIR/mcp_list_exit.md.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(cmd, env=None):
    """Runs `cmd`: (seconds to its first stdout bytes, seconds to its exit, all of stdout)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env)
    first = os.read(proc.stdout.fileno(), 65536)
    answered = time.perf_counter() - start
    rest = proc.stdout.read()
    code = proc.wait()
    ended = time.perf_counter() - start
    if code != 0:
        raise RuntimeError(f"{cmd} exited with {code}")
    return answered, ended, (first + rest).decode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--toolport", required=True)
    ap.add_argument("--node", required=True)
    ap.add_argument("--entry", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()

    root = tempfile.mkdtemp(prefix="mcp-list-exit-")
    home, workspace = os.path.join(root, "home"), os.path.join(root, "ws")
    os.makedirs(os.path.join(workspace, ".toolport"))
    os.makedirs(home)
    with open(os.path.join(home, "mcp.json"), "w") as f:
        json.dump({"mcpServers": {"everything": {"type": "stdio", "command": args.node, "args": [args.entry]}}}, f)
    with open(os.path.join(workspace, ".toolport", "workspace.json"), "w") as f:
        json.dump({"enabledMcpServers": ["everything"]}, f)
    env = {k: v for k, v in os.environ.items() if k not in ("RUST_LOG", "TOOLPORT_HOME")}
    toolport = [args.toolport, "--home", home, "--workspace", workspace, "mcp", "list"]
    raw = [sys.executable, os.path.join(HERE, "raw_list.py"), args.node, args.entry]

    samples = {"toolport": [], "answered": [], "raw": []}
    for run in range(args.runs + 1):
        answered, ended, out = timed(toolport, env)
        if "state=connected" not in out:
            raise RuntimeError(f"toolport did not connect:\n{out}")
        _, raw_ended, raw_out = timed(raw, env)
        if not raw_out.strip().endswith("tools"):
            raise RuntimeError(f"the raw client did not list:\n{raw_out}")
        if run == 0:
            continue  # the warm-up
        samples["toolport"].append(ended)
        samples["answered"].append(answered)
        samples["raw"].append(raw_ended)

    med = {k: statistics.median(v) * 1000 for k, v in samples.items()}
    rng = {k: (min(v) * 1000, max(v) * 1000) for k, v in samples.items()}
    ratio = med["toolport"] / med["raw"]
    load = os.getloadavg()[0]
    lines = [
        f"`toolport mcp list` of one server-everything (stdio) against a raw JSON-RPC client, {args.runs} runs each, interleaved, medians (load average {load:.1f})",
        "",
        "| client | answer on stdout | exit | range of exit | × raw client |",
        "|---|---|---|---|---|",
        f"| toolport `mcp list` | {med['answered']:.0f} ms | {med['toolport']:.0f} ms | {rng['toolport'][0]:.0f}–{rng['toolport'][1]:.0f} ms | **{ratio:.2f}×** |",
        f"| raw client (`bench/raw_list.py`) | — | {med['raw']:.0f} ms | {rng['raw'][0]:.0f}–{rng['raw'][1]:.0f} ms | 1.00× |",
        "",
        f"toolport's shutdown, answer to exit: {med['toolport'] - med['answered']:.0f} ms (median of the differences: "
        f"{statistics.median(e - a for e, a in zip(samples['toolport'], samples['answered'])) * 1000:.0f} ms)",
    ]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "mcp_list_exit.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
