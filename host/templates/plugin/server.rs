//! `{{name}}`: an MCP server for toolport's sandbox. A `wasi:cli/command` program speaking MCP's
//! stdio transport, newline-delimited JSON-RPC 2.0 on stdin and stdout, written with serde_json
//! only. Plain `std::io::stdin()` blocks in WASI properly, so an idle server costs no CPU.
//!
//! Tools: `greet` (name → a greeting) and `add` (a, b → their sum).

use std::io::{BufRead, Write};

use serde_json::{Map, Value, json};

/// Answered when the client names no protocol version.
const DEFAULT_PROTOCOL: &str = "2025-06-18";

fn main() {
    for line in std::io::stdin().lock().lines() {
        // A closed or failing stdin means the host is done with us.
        let Ok(line) = line else { return };
        if line.trim().is_empty() {
            continue;
        }
        if let Some(reply) = answer(&line) {
            let mut out = std::io::stdout().lock();
            // A closed stdout means the host has gone: nobody is left to tell.
            if writeln!(out, "{reply}").and_then(|()| out.flush()).is_err() {
                return;
            }
        }
    }
}

fn tools() -> Value {
    json!([
        {
            "name": "greet",
            "description": "Greets someone by name.",
            "inputSchema": {
                "type": "object",
                "properties": { "name": { "type": "string", "description": "Who to greet" } },
                "required": ["name"]
            }
        },
        {
            "name": "add",
            "description": "Adds two numbers.",
            "inputSchema": {
                "type": "object",
                "properties": { "a": { "type": "number" }, "b": { "type": "number" } },
                "required": ["a", "b"]
            }
        }
    ])
}

/// The reply to one line, or `None` for notifications and responses (nothing to answer).
fn answer(line: &str) -> Option<Value> {
    let message: Value = match serde_json::from_str(line) {
        Ok(value) => value,
        Err(e) => return Some(error(&Value::Null, -32700, &format!("Parse error: {e}"))),
    };
    let id = message.get("id")?;
    // A response to a request we never sent: nothing to do.
    let method = message.get("method").and_then(Value::as_str)?;
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    let result = match method {
        "initialize" => Ok(json!({
            "protocolVersion": params.get("protocolVersion").and_then(Value::as_str).unwrap_or(DEFAULT_PROTOCOL),
            "capabilities": { "tools": {} },
            "serverInfo": { "name": env!("CARGO_PKG_NAME"), "version": env!("CARGO_PKG_VERSION") },
        })),
        "ping" => Ok(json!({})),
        "tools/list" => Ok(json!({ "tools": tools() })),
        "tools/call" => call(&params),
        // Includes `server/discover`: the client then falls back to `initialize`.
        _ => Err((-32601, "Method not found".to_string())),
    };
    Some(match result {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err((code, text)) => error(id, code, &text),
    })
}

/// `tools/call`: a tool's own failure is a result with `isError`; an unknown tool is the
/// client's mistake (-32602).
fn call(params: &Value) -> Result<Value, (i64, String)> {
    let empty = Map::new();
    let args = params.get("arguments").and_then(Value::as_object).unwrap_or(&empty);
    let outcome = match params.get("name").and_then(Value::as_str).unwrap_or_default() {
        "greet" => match args.get("name").and_then(Value::as_str) {
            Some(name) => Ok(format!("Hello, {name}!")),
            None => Err("greet needs a string \"name\"".to_string()),
        },
        "add" => match (args.get("a").and_then(Value::as_f64), args.get("b").and_then(Value::as_f64)) {
            (Some(a), Some(b)) => Ok((a + b).to_string()),
            _ => Err("add needs numbers \"a\" and \"b\"".to_string()),
        },
        other => return Err((-32602, format!("Unknown tool: {other}"))),
    };
    let (text, is_error) = match outcome {
        Ok(text) => (text, false),
        Err(text) => (text, true),
    };
    Ok(json!({ "content": [{ "type": "text", "text": text }], "isError": is_error }))
}

fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}
