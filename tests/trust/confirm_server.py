#!/usr/bin/env python3
"""An MCP stdio server with annotated tools for the tests of the workspace's `confirm` setting
(tests/it/trust/confirm.rs): every call it receives is appended to --log as one line
`<tool> <arguments as JSON>`, so a test can tell whether a call reached it at all.

Built on the official Python MCP SDK (PyPI `mcp`, pinned in tests/peers/install_clients.sh;
run it with that venv's python):

    confirm_server.py --log FILE

Tools (each answers `<tool> done: <arguments as JSON>`):
  delete_note   destructiveHint: true
  read_note     readOnlyHint: true
  add_note      destructiveHint: false, readOnlyHint: false
  plain_note    no annotations at all
"""

import argparse
import asyncio
import json

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

SCHEMA = {"type": "object", "properties": {"id": {"type": "string"}}}

TOOLS = [
    ("delete_note", types.ToolAnnotations(destructive_hint=True, read_only_hint=False)),
    ("read_note", types.ToolAnnotations(read_only_hint=True)),
    ("add_note", types.ToolAnnotations(destructive_hint=False, read_only_hint=False)),
    ("plain_note", None),
]


def build(log: str) -> Server:
    tools = [
        types.Tool(name=name, description=f"{name} of the test notes", input_schema=SCHEMA, annotations=hints)
        for name, hints in TOOLS
    ]

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params) -> types.CallToolResult:
        arguments = json.dumps(params.arguments or {}, sort_keys=True)
        with open(log, "a") as f:
            f.write(f"{params.name} {arguments}\n")
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"{params.name} done: {arguments}")])

    return Server("notes", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    args = parser.parse_args()
    server = build(args.log)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(main())
