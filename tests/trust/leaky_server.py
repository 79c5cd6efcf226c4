#!/usr/bin/env python3
"""An MCP stdio server that leaks secrets everywhere but a tool's text block, for the tests of
secrets kept out of what servers answer (tests/it/trust/secret_places.rs, issue 44 item 9).
Every leak carries two secrets: an AWS access key id of the right shape (made up, built from
parts so the repository's own secret scanning does not take it for a leak) and the value of
$LEAK_TOKEN (toolport expands it from `${...}` into this server's env: a configured secret).

Built on the official Python MCP SDK (PyPI `mcp`, pinned in tests/peers/install_clients.sh;
run it with that venv's python):

    leaky_server.py

Tool `leak` with `{"place": P}` answers (a plain text block `leaked`, plus):
  link        a resource_link whose uri and description carry the secrets
  blob        an embedded text/plain resource whose base64 blob carries them
  structured  structuredContent with the AWS key as a key, the token as its value
  meta        the result's _meta
  error       a JSON-RPC error (no result) whose message carries them
Any other place answers the text block alone (no secret).
Resources: any URI is read, by its host: `leak://error` answers a JSON-RPC error whose message
carries the secrets, `leak://plain` a text with no secret, any other a text content and a
text/plain blob carrying them.
Prompts: `leak` (a message and the description carry them), `leak_error` (a JSON-RPC error).
"""

import base64
import os
from urllib.parse import urlsplit

import anyio

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

AWS_KEY = "AKIA" + "QYLPMN5HHHFPZAM2"
SCHEMA = {"type": "object", "properties": {"place": {"type": "string"}}, "required": ["place"]}


def secrets() -> str:
    return f"aws={AWS_KEY} token={os.environ.get('LEAK_TOKEN', '')}"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def leak_result(place: str) -> types.CallToolResult:
    said = {"type": "text", "text": "leaked"}
    result = {"content": [said]}
    if place == "link":
        result["content"].append(
            {"type": "resource_link", "uri": f"leak://doc/{AWS_KEY}", "name": "doc", "description": secrets()}
        )
    elif place == "blob":
        resource = {"uri": "leak://blob", "mimeType": "text/plain", "blob": b64(secrets())}
        result["content"].append({"type": "resource", "resource": resource})
    elif place == "structured":
        result["structuredContent"] = {AWS_KEY: os.environ.get("LEAK_TOKEN", "")}
    elif place == "meta":
        result["_meta"] = {"leak/where": secrets()}
    elif place == "error":
        raise MCPError(code=types.INTERNAL_ERROR, message=f"upstream refused: {secrets()}")
    return types.CallToolResult.model_validate(result)


def build() -> Server:
    async def list_tools(ctx, params) -> types.ListToolsResult:
        tool = types.Tool(name="leak", description="Answers with secrets in one place", input_schema=SCHEMA)
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx, params) -> types.CallToolResult:
        return leak_result((params.arguments or {}).get("place", ""))

    async def list_resources(ctx, params) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[types.Resource(uri="leak://doc", name="doc")])

    async def read_resource(ctx, params) -> types.ReadResourceResult:
        uri = str(params.uri)
        host = urlsplit(uri).hostname
        if host == "error":
            raise MCPError(code=types.INVALID_PARAMS, message=f"cannot read: {secrets()}")
        if host == "plain":
            return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, text="nothing to hide")])
        return types.ReadResourceResult.model_validate(
            {
                "contents": [
                    {"uri": uri, "mimeType": "text/plain", "text": secrets()},
                    {"uri": uri, "mimeType": "text/plain", "blob": b64(secrets())},
                ]
            }
        )

    async def list_prompts(ctx, params) -> types.ListPromptsResult:
        prompts = [types.Prompt(name="leak", description="Leaks"), types.Prompt(name="leak_error")]
        return types.ListPromptsResult(prompts=prompts)

    async def get_prompt(ctx, params) -> types.GetPromptResult:
        if params.name == "leak_error":
            raise MCPError(code=types.INVALID_PARAMS, message=f"cannot render: {secrets()}")
        message = {"role": "user", "content": {"type": "text", "text": f"use {secrets()}"}}
        return types.GetPromptResult.model_validate({"description": secrets(), "messages": [message]})

    return Server(
        "leaky",
        version="1.0.0",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


async def main() -> None:
    server = build()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
