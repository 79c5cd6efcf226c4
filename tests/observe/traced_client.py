#!/usr/bin/env python3
"""One request through toolport serve with the official Python MCP SDK (PyPI `mcp`,
tests/peers/install_clients.sh), carrying a caller's trace context, for tests/it/observe/traces.rs:

    traced_client.py --url http://127.0.0.1:PORT/mcp [--meta TRACEPARENT] [--header TRACEPARENT]
                     [--method call|prompt|read]

--method: `tools/call echo` (the default), `prompts/get greet` or `resources/read meta://note`.
--meta puts the traceparent in the request's `_meta` (SEP-414), --header in the W3C
`traceparent` HTTP header of every request. Prints the answer's texts as JSON.
"""

import argparse
import json

import anyio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def run(args):
    headers = {"traceparent": args.header} if args.header else None
    transport = streamable_http_client(args.url, http_client=create_mcp_http_client(headers=headers))
    meta = {"traceparent": args.meta} if args.meta else None
    with anyio.fail_after(60):
        async with Client(transport) as client:
            if args.method == "prompt":
                result = await client.get_prompt("greet", meta=meta)
                return {"texts": [getattr(m.content, "text", None) for m in result.messages]}
            if args.method == "read":
                result = await client.read_resource("meta://note", meta=meta)
                return {"texts": [getattr(c, "text", None) for c in result.contents]}
            result = await client.call_tool("echo", {"message": "traced"}, meta=meta)
    return {"texts": [getattr(c, "text", None) for c in result.content], "is_error": result.is_error}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--meta")
    parser.add_argument("--header")
    parser.add_argument("--method", choices=["call", "prompt", "read"], default="call")
    args = parser.parse_args()
    print(json.dumps(anyio.run(run, args)))


if __name__ == "__main__":
    main()
