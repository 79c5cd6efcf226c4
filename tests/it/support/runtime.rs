//! Fixtures for the runtime tests: config files that point at the binary's own `demo-server`,
//! and a runtime started from them through the library (for behaviour that needs a long-lived
//! runtime: crashes, `list_changed`, retry).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolport::{Paths, Runtime, RuntimeOptions, load_resolved};

use crate::support::common::{Env, toolport_path};

/// A stdio definition running `toolport demo-server <args…>`.
pub fn demo(args: &[&str]) -> Value {
    let mut all = vec!["demo-server".to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    json!({ "type": "stdio", "command": toolport_path(), "args": all })
}

/// Writes the global store (`servers`: name → definition) and the workspace file
/// (`enabled` plus any extra workspace keys).
pub fn write_config(env: &Env, servers: Value, enabled: &[&str], extra: Value) {
    let store = json!({ "mcpServers": servers });
    std::fs::write(env.store(), store.to_string()).unwrap_or_else(|e| panic!("write store: {e}"));
    let mut workspace = json!({ "enabledMcpServers": enabled });
    if let (Some(w), Some(extra)) = (workspace.as_object_mut(), extra.as_object()) {
        w.extend(extra.clone());
    }
    let file = env.workspace_file();
    std::fs::create_dir_all(file.parent().unwrap_or_else(|| panic!("no parent")))
        .unwrap_or_else(|e| panic!("mkdir: {e}"));
    std::fs::write(file, workspace.to_string()).unwrap_or_else(|e| panic!("write workspace: {e}"));
}

/// What a server `server` listing the one reserved name `tool` is put in `error` with: the
/// original tool's sentence, word for word, then the two fixes as commands that run as printed
/// (issue 25 item 7, issue 45 item 3).
pub fn reserved_one(server: &str, tool: &str) -> String {
    format!(
        "MCP tool name conflicts with built-in tool: {tool}. Fix: leave it out (toolport mcp set {server} \
         tools.exclude {tool}), or prefix every tool with its server's name (toolport workspace set namePolicy \
         namespace)"
    )
}

/// The tools of `toolport demo-server` without options, in the order it lists them.
pub const DEMO_TOOLS: [&str; 6] = ["echo", "add", "sleep", "fail", "big", "pid"];

/// What the later server `server` is put in `error` with when its `tool` was `owner`'s first:
/// the original tool's sentence, then the fixes naming every tool of it that clashes
/// (`clashes`), and the namespace policy when `namespace`.
pub fn clash(server: &str, tool: &str, owner: &str, clashes: &[&str], namespace: bool) -> String {
    let them = if clashes.len() == 1 { "it" } else { "them" };
    let mut message = format!(
        "MCP tool name conflict: {tool} already provided by {owner}. Fix: leave {them} out (toolport mcp set \
         {server} tools.exclude {})",
        clashes.join(" ")
    );
    if namespace {
        message.push_str(
            ", or prefix every tool with its server's name (toolport workspace set namePolicy namespace)",
        );
    }
    message
}

/// The paths of `env`.
pub fn paths(env: &Env) -> Paths {
    Paths::new(env.home(), env.root())
}

/// A runtime on `env`'s config with `paused` paused.
pub async fn start(env: &Env, paused: &[&str], options: RuntimeOptions) -> Runtime {
    let paused: BTreeSet<String> = paused.iter().map(|s| s.to_string()).collect();
    let paths = paths(env);
    let resolved = load_resolved(&paths, &paused).unwrap_or_else(|e| panic!("load: {e}"));
    let options = RuntimeOptions { cache_dir: Some(paths.cache_dir()), ..options };
    Runtime::start(resolved, options).await.unwrap_or_else(|e| panic!("start: {e:#}"))
}

/// Polls `check` every 50 ms until it holds or `within` passes.
pub async fn eventually(within: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    check()
}

/// The text a tool call returns, panicking on failure.
pub async fn call_text(runtime: &Runtime, tool: &str, args: &str) -> String {
    match runtime.call(tool, args).await {
        Ok(outcome) => outcome.render_text(),
        Err(e) => panic!("call {tool}: {e}"),
    }
}

/// The final tool names of an OpenAI-shaped surface.
pub fn names(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .filter_map(|t| t.pointer("/function/name").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// Every `toolport …` command `message` prints as a fix, split as a shell would and without the
/// word `toolport`: one in parentheses ends at the `)`, one after `Fix: ` at `; ` or the end.
pub fn printed_commands(message: &str) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    let mut rest = message;
    while let Some(at) = rest.find("toolport ") {
        let opened = rest[..at].ends_with('(');
        let tail = &rest[at..];
        let end = if opened { tail.find(')') } else { tail.find("; ") }.unwrap_or(tail.len());
        let words = shlex::split(&tail[..end]).unwrap_or_else(|| panic!("not shell words: {}", &tail[..end]));
        commands.push(words.into_iter().skip(1).collect());
        rest = &tail[end..];
    }
    commands
}
