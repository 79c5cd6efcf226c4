#!/usr/bin/env python3
"""An MCP stdio server that writes down the `_meta` of every `tools/call` it receives, for the
tests of trace context passed downstream (tests/it/observe/traces.rs): one JSON object per line
in --log (`method` naming the request, `id` its JSON-RPC id, `protocol` the revision of the
session it came on). Its tool `echo` answers its `message`, `sleep` answers after `seconds`;
its prompt `greet` and its resource `meta://note` answer fixed text; a read of any `slow://`
URI answers only after 300 s (a read in flight, for tests/it/observe/status.rs). Over
streamable HTTP (--http) each line also holds the request's W3C `traceparent` header, under the
key `header:traceparent`.

Built on the official Python MCP SDK (PyPI `mcp`, tests/peers/install_clients.sh):

    meta_server.py --log FILE            over stdio
    meta_server.py --log FILE --http     on a free loopback port; prints `READY <url>` first
"""

import argparse
import asyncio
import json
import socket

import uvicorn

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

SCHEMA = {"type": "object", "properties": {"message": {"type": "string"}}}


def as_dict(meta):
    if meta is None:
        return {}
    if isinstance(meta, dict):
        return meta
    return meta.model_dump(by_alias=True, exclude_none=True)


def build(log: str) -> Server:
    async def list_tools(ctx, params) -> types.ListToolsResult:
        sleep = {"type": "object", "properties": {"seconds": {"type": "number"}}}
        return types.ListToolsResult(
            tools=[
                types.Tool(name="echo", description="Echoes", input_schema=SCHEMA),
                types.Tool(name="sleep", description="Answers late", input_schema=sleep),
            ]
        )

    def write_down(method, ctx, params):
        meta = dict(as_dict(getattr(ctx, "meta", None)) or as_dict(getattr(params, "meta", None)))
        meta["method"] = method
        request_id = getattr(ctx, "request_id", None)
        if request_id is not None:
            meta["id"] = str(request_id)
        meta["protocol"] = getattr(ctx, "protocol_version", None)
        request = getattr(ctx, "request", None)
        if request is not None:
            meta["header:traceparent"] = request.headers.get("traceparent")
        with open(log, "a") as f:
            f.write(json.dumps(meta, sort_keys=True) + "\n")

    async def list_prompts(ctx, params) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[types.Prompt(name="greet", description="Greets")])

    async def get_prompt(ctx, params) -> types.GetPromptResult:
        write_down("prompts/get", ctx, params)
        text = types.TextContent(type="text", text="Hello")
        return types.GetPromptResult(messages=[types.PromptMessage(role="user", content=text)])

    async def list_resources(ctx, params) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[types.Resource(uri="meta://note", name="note")])

    async def read_resource(ctx, params) -> types.ReadResourceResult:
        write_down("resources/read", ctx, params)
        uri = str(params.uri)
        if uri.startswith("slow://"):
            # A read still in flight for as long as a test looks at it.
            await asyncio.sleep(300)
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, text="a note")])

    async def call_tool(ctx, params) -> types.CallToolResult:
        write_down("tools/call", ctx, params)
        if params.name == "sleep":
            await asyncio.sleep(float((params.arguments or {}).get("seconds", 0)))
            return types.CallToolResult(content=[types.TextContent(type="text", text="awake")])
        message = (params.arguments or {}).get("message", "")
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"Echo: {message}")])

    return Server(
        "meta",
        version="1.0.0",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    parser.add_argument("--http", action="store_true")
    args = parser.parse_args()
    server = build(args.log)
    if not args.http:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
        return
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = server.streamable_http_app()
    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=1)
    web = uvicorn.Server(config)
    serving = asyncio.create_task(web.serve(sockets=[sock]))
    while not web.started:
        if serving.done():
            serving.result()
            raise SystemExit("meta_server: uvicorn stopped before it started")
        await asyncio.sleep(0.02)
    print(f"READY http://127.0.0.1:{port}/mcp", flush=True)
    await serving


if __name__ == "__main__":
    asyncio.run(main())
