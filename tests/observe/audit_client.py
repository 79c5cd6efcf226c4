"""The audit log's client (tests/it/observe/audit.rs): the official Python SDK's default
`mcp.Client` over streamable HTTP, as an agent talks to `toolport serve --http`. Calls --tool
--calls times, each with a value of its own (`<prefix>-<n>`, easy to look for in the log), then
optionally reads --uri and gets --prompt with --prompt-args. Prints one JSON object: how many
calls came back and how many were errors, never a verdict (the tests judge).

    audit_client.py --url http://127.0.0.1:PORT/mcp --calls 1000 --prefix tangerine
"""

import argparse
import json

import anyio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def run(args):
    async with Client(streamable_http_client(args.url)) as client:
        errors = 0
        for n in range(args.calls):
            arguments = {args.key: f"{args.prefix}-{n:04d}"}
            result = await client.call_tool(args.tool, arguments)
            errors += 1 if result.is_error else 0
        seen = {"calls": args.calls, "errors": errors, "protocol": client.protocol_version}
        if args.uri:
            read = await client.read_resource(args.uri)
            seen["read"] = len(read.contents)
        if args.prompt:
            got = await client.get_prompt(args.prompt, json.loads(args.prompt_args))
            seen["prompt"] = len(got.messages)
        return seen


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--tool", default="echo")
    p.add_argument("--key", default="message", help="the argument the value goes in")
    p.add_argument("--calls", type=int, default=1)
    p.add_argument("--prefix", default="audit-value")
    p.add_argument("--uri", default="")
    p.add_argument("--prompt", default="")
    p.add_argument("--prompt-args", default="{}")
    p.add_argument("--timeout", type=float, default=300.0)
    args = p.parse_args()

    async def bounded():
        with anyio.fail_after(args.timeout):
            return await run(args)

    try:
        print(json.dumps(anyio.run(bounded)))
    except Exception as e:  # reported, for the test to show
        print(json.dumps({"error": f"{type(e).__name__}: {e}"}))


if __name__ == "__main__":
    main()
