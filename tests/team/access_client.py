#!/usr/bin/env python3
"""What one caller sees and may use through `toolport serve --http` (tests/it/team/policy.rs and
bundles.rs): the official Python SDK's default `mcp.Client` over streamable HTTP, as an agent
talks to a team gateway, with the caller's bearer token when given.

    access_client.py --url http://127.0.0.1:PORT/mcp[/BUNDLE] [--token T]
                     [--call NAME[=JSON]]... [--read URI]... [--prompt NAME]...

Prints one JSON object, never a verdict (the tests judge): the server's instructions, the tools
listed (name and their readOnlyHint), the resources, templates and prompts listed, and each
call's, read's and prompt's answer (`is_error` and texts, or the error it raised).
"""

import argparse
import json

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from outcome import print_outcome


def texts(content):
    return [getattr(c, "text", None) for c in content]


async def attempt(work):
    try:
        return await work()
    except Exception as e:  # an MCP error answer: reported for the test to read
        return {"raised": f"{e}"}


async def run(args):
    headers = {"Authorization": f"Bearer {args.token}"} if args.token else None
    transport = streamable_http_client(args.url, http_client=create_mcp_http_client(headers=headers))
    async with Client(transport) as client:
        tools = await client.list_tools()
        seen = {
            "protocol": client.protocol_version,
            "instructions": client.instructions,
            "tools": sorted(t.name for t in tools.tools),
            "read_only": sorted(
                t.name for t in tools.tools if t.annotations is not None and t.annotations.read_only_hint
            ),
            "resources": sorted(r.uri for r in (await client.list_resources()).resources),
            "templates": sorted(t.uri_template for t in (await client.list_resource_templates()).resource_templates),
            "prompts": sorted(p.name for p in (await client.list_prompts()).prompts),
            "calls": {},
            "reads": {},
            "got": {},
        }
        for call in args.call:
            name, _, raw = call.partition("=")
            arguments = json.loads(raw) if raw else {}

            async def called(name=name, arguments=arguments):
                result = await client.call_tool(name, arguments)
                return {"is_error": bool(result.is_error), "texts": texts(result.content)}

            seen["calls"][name] = await attempt(called)
        for uri in args.read:

            async def read(uri=uri):
                result = await client.read_resource(uri)
                return {"contents": len(result.contents)}

            seen["reads"][uri] = await attempt(read)
        for name in args.prompt:

            async def got(name=name):
                result = await client.get_prompt(name)
                return {"messages": len(result.messages)}

            seen["got"][name] = await attempt(got)
        return seen


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--token", default="")
    p.add_argument("--call", action="append", default=[])
    p.add_argument("--read", action="append", default=[])
    p.add_argument("--prompt", action="append", default=[])
    p.add_argument("--timeout", type=float, default=120.0)
    args = p.parse_args()

    print_outcome(run, args)


if __name__ == "__main__":
    main()
