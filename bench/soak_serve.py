"""The soak behind bench/soak_serve.sh: several Python SDK clients calling tools across ten
demo-servers through one `toolport serve --http` for a while, some servers crashing on the
way; every call must be answered (a result, or an error that says what went wrong) within a
per-call timeout, and serve's memory is sampled every --sample-s seconds.

    soak_serve.py --toolport BIN --minutes M [--clients N] [--call-timeout S] [--out FILE]

Prints a report (also written to --out) and exits non-zero when a call hung (hit its timeout),
an answer was wrong (echo not echoing), serve died, or memory grew by more than the tolerance.
"""

import argparse
import collections
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

import anyio
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

SERVERS = 10
# Servers that exit after answering this many calls (`demo-server --crash-after N`): what serve
# does with the calls that follow is part of what the soak reports.
CRASHING = {"s8": 40, "s9": 150, "s10": 600}
# Growth in RSS (last third of the samples against the first third) still called flat: allocator
# noise and caches warming up, not a leak.
FLAT_TOLERANCE_KB = 8 * 1024
FLAT_TOLERANCE_RATIO = 0.15
WARMUP_S = 30


def write_home(toolport):
    root = tempfile.mkdtemp(prefix="soak-serve-")
    home, workspace = os.path.join(root, "home"), os.path.join(root, "ws")
    os.makedirs(home)
    os.makedirs(os.path.join(workspace, ".toolport"))
    servers = {}
    for i in range(1, SERVERS + 1):
        name = f"s{i}"
        argv = ["demo-server", "--prefix", f"{name}_"]
        if name in CRASHING:
            argv += ["--crash-after", str(CRASHING[name])]
        servers[name] = {"type": "stdio", "command": toolport, "args": argv}
    json.dump({"mcpServers": servers}, open(os.path.join(home, "mcp.json"), "w"))
    json.dump({"enabledMcpServers": list(servers)}, open(os.path.join(workspace, ".toolport/workspace.json"), "w"))
    return root, [toolport, "--home", home, "--workspace", workspace, "serve", "--http", "127.0.0.1:0"]


def start_serve(argv, log_path):
    env = {k: v for k, v in os.environ.items() if k not in ("RUST_LOG", "TOOLPORT_HOME")}
    log = open(log_path, "w")
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        log.write(line)
        m = re.match(r"toolport serve: listening on (\S+)", line)
        if m:
            # Keep draining stderr into the log so serve never blocks on a full pipe.
            def drain():
                for rest in proc.stderr:
                    log.write(rest)
                    log.flush()
            import threading
            threading.Thread(target=drain, daemon=True).start()
            return proc, m.group(1)
    proc.kill()
    log.close()
    sys.exit(f"soak_serve.py: serve printed no listening line (see {log_path})")


def rss_kb(pid):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def classify(message):
    """An error message with its numbers taken out, so the report groups like with like."""
    return re.sub(r"\d+", "N", message)[:200]


async def client(n, url, deadline, stats, timeout):
    rng = random.Random(n)
    while time.monotonic() < deadline:
        try:
            async with streamable_http_client(url) as (read, write):
                async with ClientSession(read, write) as session:
                    with anyio.fail_after(timeout):
                        await session.initialize()
                    stats["sessions"] += 1
                    while time.monotonic() < deadline:
                        server = f"s{rng.randint(1, SERVERS)}"
                        kind = rng.choice(["echo", "echo", "add", "sleep"])
                        if kind == "echo":
                            args = {"message": f"c{n}-{stats['calls']}"}
                        elif kind == "add":
                            args = {"a": rng.randint(0, 99), "b": rng.randint(0, 99)}
                        else:
                            args = {"ms": rng.randint(0, 50)}
                        stats["calls"] += 1
                        try:
                            with anyio.fail_after(timeout):
                                result = await session.call_tool(f"{server}_{kind}", args)
                        except TimeoutError:
                            stats["hung"] += 1
                            stats["hung_tools"][f"{server}_{kind}"] += 1
                            continue
                        except Exception as e:  # noqa: BLE001 — an answered error is an outcome
                            stats["errors"][f"{server in CRASHING and 'crashing' or 'steady'} "
                                            f"{type(e).__name__}: {classify(str(e))}"] += 1
                            continue
                        text = " ".join(getattr(c, "text", "") for c in result.content)
                        if result.is_error:
                            kind_of = "crashing" if server in CRASHING else "steady"
                            stats["errors"][f"{kind_of} isError: {classify(text)}"] += 1
                        elif kind == "echo" and text != args["message"]:
                            stats["wrong"] += 1
                        else:
                            stats["ok"] += 1
        except Exception as e:  # noqa: BLE001 — a session that broke: counted, then a new one
            stats["session_errors"][f"{type(e).__name__}: {classify(str(e))}"] += 1
            await anyio.sleep(0.5)


async def soak(args, url, pid, samples):
    deadline = time.monotonic() + args.minutes * 60
    stats = {"calls": 0, "ok": 0, "hung": 0, "wrong": 0, "sessions": 0,
             "errors": collections.Counter(), "session_errors": collections.Counter(),
             "hung_tools": collections.Counter()}

    async def sampler():
        started = time.monotonic()
        while time.monotonic() < deadline:
            samples.append((round(time.monotonic() - started), rss_kb(pid), stats["calls"]))
            await anyio.sleep(args.sample_s)
        samples.append((round(time.monotonic() - started), rss_kb(pid), stats["calls"]))

    async with anyio.create_task_group() as tg:
        tg.start_soon(sampler)
        for n in range(args.clients):
            tg.start_soon(client, n, url, deadline, stats, args.call_timeout)
    return stats


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--toolport", required=True)
    p.add_argument("--minutes", type=float, default=10)
    p.add_argument("--clients", type=int, default=6)
    p.add_argument("--call-timeout", type=float, default=15)
    p.add_argument("--sample-s", type=float, default=10)
    p.add_argument("--out")
    args = p.parse_args()

    root, argv = write_home(args.toolport)
    proc, url = start_serve(argv, os.path.join(root, "serve.log"))
    samples = []
    try:
        stats = anyio.run(soak, args, url, proc.pid, samples)
    finally:
        alive = proc.poll() is None
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()

    # The first WARMUP_S are start-up (servers connecting, caches filling), not a trend.
    rss = [kb for t, kb, _ in samples if kb is not None and t >= WARMUP_S]
    rss = rss or [kb for _, kb, _ in samples if kb is not None]
    third = max(1, len(rss) // 3)
    first, last = sorted(rss[:third])[third // 2], sorted(rss[-third:])[third // 2]
    growth = last - first
    flat = growth <= max(FLAT_TOLERANCE_KB, first * FLAT_TOLERANCE_RATIO)
    answered = stats["ok"] + sum(stats["errors"].values()) + stats["wrong"]
    lines = [
        "# toolport serve soak",
        "",
        f"{args.minutes:g} min, {args.clients} concurrent Python SDK clients over streamable HTTP, "
        f"{SERVERS} demo-servers ({', '.join(f'{k} crashes after {v} calls' for k, v in CRASHING.items())}), "
        f"per-call timeout {args.call_timeout:g} s. Retry: none from the clients; what serve does after a crash "
        "is what the errors below show. serve's log: " + os.path.join(root, "serve.log"),
        "",
        "| outcome | count |",
        "|---|---|",
        f"| calls made | {stats['calls']} |",
        f"| answered with a result | {stats['ok']} |",
        f"| answered with an error | {sum(stats['errors'].values())} |",
        f"| wrong answers (echo not echoing) | {stats['wrong']} |",
        f"| **hung** (no answer within {args.call_timeout:g} s) | {stats['hung']} |",
        f"| sessions opened | {stats['sessions']} |",
        f"| sessions that broke | {sum(stats['session_errors'].values())} |",
        f"| serve alive at the end | {'yes' if alive else 'NO'} |",
        "",
        "## Errors (grouped, numbers as N)",
        "",
    ]
    lines += [f"- {count} × {msg}" for msg, count in stats["errors"].most_common(15)] or ["- none"]
    if stats["session_errors"]:
        lines += ["", "## Broken sessions", ""]
        lines += [f"- {count} × {msg}" for msg, count in stats["session_errors"].most_common(10)]
    if stats["hung_tools"]:
        lines += ["", "## Hung calls by tool", ""]
        lines += [f"- {count} × {tool}" for tool, count in stats["hung_tools"].most_common(10)]
    lines += [
        "",
        f"## RSS of serve, every {args.sample_s:g} s: {'flat' if flat else 'NOT flat'} "
        f"(after a {WARMUP_S} s warm-up: median of the first third {first} kB, of the last third {last} kB, growth {growth:+d} kB)",
        "",
        "| t (s) | RSS (kB) | calls so far |",
        "|---|---|---|",
    ]
    lines += [f"| {t} | {kb} | {calls} |" for t, kb, calls in samples]
    report = "\n".join(lines) + "\n"
    print(report)
    if args.out:
        open(args.out, "w").write(report)
    bad = stats["hung"] or stats["wrong"] or not alive or not flat or answered + stats["hung"] != stats["calls"]
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
