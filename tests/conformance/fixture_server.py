"""A server of our own that behaves as the conformance suite's server scenarios expect.

    python tests/conformance/fixture_server.py PORT [--legacy]

Serves streamable HTTP on http://127.0.0.1:PORT/mcp with the tools, resources, prompts and
behaviours named in the scenarios' own requirements (`conformance server` prints them; they live
in the suite's dist/index.js): plain content of every kind, logging and progress during a call,
an error result, sampling and elicitation asked of the client while a call waits (with SEP-1034
defaults and all five SEP-1330 enum shapes), a JSON Schema 2020-12 input schema, resources with a
template and subscriptions, prompts with arguments, images and embedded resources, completion.
`tests/conformance/server.sh` runs the suite against it directly and through `toolport serve`;
written on the Python SDK's low-level server so every schema goes out exactly as written here.
Prints `fixture listening on port PORT` once it accepts connections.

With `--legacy` it answers `server/discover` as a server of 2025-11-25 and earlier does (method
not found), so a client falls back to `initialize` and the questions travel as requests to the
client (the suite's TypeScript reference server is such a server); without it a 2026-07-28
client gets the new era, questions as input-required results.
"""

import base64
import json
import sys
import warnings

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.message import ServerMessageMetadata

# A 1x1 red pixel PNG and a tiny silent WAV: the scenarios only check type, data and MIME type.
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
WAV = base64.b64encode(
    b"RIFF" + (36 + 2).to_bytes(4, "little") + b"WAVEfmt " + (16).to_bytes(4, "little")
    + (1).to_bytes(2, "little") + (1).to_bytes(2, "little") + (8000).to_bytes(4, "little")
    + (16000).to_bytes(4, "little") + (2).to_bytes(2, "little") + (16).to_bytes(2, "little")
    + b"data" + (2).to_bytes(4, "little") + b"\x00\x00"
).decode()

NO_ARGS = {"type": "object", "properties": {}}


def tool(name, description, schema=None):
    return types.Tool(name=name, description=description, input_schema=schema or NO_ARGS)


TOOLS = [
    tool("test_simple_text", "Returns a simple text"),
    tool("test_image_content", "Returns a PNG image"),
    tool("test_audio_content", "Returns a WAV clip"),
    tool("test_embedded_resource", "Returns an embedded text resource"),
    tool("test_multiple_content_types", "Returns text, an image and a resource"),
    tool("test_tool_with_logging", "Logs three messages while it runs"),
    tool("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100"),
    tool("test_error_handling", "Always answers with an error result"),
    tool(
        "test_sampling",
        "Asks the client to sample a message",
        {"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]},
    ),
    tool(
        "test_elicitation",
        "Asks the client for a username and an email",
        {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
    ),
    tool("test_elicitation_sep1034_defaults", "Elicits a form whose fields carry defaults"),
    tool("test_elicitation_sep1330_enums", "Elicits a form with every enum shape"),
    tool(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features",
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "$anchor": "addr",
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                }
            },
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "kind": {"type": "string"},
            },
            "allOf": [{"anyOf": [{"required": ["name"]}, {"required": ["address"]}]}],
            "if": {"properties": {"kind": {"const": "home"}}},
            "then": {"required": ["address"]},
            "else": {"required": ["name"]},
            "additionalProperties": False,
        },
    ),
]

SEP1034_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Your name", "default": "John Doe"},
        "age": {"type": "integer", "description": "Your age", "default": 30},
        "score": {"type": "number", "description": "Your score", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "description": "Verified?", "default": True},
    },
}

SEP1330_SCHEMA = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
}


def text(value):
    return types.TextContent(type="text", text=value)


def result(*content, is_error=False):
    return types.CallToolResult(content=list(content), is_error=is_error)


class InputRequired(Exception):
    """The question could not be sent on the connection: answer the call with it instead."""

    def __init__(self, asked):
        self.asked = asked


async def ask(ctx, params, request, answer_type):
    """The client's answer to REQUEST, asked the way the connection's revision asks it.

    Up to 2025-11-25 a server sends the request to the client while the call waits; on
    2026-07-28 (SEP-2322) it answers the call with an input-required result and reads the
    answer from the retried call's `inputResponses`. Both eras are what a real server meets.
    """
    if ctx.session.can_send_request:
        # On the call's own response stream, as a well-made server asks (SEP-2260): a client
        # with several calls running then knows whose question it is.
        related = ServerMessageMetadata(related_request_id=ctx.request_id)
        return await ctx.session.send_request(request, answer_type, metadata=related)
    given = (params.input_responses or {}).get("question")
    if given is None:
        raise InputRequired(types.InputRequiredResult(input_requests={"question": request}))
    return answer_type.model_validate(given.model_dump(by_alias=True, exclude_none=True))


def elicitation(message, schema):
    return types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema=schema))


async def elicit(ctx, params, message, schema):
    answer = await ask(ctx, params, elicitation(message, schema), types.ElicitResult)
    return result(text(f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}"))


async def call_tool(ctx, params):
    try:
        return await run_tool(ctx, params)
    except InputRequired as question:
        return question.asked


async def run_tool(ctx, params):
    name, args = params.name, params.arguments or {}
    if name == "test_simple_text":
        return result(text("This is a simple text response for testing."))
    if name == "test_image_content":
        return result(types.ImageContent(type="image", data=PNG, mime_type="image/png"))
    if name == "test_audio_content":
        return result(types.AudioContent(type="audio", data=WAV, mime_type="audio/wav"))
    if name == "test_embedded_resource":
        return result(embedded("test://embedded-resource", "This is an embedded resource content."))
    if name == "test_multiple_content_types":
        return result(
            text("Multiple content types test:"),
            types.ImageContent(type="image", data=PNG, mime_type="image/png"),
            embedded("test://mixed-content-resource", '{"test":"data","value":123}', "application/json"),
        )
    if name == "test_tool_with_logging":
        for i, line in enumerate(["Tool execution started", "Tool processing data", "Tool execution completed"]):
            if i:
                await anyio.sleep(0.05)
            await ctx.session.send_log_message("info", line, related_request_id=ctx.request_id)
        return result(text("Tool with logging executed successfully"))
    if name == "test_tool_with_progress":
        # A no-op when the caller sent no progress token.
        for i, step in enumerate([0, 50, 100]):
            if i:
                await anyio.sleep(0.05)
            await ctx.session.report_progress(step, 100)
        return result(text("Tool with progress executed successfully"))
    if name == "test_error_handling":
        return result(text("This tool intentionally returns an error for testing"), is_error=True)
    if name in ("test_sampling", "test_elicitation"):
        # Not in the scenarios: a test of many clients (tests/it/faults/clients.rs) makes the
        # question come while another client's call is running.
        await anyio.sleep(float(args.get("delay", 0)))
    if name == "test_sampling":
        asked = types.CreateMessageRequest(
            params=types.CreateMessageRequestParams(
                messages=[types.SamplingMessage(role="user", content=text(args.get("prompt", "")))],
                max_tokens=100,
            )
        )
        answer = await ask(ctx, params, asked, types.CreateMessageResult)
        said = answer.content.text if isinstance(answer.content, types.TextContent) else str(answer.content)
        return result(text(f"LLM response: {said}"))
    if name == "test_elicitation":
        schema = {
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        }
        answer = await ask(ctx, params, elicitation(args.get("message", ""), schema), types.ElicitResult)
        return result(text(f"User response: action={answer.action}, content={json.dumps(answer.content)}"))
    if name == "test_elicitation_sep1034_defaults":
        return await elicit(ctx, params, "Please review and update the form fields with defaults", SEP1034_SCHEMA)
    if name == "test_elicitation_sep1330_enums":
        return await elicit(ctx, params, "Please select options from the enum fields", SEP1330_SCHEMA)
    if name == "json_schema_2020_12_tool":
        return result(text(f"Received: {json.dumps(args)}"))
    return result(text(f"Unknown tool: {name}"), is_error=True)


def embedded(uri, body, mime="text/plain"):
    return types.EmbeddedResource(
        type="resource", resource=types.TextResourceContents(uri=uri, mime_type=mime, text=body)
    )


RESOURCES = [
    types.Resource(uri="test://static-text", name="static-text", description="A static text", mime_type="text/plain"),
    types.Resource(uri="test://static-binary", name="static-binary", description="A PNG", mime_type="image/png"),
    types.Resource(
        uri="test://watched-resource", name="watched-resource", description="Subscribable", mime_type="text/plain"
    ),
]
TEMPLATE = types.ResourceTemplate(
    uri_template="test://template/{id}/data", name="template", description="Data by id", mime_type="application/json"
)


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=TOOLS)


async def list_resources(ctx, params):
    return types.ListResourcesResult(resources=RESOURCES)


async def list_templates(ctx, params):
    return types.ListResourceTemplatesResult(resource_templates=[TEMPLATE])


async def read_resource(ctx, params):
    uri = str(params.uri)
    if uri == "test://static-text":
        body = types.TextResourceContents(
            uri=uri, mime_type="text/plain", text="This is the content of the static text resource."
        )
    elif uri == "test://static-binary":
        body = types.BlobResourceContents(uri=uri, mime_type="image/png", blob=PNG)
    elif uri == "test://watched-resource":
        body = types.TextResourceContents(uri=uri, mime_type="text/plain", text="Watched resource content.")
    elif uri.startswith("test://template/") and uri.endswith("/data"):
        id_ = uri[len("test://template/") : -len("/data")]
        data = {"id": id_, "templateTest": True, "data": f"Data for ID: {id_}"}
        body = types.TextResourceContents(uri=uri, mime_type="application/json", text=json.dumps(data))
    else:
        raise MCPError(code=types.INVALID_PARAMS, message="Resource not found", data={"uri": uri})
    return types.ReadResourceResult(contents=[body])


SUBSCRIBED = set()


async def subscribe(ctx, params):
    SUBSCRIBED.add(str(params.uri))
    return types.EmptyResult()


async def unsubscribe(ctx, params):
    SUBSCRIBED.discard(str(params.uri))
    return types.EmptyResult()


def argument(name, description):
    return types.PromptArgument(name=name, description=description, required=True)


PROMPTS = [
    types.Prompt(name="test_simple_prompt", description="A prompt without arguments"),
    types.Prompt(
        name="test_prompt_with_arguments",
        description="A prompt with two arguments",
        arguments=[argument("arg1", "First test argument"), argument("arg2", "Second test argument")],
    ),
    types.Prompt(
        name="test_prompt_with_embedded_resource",
        description="A prompt embedding a resource",
        arguments=[argument("resourceUri", "URI of the resource to embed")],
    ),
    types.Prompt(name="test_prompt_with_image", description="A prompt with an image"),
]


async def list_prompts(ctx, params):
    return types.ListPromptsResult(prompts=PROMPTS)


def user(content):
    return types.PromptMessage(role="user", content=content)


async def get_prompt(ctx, params):
    args = params.arguments or {}
    if params.name == "test_simple_prompt":
        messages = [user(text("This is a simple prompt for testing."))]
    elif params.name == "test_prompt_with_arguments":
        messages = [user(text(f"Prompt with arguments: arg1='{args.get('arg1')}', arg2='{args.get('arg2')}'"))]
    elif params.name == "test_prompt_with_embedded_resource":
        messages = [
            user(embedded(args.get("resourceUri", ""), "Embedded resource content for testing.")),
            user(text("Please process the embedded resource above.")),
        ]
    elif params.name == "test_prompt_with_image":
        messages = [
            user(types.ImageContent(type="image", data=PNG, mime_type="image/png")),
            user(text("Please analyze the image above.")),
        ]
    else:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {params.name}")
    return types.GetPromptResult(messages=messages)


async def complete(ctx, params):
    values = [v for v in ["paris", "park", "party"] if v.startswith(params.argument.value)]
    return types.CompleteResult(completion=types.Completion(values=values, total=len(values), has_more=False))


async def set_level(ctx, params):
    return types.EmptyResult()


# `logging/setLevel` is deprecated from 2026-07-28 (SEP-2577) but the earlier revisions' scenarios
# send it; the SDK warns about registering it, which is the point here.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
server = Server(
    "toolport-conformance-fixture",
    version="1.0.0",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_list_resources=list_resources,
    on_list_resource_templates=list_templates,
    on_read_resource=read_resource,
    on_subscribe_resource=subscribe,
    on_unsubscribe_resource=unsubscribe,
    on_list_prompts=list_prompts,
    on_get_prompt=get_prompt,
    on_completion=complete,
    on_set_logging_level=set_level,
    # 2026-07-28 has no resources/subscribe: a client listens (SEP-2575) for the URIs it wants.
    on_subscriptions_listen=ListenHandler(InMemorySubscriptionBus()),
)


def legacy_only(app):
    """APP behind an answer to `server/discover` of a server that predates it: -32601."""

    async def wrapped(scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST":
            return await app(scope, receive, send)
        chunks, more = [], True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        if isinstance(request, dict) and request.get("method") == "server/discover":
            error = {"code": -32601, "message": "Method not found: server/discover"}
            answer = json.dumps({"jsonrpc": "2.0", "id": request.get("id"), "error": error}).encode()
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(answer)).encode())]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            return await send({"type": "http.response.body", "body": answer})
        replayed = False

        async def replay():
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await app(scope, replay, send)

    return wrapped


def main():
    args = sys.argv[1:]
    legacy = "--legacy" in args
    args = [a for a in args if a != "--legacy"]
    if len(args) != 1 or not args[0].isdigit():
        sys.exit("usage: fixture_server.py PORT [--legacy]")
    port = int(args[0])
    app = server.streamable_http_app(host="127.0.0.1")
    if legacy:
        app = legacy_only(app)
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        # Leave on SIGTERM even while a client still holds a stream open.
        timeout_graceful_shutdown=1,
    )
    instance = uvicorn.Server(config)
    original = instance.startup

    async def startup(sockets=None):
        await original(sockets)
        print(f"fixture listening on port {port}", flush=True)

    instance.startup = startup
    instance.run()


if __name__ == "__main__":
    main()
