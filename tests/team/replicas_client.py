"""Clients of `toolport serve --http` replicas behind nginx (tests/it/team/replicas.rs, and
bench/replicas.py): the official Python SDK as agents use it. Prints one JSON object on stdout
(what it saw, never a verdict: the test judges).

    replicas_client.py load --url URL --clients 4 --calls 1000 [--slow-at N]
        --clients default `mcp.Client`s (2026-07-28, no session: every call its own request)
        make --calls echo calls between them, each with a value of its own; at call --slow-at
        a fifth client starts three trigger-long-running-operation calls and prints the line
        `SLOW` (the test then kills the replica one of them runs on and writes `KILLED` to
        stdin). Every call's outcome is kept: a result, an error (its message), or none
        within --call-timeout s (lost).
    replicas_client.py session --url URL --calls 12
        the SDK's legacy session client (`ClientSession`, 2025-11-25): initialize, then echo
        calls in that one session.
    replicas_client.py rounds --url A --other B
        by hand (httpx), as a 2026-07-28 client: tools/call trigger-elicitation-request at A,
        which answers input-required with a requestState; the retry with the answer sent to B
        (another replica), then to A.
"""

import argparse
import itertools
import json
import sys
import time

import anyio
import httpx2 as httpx
from mcp import Client, types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from outcome import print_outcome


def text_of(result):
    return " ".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def load(args):
    counter = itertools.count()
    outcomes = []
    killed = anyio.Event()
    slow_outcomes = []
    started = time.monotonic()

    async def call_once(client, n, tool, arguments, expect, into):
        after_kill = killed.is_set()
        row = {"n": n, "after_kill": after_kill}
        try:
            with anyio.fail_after(args.call_timeout):
                result = await client.call_tool(tool, arguments)
            said = text_of(result)
            if result.is_error or expect not in said:
                row["error"] = said or "an error result without text"
            else:
                row["ok"] = True
        except TimeoutError:
            row["lost"] = True
        except Exception as e:  # the SDK's MCPError and transport errors: the call's answer
            row["error"] = f"{type(e).__name__}: {e}"
        into.append(row)

    async def slow():
        async with Client(streamable_http_client(args.url)) as client:
            async with anyio.create_task_group() as tg:
                for n in range(3):
                    arguments = {"duration": args.slow_seconds, "steps": 2}
                    tg.start_soon(call_once, client, n, "trigger-long-running-operation", arguments,
                                  "completed", slow_outcomes)
                print("SLOW", flush=True)

    async def worker(tg):
        async with Client(streamable_http_client(args.url)) as client:
            while True:
                n = next(counter)
                if n >= args.calls:
                    return
                if n == args.slow_at:
                    tg.start_soon(slow)
                value = f"{args.prefix}-{n:04d}"
                await call_once(client, n, "echo", {"message": value}, value, outcomes)

    async def watch_stdin():
        while True:
            line = await anyio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
            if not line:
                return
            if line.strip() == "KILLED":
                killed.set()

    async with anyio.create_task_group() as outer:
        outer.start_soon(watch_stdin)
        async with anyio.create_task_group() as tg:
            for _ in range(args.clients):
                tg.start_soon(worker, tg)
        outer.cancel_scope.cancel()
    seconds = time.monotonic() - started
    return {"calls": outcomes, "slow": slow_outcomes, "seconds": seconds,
            "calls_per_second": len(outcomes) / seconds if seconds else 0}


async def session(args):
    ids = set()

    async def record(response):
        if response.headers.get("mcp-session-id"):
            ids.add(response.headers["mcp-session-id"])

    http = create_mcp_http_client()
    http.event_hooks = {"request": [], "response": [record]}
    async with http, streamable_http_client(args.url, http_client=http) as (read, write):
        async with ClientSession(read, write) as s:
            init = await s.initialize()
            said = []
            for n in range(args.calls):
                value = f"{args.prefix}-{n:04d}"
                result = await s.call_tool("echo", {"message": value})
                said.append(value in text_of(result) and not result.is_error)
            return {"protocol": str(init.protocol_version), "ok": sum(said), "calls": args.calls,
                    "session_ids": sorted(ids)}


async def rounds(args):
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "replicas-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    }
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
               "Content-Type": "application/json"}

    async def post(http, url, params):
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**params, "_meta": meta}}
        response = await http.post(url, json=body, headers={**headers, "Mcp-Method": "tools/call",
                                                            "Mcp-Name": params["name"]})
        text = response.text
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
            data = [d for d in data if d]
            text = data[-1] if data else ""
        return response.status_code, json.loads(text) if text else None

    async with httpx.AsyncClient(timeout=30) as http:
        tool = {"name": "trigger-elicitation-request", "arguments": {}}
        status, first = await post(http, args.url, tool)
        state = ((first or {}).get("result") or {}).get("requestState")
        answer = {"action": "accept", "content": {"name": "Ada", "check": True, "email": "ada@example.com"}}
        retry = {**tool, "requestState": state, "inputResponses": {"input": answer}}
        elsewhere = await post(http, args.other, retry)
        here = await post(http, args.url, retry)
        return {"first": first, "status": status, "request_state": state,
                "elsewhere": elsewhere[1], "here": here[1]}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("scenario", choices=["load", "session", "rounds"])
    p.add_argument("--url", required=True)
    p.add_argument("--other", default="")
    p.add_argument("--clients", type=int, default=4)
    p.add_argument("--calls", type=int, default=1000)
    p.add_argument("--slow-at", type=int, default=-1)
    p.add_argument("--slow-seconds", type=float, default=4)
    p.add_argument("--prefix", default="replica-value")
    p.add_argument("--call-timeout", type=float, default=30)
    p.add_argument("--timeout", type=float, default=120)
    args = p.parse_args()
    scenario = {"load": load, "session": session, "rounds": rounds}[args.scenario]

    print_outcome(scenario, args)


if __name__ == "__main__":
    main()
