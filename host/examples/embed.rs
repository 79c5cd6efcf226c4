//! An agent that embeds toolport: it has two built-in tools of its own (`echo` and `clock`)
//! and adds every MCP tool the runtime checked. Its built-in names are passed as
//! `RuntimeOptions::builtin_tools`, so no MCP server can shadow them: here the plain demo
//! server offers `echo` too and is put in `error`, while the prefixed one joins the surface.
//!
//! Run: `cargo build && cargo run --example embed` (it starts `toolport demo-server` from the
//! same target folder; set TOOLPORT_BIN to use another binary).

use std::path::PathBuf;

use anyhow::Context as _;
use serde_json::{Value, json};
use toolport::store::{ServerDef, TransportKind};
use toolport::{Resolved, ResolvedServer, Runtime, RuntimeOptions};

/// The agent's own tools, in the same OpenAI shape the runtime produces.
fn builtin_tools() -> Vec<Value> {
    vec![
        json!({"type": "function", "function": {"name": "echo", "description": "Agent built-in: repeat text",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}}),
        json!({"type": "function", "function": {"name": "clock", "description": "Agent built-in: seconds since 1970",
            "parameters": {"type": "object", "properties": {}}}}),
    ]
}

/// Runs a built-in, or `None` when the name is not one of ours.
fn run_builtin(name: &str, args: &Value) -> Option<String> {
    match name {
        "echo" => Some(args["text"].as_str().unwrap_or_default().to_string()),
        "clock" => Some(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs().to_string())
                .unwrap_or_default(),
        ),
        _ => None,
    }
}

/// One tool call from the model: built-ins first, then MCP through the runtime's executor.
async fn dispatch(runtime: &Runtime, name: &str, arguments: &str) -> String {
    let args: Value = serde_json::from_str(arguments).unwrap_or(json!({}));
    if let Some(out) = run_builtin(name, &args) {
        return out;
    }
    match runtime.call(name, arguments).await {
        Ok(outcome) if outcome.is_error => format!("tool error: {}", outcome.render_text()),
        Ok(outcome) => outcome.render_text(),
        Err(e) => format!("call failed: {e}"),
    }
}

fn demo_server(name: &str, toolport: &str, extra: &[&str]) -> ResolvedServer {
    let mut args = vec!["demo-server".to_string()];
    args.extend(extra.iter().map(|s| s.to_string()));
    ResolvedServer {
        def: ServerDef {
            name: name.into(),
            transport: Some("stdio".into()),
            command: Some(toolport.into()),
            args,
            ..ServerDef::default()
        },
        enabled: true,
        paused: false,
        transport: Ok(TransportKind::Stdio),
    }
}

fn toolport_binary() -> anyhow::Result<PathBuf> {
    if let Some(bin) = std::env::var_os("TOOLPORT_BIN") {
        return Ok(PathBuf::from(bin));
    }
    // target/<profile>/examples/embed → target/<profile>/toolport
    let exe = std::env::current_exe()?;
    let dir = exe.parent().and_then(|p| p.parent()).context("no target folder")?;
    Ok(dir.join("toolport"))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let toolport = toolport_binary()?.display().to_string();
    // No config files: an embedding host can hand the runtime its servers directly.
    let servers =
        vec![demo_server("plain", &toolport, &[]), demo_server("prefixed", &toolport, &["--prefix", "mcp_"])];
    let resolved = Resolved {
        enabled: servers.iter().map(|s| s.def.name.clone()).collect(),
        servers,
        ..Resolved::default()
    };
    let options = RuntimeOptions { builtin_tools: vec!["echo".into(), "clock".into()], ..Default::default() };
    let runtime = Runtime::start(resolved, options).await?;
    for warning in runtime.warnings() {
        println!("{warning}");
    }

    let mut surface = builtin_tools();
    surface.extend(runtime.tools());
    let names: Vec<&str> = surface.iter().filter_map(|t| t["function"]["name"].as_str()).collect();
    println!("tools the model sees ({}): {}", names.len(), names.join(", "));

    for (name, args) in
        [("echo", r#"{"text": "built-in wins"}"#), ("mcp_add", r#"{"a": 20, "b": 22}"#), ("mcp_fail", "{}")]
    {
        println!("{name} {args} -> {}", dispatch(&runtime, name, args).await);
    }
    runtime.shutdown().await;
    Ok(())
}
