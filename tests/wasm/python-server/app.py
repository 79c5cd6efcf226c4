"""A minimal MCP server in pure Python, built into a wasi:cli/command component by componentize-py.

Why hand-written: the `mcp` SDK needs asyncio, anyio and threads that CPython-on-WASI does not
have, so this speaks MCP's stdio transport (newline-delimited JSON-RPC 2.0) itself. It proves a
`wasm` server need not be written in Rust. `tests/wasm/build-python.sh` builds it; the same file
also runs under a native `python3 app.py`, which helps when a test fails.

Tools: `add` (a, b: numbers -> their sum as text) and `reverse` (text -> the text reversed).
"""

import json
import sys

try:
    from wit_world import exports

    RunBase = exports.Run
except ImportError:  # native CPython: no componentize-py bindings
    RunBase = object

DEFAULT_PROTOCOL = "2025-06-18"

TOOLS = [
    {
        "name": "add",
        "description": "Adds two numbers and answers the sum as text.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
    },
    {
        "name": "reverse",
        "description": "Answers its text reversed.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
]


class RpcError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def is_number(value):
    # bool is an int in Python, but not a JSON number.
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def call_tool(params):
    """A tools/call result: (text, is_error). An unknown tool is the client's error (-32602)."""
    name = params.get("name")
    args = params.get("arguments") or {}
    if name == "add":
        a, b = args.get("a"), args.get("b")
        if not (is_number(a) and is_number(b)):
            return "add needs numbers a and b", True
        return str(a + b), False
    if name == "reverse":
        text = args.get("text")
        if not isinstance(text, str):
            return 'reverse needs a string "text"', True
        return text[::-1], False
    raise RpcError(-32602, f"Unknown tool: {name}")


def handle(method, params):
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion") or DEFAULT_PROTOCOL,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "python-wasm", "version": "0.1.0"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        text, is_error = call_tool(params)
        return {"content": [{"type": "text", "text": text}], "isError": is_error}
    # Includes server/discover: the client then falls back to initialize.
    raise RpcError(-32601, "Method not found")


def answer(line):
    """The reply to one line, or None for notifications and responses."""
    try:
        message = json.loads(line)
    except ValueError as e:
        return {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": f"Parse error: {e}"}}
    if not isinstance(message, dict):
        return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}}
    if "id" not in message or "method" not in message:
        return None
    msg_id = message["id"]
    params = message.get("params")
    try:
        result = handle(message["method"], params if isinstance(params, dict) else {})
        return {"jsonrpc": "2.0", "id": msg_id, "result": result}
    except RpcError as e:
        return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": e.code, "message": e.message}}
    except Exception as e:  # a bug here must not end the server
        return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32603, "message": f"Internal error: {e}"}}


class Run(RunBase):
    def run(self) -> None:
        while True:
            line = sys.stdin.readline()
            if not line:  # EOF: the host is done with us
                return
            if not line.strip():
                continue
            reply = answer(line)
            if reply is not None:
                sys.stdout.write(json.dumps(reply, separators=(",", ":")) + "\n")
                sys.stdout.flush()


if __name__ == "__main__":
    Run().run()
