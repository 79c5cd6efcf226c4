"""Many clients at once over streamable HTTP: the throughput row of bench/serve.py.

    serve_load.py --url http://127.0.0.1:PORT/mcp [--clients 16] [--calls 100] [--tool echo --args JSON]

Starts --clients processes of itself (`--one`), each the official Python SDK's client with a
session of its own; each connects and initializes, then waits until every one is ready, then
makes --calls calls of --tool one after another. Prints one JSON object: the calls made, the
wall time from the first call of any client to the last answer of any, and calls per second.
Processes, not tasks of one event loop: one Python process would be the bottleneck (the SDK's
own time per call is larger than the server's), and the clients are the same against either
server, so the ratio of two runs is the servers'.
"""

import argparse
import json
import subprocess
import sys
import time

import anyio
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def one(args):
    arguments = json.loads(args.args)
    async with streamable_http_client(args.url) as (read, write, *_):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.call_tool(args.tool, arguments)  # warm: the first call is not timed
            print("ready", flush=True)
            await anyio.to_thread.run_sync(sys.stdin.readline)
            started = time.time()
            errors = 0
            for _ in range(args.calls):
                result = await session.call_tool(args.tool, arguments)
                errors += bool(result.is_error)
            ended = time.time()
    print(json.dumps({"started": started, "ended": ended, "errors": errors}), flush=True)


def many(args):
    argv = [sys.executable, __file__, "--one", "--url", args.url, "--calls", str(args.calls), "--tool", args.tool,
            "--args", args.args]
    procs = [subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
             for _ in range(args.clients)]
    try:
        for p in procs:
            line = p.stdout.readline()
            if line.strip() != "ready":
                sys.exit(f"serve_load.py: a client printed {line!r} instead of ready")
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        runs = []
        for p in procs:
            out, _ = p.communicate(timeout=600)
            runs.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    wall = max(r["ended"] for r in runs) - min(r["started"] for r in runs)
    calls = args.clients * args.calls
    print(json.dumps({"calls": calls, "errors": sum(r["errors"] for r in runs), "seconds": wall,
                      "per_second": calls / wall}))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--calls", type=int, default=100, help="calls per client")
    p.add_argument("--tool", default="echo")
    p.add_argument("--args", default='{"message": "bench"}')
    p.add_argument("--one", action="store_true", help="be one of the clients")
    args = p.parse_args()
    if args.one:
        anyio.run(one, args)
    else:
        many(args)


if __name__ == "__main__":
    main()
