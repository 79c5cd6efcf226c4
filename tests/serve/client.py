"""One MCP client scenario with the official Python SDK (PyPI `mcp`, pinned in
tests/peers/install_clients.sh), against a server over stdio or streamable HTTP; prints one JSON
object on stdout for the Rust tests (tests/it/serve/clients.rs) to assert on.

    client.py SCENARIO --url http://127.0.0.1:PORT/mcp [options]
    client.py SCENARIO [options] -- COMMAND [ARG...]        (spawned, spoken to over stdio)

Two ways to be the SDK's client (--client):
  session       the low-level `ClientSession` and its `initialize` (negotiates 2025-11-25): the
                default, what every scenario was first written with
  default       `mcp.Client` as the SDK recommends it, in its default mode (`auto`: asks
                `server/discover` and speaks 2026-07-28 to a server that answers it)

Scenarios (each prints what it saw, never a verdict; the tests judge):
  basics        tools/list, tools/call echo, resources/read, prompts/get, and the negotiated
                protocol version
  list-changed  tools/list, wait for notifications/tools/list_changed, tools/list again (on
                each one until --expect is listed, when given)
  elicit        call --tool with --args (once --expect is listed, when given), answering its
                elicitation with --action (accept, with --answer's JSON as the content;
                decline; cancel) via the SDK's elicitation_callback
  cancel        call --tool with --args, abandon it after --cancel-after s (the SDK sends
                notifications/cancelled), then call echo to show the session still works
  progress      call --tool with --args and a progress callback; the progress it was sent
  latency       call --tool with --args --calls times in one session (milliseconds each)
  list          tools/list --calls times in one session (milliseconds each, and the tool count)
  call          call --tool with --args, offering no capability at all (no callbacks); the
                result's content and `_meta`
  complete      completion/complete of --prompt's argument --argument from the prefix --value
  sample        call trigger-sampling-request, answering its sampling/createMessage with
                --answer's "text" via the SDK's sampling_callback
  roots         offer the root --uri via list_roots_callback; call --roots-tool until it
                names it (or --wait s pass), then call --then once (when given)
  hung          how long initialize took and its instructions, tools/list, call --tool with
                --args, then re-list on each notifications/tools/list_changed until --expect
                is listed (or --wait s pass)
  first-contact tools/list once (and whether --marker existed when it was answered), call
                --tool with --args, then re-list on each notifications/tools/list_changed until
                --expect is listed (when given, or --wait s pass)
  logging       logging/setLevel debug, call toggle-simulated-logging, wait --wait s for a
                notifications/message
  held          call --tool with --args (a change on the server's side), re-list on each
                notifications/tools/list_changed until --expect is gone, call it, run the
                command --run (JSON argv), re-list until --expect is back, call it again
  ask           call --tool with --args, answering elicitation with --answer and sampling
                with --answer's "text"; what it was asked, and the result
  whole         each step of --steps (a JSON list of ["call", TOOL, ARGS], ["read", URI],
                ["prompt", NAME]) in one session, once --expect is listed (when given); each
                answer whole as its JSON, or a JSON-RPC error's code, message and data

Every step runs under --timeout seconds: a hang is reported as an error, never waited out.
"""

import argparse
import json
import os
import subprocess
import sys
import time

import anyio
from mcp import Client, types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp.client.streamable_http import streamable_http_client


def texts(result):
    return [c.text for c in result.content if getattr(c, "type", None) == "text"]


def names(listing):
    return [t.name for t in listing.tools]


async def basics(session, args, events):
    tools = await session.list_tools()
    echo = await session.call_tool("echo", {"message": args.message})
    resources = await session.list_resources()
    read = await session.read_resource(args.uri)
    prompts = await session.list_prompts()
    prompt = await session.get_prompt(args.prompt)
    return {
        "protocol": events["protocol"],
        "tools": names(tools),
        "echo": {"is_error": bool(echo.is_error), "texts": texts(echo)},
        "resources": [str(r.uri) for r in resources.resources],
        "read": [
            {"uri": str(c.uri), "text": getattr(c, "text", None), "mime": c.mime_type} for c in read.contents
        ],
        "prompts": [p.name for p in prompts.prompts],
        "prompt": [
            {"role": m.role, "text": getattr(m.content, "text", None)} for m in prompt.messages
        ],
    }


async def list_changed(session, args, events):
    before = names(await session.list_tools())
    if args.write:
        # The change is an edit of a config file serve follows: written as an editor would,
        # a new file renamed over the old one, after the first listing.
        path, content = args.write
        with open(path + ".tmp", "w") as f:
            f.write(content)
        os.replace(path + ".tmp", path)
    after, notified = before, False
    with anyio.move_on_after(args.wait):
        # Until --expect is listed: serve's own servers coming up are list changes too.
        while not notified or (args.expect and args.expect not in after):
            await events["list_changed"].wait()
            events["list_changed"] = anyio.Event()
            notified = True
            after = names(await session.list_tools())
    return {"notified": notified, "before": before, "after": after}


async def until_listed(session, events, expect, listed, wait):
    """Re-lists on each notifications/tools/list_changed until `expect(names)` holds (or
    `wait` s pass); the last listing."""
    with anyio.move_on_after(wait):
        while not expect(listed):
            await events["list_changed"].wait()
            events["list_changed"] = anyio.Event()
            listed = names(await session.list_tools())
    return listed


async def held(session, args, events):
    if args.client != "default":
        return await held_steps(session, args, events)
    # 2026-07-28 has no unasked list_changed: the client hears it on a `subscriptions/listen`
    # stream (which also evicts mcp.Client's cached listing).
    async with session.listen(tools_list_changed=True) as sub:
        async with anyio.create_task_group() as tg:

            async def forward():
                async for _ in sub:
                    events["list_changed"].set()

            tg.start_soon(forward)
            out = await held_steps(session, args, events)
            tg.cancel_scope.cancel()
    return out


async def held_steps(session, args, events):
    # The server may come up after serve's first listing (a loaded machine): its list_changed.
    listed = names(await session.list_tools())
    before = await until_listed(session, events, lambda n: args.expect in n, listed, args.wait)
    await session.call_tool(args.tool, json.loads(args.args))
    gone = await until_listed(session, events, lambda n: args.expect not in n, before, args.wait)
    refused = await session.call_tool(args.expect, {})
    ran = subprocess.run(json.loads(args.run), capture_output=True, text=True)
    back = await until_listed(session, events, lambda n: args.expect in n, gone, args.wait)
    called = await session.call_tool(args.expect, {})
    return {
        "before": before,
        "gone": gone,
        "refused": {"is_error": bool(refused.is_error), "texts": texts(refused)},
        "ran": {"code": ran.returncode, "stdout": ran.stdout, "stderr": ran.stderr},
        "back": back,
        "called": {"is_error": bool(called.is_error), "texts": texts(called)},
    }


async def hung(session, args, events):
    before = names(await session.list_tools())
    called = await session.call_tool(args.tool, json.loads(args.args))
    after, notified = before, False
    with anyio.move_on_after(args.wait):
        while args.expect not in after:
            await events["list_changed"].wait()
            # A fresh event for the next change: several servers may come up one by one.
            events["list_changed"] = anyio.Event()
            notified = True
            after = names(await session.list_tools())
    return {
        "initialize_s": events["initialize_s"],
        "instructions": events["instructions"],
        "before": before,
        "called": {"is_error": bool(called.is_error), "texts": texts(called)},
        "notified": notified,
        "after": after,
    }


async def first_contact(session, args, events):
    # One listing, as Codex and the SDK's default client make it; the marker says whether the
    # server behind had started when it was answered (its wrapper writes it just before).
    before = names(await session.list_tools())
    marker = bool(args.marker) and os.path.exists(args.marker)
    called = await session.call_tool(args.tool, json.loads(args.args))
    after, notified = before, events["list_changed"].is_set()
    if args.expect:
        with anyio.move_on_after(args.wait):
            while args.expect not in after:
                await events["list_changed"].wait()
                events["list_changed"] = anyio.Event()
                notified = True
                after = names(await session.list_tools())
    return {
        "before": before,
        "marker_at_list": marker,
        "called": {"is_error": bool(called.is_error), "texts": texts(called)},
        "notified": notified,
        "after": after,
    }


async def elicit(session, args, events):
    listed = names(await session.list_tools())
    # A tool of a server still coming up (a slow stdio server behind serve over stdio): wait
    # for it to be listed, as a client shown list_changed would.
    with anyio.move_on_after(args.wait):
        while args.expect and args.expect not in listed:
            await events["list_changed"].wait()
            events["list_changed"] = anyio.Event()
            listed = names(await session.list_tools())
    result = await session.call_tool(args.tool, json.loads(args.args))
    return {"asked": events["asked"], "is_error": bool(result.is_error), "texts": texts(result)}


async def cancel(session, args, _events):
    await session.list_tools()
    started = time.monotonic()
    finished = None
    with anyio.move_on_after(args.cancel_after):
        result = await session.call_tool(args.tool, json.loads(args.args))
        finished = texts(result)
    abandoned_after = round(time.monotonic() - started, 3)
    echo = await session.call_tool("echo", {"message": "after the cancel"})
    # The cancellation is a notification: give the far side a moment to act on it before
    # the session (and with stdio, the server process) goes away.
    await anyio.sleep(args.linger)
    return {"finished": finished, "abandoned_after_s": abandoned_after, "echo_after": texts(echo)}


async def progress(session, args, _events):
    await session.list_tools()
    seen = []

    async def on_progress(value, total, message):
        seen.append({"progress": value, "total": total, "message": message})

    result = await session.call_tool(args.tool, json.loads(args.args), progress_callback=on_progress)
    if args.rounds == 1:
        return {"progress": seen, "texts": texts(result)}
    # Many calls back to back: how many reports each got before its result.
    counts = [len(seen)]
    for _ in range(args.rounds - 1):
        seen.clear()
        await session.call_tool(args.tool, json.loads(args.args), progress_callback=on_progress)
        counts.append(len(seen))
    return {"counts": counts}


async def latency(session, args, _events):
    await session.list_tools()
    call_args = json.loads(args.args)
    millis = []
    for _ in range(args.calls):
        started = time.perf_counter()
        result = await session.call_tool(args.tool, call_args)
        millis.append((time.perf_counter() - started) * 1000)
        if result.is_error:
            return {"error": f"{args.tool} answered isError: {texts(result)}"}
    return {"ms": millis}


async def list_latency(session, _args, _events):
    millis, count = [], 0
    for _ in range(_args.calls):
        started = time.perf_counter()
        count = len((await session.list_tools()).tools)
        millis.append((time.perf_counter() - started) * 1000)
    return {"ms": millis, "tools": count}


async def call(session, args, events):
    await session.list_tools()
    result = await session.call_tool(args.tool, json.loads(args.args))
    return {
        "protocol": events["protocol"],
        "is_error": bool(result.is_error),
        "texts": texts(result),
        "meta": result.meta,
    }


async def complete(session, args, _events):
    ref = types.PromptReference(type="ref/prompt", name=args.prompt)
    result = await session.complete(ref, {"name": args.argument, "value": args.value})
    return {"values": list(result.completion.values)}


async def sample(session, args, events):
    await session.list_tools()
    result = await session.call_tool("trigger-sampling-request", {"prompt": "Say hi", "maxTokens": 20})
    return {"asked": events["sampled"], "is_error": bool(result.is_error), "texts": texts(result)}


async def roots(session, args, _events):
    said = []
    with anyio.move_on_after(args.wait):
        while True:
            result = await session.call_tool(args.roots_tool, {})
            said = texts(result)
            if any(args.uri in t for t in said):
                break
            await anyio.sleep(0.2)
    await anyio.sleep(args.pause)
    then = texts(await session.call_tool(args.then, {})) if args.then else []
    return {"texts": said, "then": then}


async def logging(session, args, events):
    await session.set_logging_level("debug")
    await session.call_tool("toggle-simulated-logging", {})
    with anyio.move_on_after(args.wait):
        await events["logged"].wait()
    return {"logs": events["logs"]}


async def ask(session, args, events):
    await session.list_tools()
    result = await session.call_tool(args.tool, json.loads(args.args))
    return {"protocol": events["protocol"], "asked": events["asked"], "sampled": events["sampled"],
            "texts": texts(result)}


async def whole(session, args, events):
    listed = names(await session.list_tools())
    if args.expect:
        await until_listed(session, events, lambda n: args.expect in n, listed, args.wait)
    answers = []
    for step in json.loads(args.steps):
        try:
            if step[0] == "call":
                answer = await session.call_tool(step[1], step[2])
            elif step[0] == "read":
                answer = await session.read_resource(step[1])
            else:
                answer = await session.get_prompt(step[1])
            answers.append(answer.model_dump(by_alias=True, mode="json", exclude_none=True))
        except MCPError as e:
            answers.append({"error": {"code": e.code, "message": e.message, "data": e.data}})
    return {"answers": answers}


SCENARIOS = {
    "ask": ask,
    "whole": whole,
    "call": call,
    "complete": complete,
    "sample": sample,
    "roots": roots,
    "logging": logging,
    "basics": basics,
    "list-changed": list_changed,
    "held": held,
    "hung": hung,
    "elicit": elicit,
    "cancel": cancel,
    "latency": latency,
    "first-contact": first_contact,
    "progress": progress,
    "list": list_latency,
}


async def run(args, command):
    events = {"list_changed": anyio.Event(), "asked": [], "sampled": [], "logs": [], "logged": anyio.Event()}
    events["protocol"] = None

    async def on_message(message):
        if isinstance(message, types.ToolListChangedNotification):
            events["list_changed"].set()

    async def on_elicit(_context, params):
        schema = getattr(params, "requested_schema", None) or {}
        events["asked"].append(
            {"message": params.message, "fields": sorted((schema.get("properties") or {}).keys())}
        )
        if args.action != "accept":
            return types.ElicitResult(action=args.action)
        return types.ElicitResult(action="accept", content=json.loads(args.answer))

    async def on_sample(_context, params):
        events["sampled"].append([getattr(m.content, "text", None) for m in params.messages])
        text = json.loads(args.answer).get("text", "")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=text), model="test-model"
        )

    async def on_roots(_context):
        return types.ListRootsResult(roots=[types.Root(uri=args.uri, name="client-root")])

    async def on_log(params):
        events["logs"].append({"level": params.level, "data": params.data})
        events["logged"].set()

    # A callback makes the SDK advertise its capability, which changes what some servers list:
    # each scenario offers only what it needs.
    extra = {
        "sample": {"sampling_callback": on_sample},
        "ask": {"sampling_callback": on_sample},
        "roots": {"list_roots_callback": on_roots},
        "logging": {"logging_callback": on_log},
    }.get(args.scenario, {})

    if args.scenario != "call":
        extra["elicitation_callback"] = on_elicit

    async def drive(transport):
        if args.client == "default":
            # `mcp.Client` has the same methods as a session, so every scenario runs on either.
            async with Client(transport, message_handler=on_message, **extra) as client:
                events["protocol"] = client.protocol_version
                return await SCENARIOS[args.scenario](client, args, events)
        async with transport as (read, write):
            async with ClientSession(read, write, message_handler=on_message, **extra) as session:
                started = time.monotonic()
                init = await session.initialize()
                events["initialize_s"] = round(time.monotonic() - started, 3)
                events["instructions"] = init.instructions
                events["protocol"] = init.protocol_version
                return await SCENARIOS[args.scenario](session, args, events)

    if args.url:
        return await drive(streamable_http_client(args.url))
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    with open(args.errlog or os.devnull, "w") as errlog:
        return await drive(stdio_client(params, errlog=errlog))


def main():
    argv = sys.argv[1:]
    command = []
    if "--" in argv:
        at = argv.index("--")
        argv, command = argv[:at], argv[at + 1 :]
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenario", choices=sorted(SCENARIOS))
    p.add_argument("--client", choices=["session", "default"], default="session",
                   help="the low-level ClientSession (2025-11-25) or mcp.Client in its default mode")
    p.add_argument("--url", help="streamable HTTP endpoint (else the command after --, over stdio)")
    p.add_argument("--errlog", help="where a stdio server's stderr goes (default: discarded)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds for the whole scenario")
    p.add_argument("--message", default="hello through serve")
    p.add_argument("--uri", default="demo://resource/static/document/architecture.md")
    p.add_argument("--prompt", default="simple-prompt")
    p.add_argument("--wait", type=float, default=10.0, help="list-changed: seconds to wait")
    p.add_argument("--write", nargs=2, metavar=("FILE", "CONTENT"),
                   help="list-changed: after the first listing, replace FILE with CONTENT")
    p.add_argument("--tool", default="sleep")
    p.add_argument("--roots-tool", default="get-roots-list", help="roots: the tool that says the roots")
    p.add_argument("--then", help="roots: a tool called once after --roots-tool named --uri")
    p.add_argument("--pause", type=float, default=0.0, help="roots: seconds to wait before --then")
    p.add_argument("--expect", default="", help="hung, list-changed, elicit, held, whole: the tool to wait for")
    p.add_argument("--marker", default="", help="first-contact: the file the server's wrapper writes")
    p.add_argument("--run", default="[]", help="held: the command (a JSON argv) run while it is gone")
    p.add_argument("--argument", default="department", help="complete: the argument's name")
    p.add_argument("--value", default="", help="complete: what was typed so far")
    p.add_argument("--args", default="{}", help="the tool's arguments as JSON")
    p.add_argument("--steps", default="[]", help="whole: the requests, as a JSON list")
    p.add_argument("--answer", default="{}", help="elicit: the accepted content as JSON")
    p.add_argument("--action", choices=["accept", "decline", "cancel"], default="accept",
                   help="elicit: how every elicitation is answered")
    p.add_argument("--cancel-after", type=float, default=1.0)
    p.add_argument("--linger", type=float, default=1.0)
    p.add_argument("--calls", type=int, default=100)
    p.add_argument("--rounds", type=int, default=1, help="progress: calls made one after another")
    args = p.parse_args(argv)
    if not args.url and not command:
        p.error("give --url or a command after --")

    async def bounded():
        with anyio.fail_after(args.timeout):
            return await run(args, command)

    try:
        out = anyio.run(bounded)
    except BaseException as e:  # noqa: BLE001 — reported to the test, which fails on it
        out = {"error": f"{type(e).__name__}: {describe(e)}"}
    print(json.dumps(out))
    sys.exit(1 if "error" in out else 0)


def describe(e):
    # Exception groups from anyio's task groups hide the cause one level down.
    inner = getattr(e, "exceptions", None)
    if inner:
        return "; ".join(f"{type(x).__name__}: {describe(x)}" for x in inner)
    return str(e) or repr(e)


if __name__ == "__main__":
    main()
