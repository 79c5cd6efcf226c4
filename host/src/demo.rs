//! `toolport demo`: the built-in tour. On a temporary home and workspace it defines a handful
//! of servers (all of them this binary's own `demo-server`) that end in every state, then shows
//! the status view, the tool surface an LLM would get, and a real tool call; then a sandboxed
//! server (the built-in `files`, a WebAssembly component) reads a file of the workspace it was
//! granted and is refused one outside it. Everything it creates is removed at the end.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::Context as _;
use serde_json::{Value, json};

use toolport::audit;
use toolport::{Paths, Runtime, RuntimeOptions, Trailer, load_resolved, render_status as render};

/// Runs the tour, printing to stdout.
pub async fn run() -> anyhow::Result<()> {
    let temp = tempfile::tempdir().context("cannot create a temporary folder for the demo")?;
    let paths = Paths::new(temp.path().join("home"), temp.path().join("workspace"));
    // The tour's decisions (first sights, holds) and calls are audited as anyone's, but in
    // its own home: the user's `~/.toolport/audit` never hears of them.
    let exe = std::env::current_exe().context("cannot find the toolport binary")?;
    let exe = exe.display().to_string();

    section("1. The configuration");
    println!("A temporary home and workspace under {}.", temp.path().display());
    println!("The global store defines servers (who they are); the workspace enables some (which).");
    let store = json!({ "mcpServers": {
        "files": demo_server(&exe, &[]),
        "math": demo_server(&exe, &["--prefix", "math_"]),
        "twin": demo_server(&exe, &[]),
        "later": demo_server(&exe, &[]),
        "spare": demo_server(&exe, &[]),
        "notes": {
            "type": "wasm",
            "builtin": "files",
            "grants": { "dirs": [{ "host": paths.workspace_root.display().to_string(), "guest": "/workspace" }] },
        },
    }});
    let workspace = json!({ "enabledMcpServers": ["files", "math", "twin", "later", "ghost", "notes"] });
    write_json(&paths.store_file(), &store)?;
    write_json(&paths.workspace_file(), &workspace)?;
    let readme = paths.workspace_root.join("README.md");
    std::fs::write(&readme, "# A demo workspace\nnotes can read this file, and nothing outside it.\n")
        .with_context(|| format!("cannot write {}", readme.display()))?;
    println!("\n{}:\n{}", paths.workspace_file().display(), serde_json::to_string_pretty(&workspace)?);
    println!("\nWhat to expect:");
    println!("  files, math  connected (math prefixes its tools with math_)");
    println!("  twin         error: it offers `echo` too, and files (defined first) keeps the name");
    println!("  later        paused for this session only");
    println!("  spare        disabled: defined, but this workspace does not enable it");
    println!("  ghost        missing: enabled, but never defined");
    println!(
        "  notes        connected: the built-in `files` server, sandboxed, granted the workspace read-only"
    );

    section("2. Starting the runtime (all servers connect at once)");
    let paused: BTreeSet<String> = ["later".to_string()].into();
    let resolved = load_resolved(&paths, &paused)?;
    // The tour's audit lines and decisions go to its own home, removed with it.
    let observer = toolport::Observer::new()
        .with_notices(std::sync::Arc::new(|line: &str| eprintln!("{line}")))
        .with_audit_trail(audit::AuditTrail {
            file: paths.audit_trail(),
            workspace: paths.workspace_root.clone(),
        })
        .with_audit_log(audit::AuditLog {
            file: Some(audit::log_file(&paths.home)),
            printer: None,
            stderr: false,
        });
    let options = RuntimeOptions::for_paths(&paths, paths.workspace_root.clone()).with_observer(observer);
    let runtime = Runtime::start(resolved, options).await?;
    let outcome = tour(&runtime, &paths).await;
    runtime.shutdown().await;
    outcome?;

    section("Done");
    println!("The servers are stopped and {} is removed.", temp.path().display());
    println!("Try it on your own servers: `toolport mcp add`, `toolport mcp list`, `toolport tools`.");
    drop(temp);
    Ok(())
}

async fn tour(runtime: &Runtime, paths: &Paths) -> anyhow::Result<()> {
    println!("Startup warnings, one per server in `error` or `missing` (the others still work):");
    for warning in runtime.warnings() {
        println!("{warning}");
    }

    section("3. The status view (`toolport mcp list`)");
    let store = paths.store_file();
    let workspace_config = paths.workspace_file();
    print!(
        "{}",
        render(&runtime.status(), Some(Trailer { store: &store, workspace_config: &workspace_config }))
    );

    section("4. The tool surface in OpenAI shape (`toolport tools --json`), first two tools");
    let tools = runtime.tools();
    println!("{} tools in all; the first two:", tools.len());
    println!("{}", serde_json::to_string_pretty(&Value::Array(tools.into_iter().take(2).collect()))?);

    section("5. Calling tools through the executor (`toolport call`)");
    for (tool, arguments) in
        [("math_add", r#"{"a": 2, "b": 3}"#), ("echo", r#"{"message": "hello from toolport"}"#)]
    {
        let outcome = runtime.call(tool, arguments).await?;
        println!("call {tool} {arguments}\n  -> {}", outcome.render_text());
    }
    let failed = runtime.call("fail", r#"{"message": "this tool always fails"}"#).await?;
    println!("call fail\n  -> isError={} {}", failed.is_error, failed.render_text());
    match runtime.call("no_such_tool", "").await {
        Ok(_) => println!("call no_such_tool\n  -> unexpectedly succeeded"),
        Err(e) => println!("call no_such_tool\n  -> {e}"),
    }

    section("6. A sandboxed server (`type: wasm`): the built-in `files`, granted /workspace read-only");
    for (tool, arguments) in [
        ("read_text_file", r#"{"path": "/workspace/README.md"}"#),
        ("read_text_file", r#"{"path": "/workspace/../home/mcp.json"}"#),
        ("write_text_file", r#"{"path": "/workspace/new.txt", "content": "x"}"#),
    ] {
        let outcome = runtime.call(tool, arguments).await?;
        let mark = if outcome.is_error { "isError=true " } else { "" };
        let text = outcome.render_text().trim_end().replace('\n', "\n     ");
        println!("call {tool} {arguments}\n  -> {mark}{text}");
    }
    Ok(())
}

fn demo_server(exe: &str, extra: &[&str]) -> Value {
    let mut args = vec!["demo-server".to_string()];
    args.extend(extra.iter().map(|s| s.to_string()));
    json!({ "type": "stdio", "command": exe, "args": args })
}

fn write_json(path: &Path, value: &Value) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    }
    std::fs::write(path, serde_json::to_string_pretty(value)?)
        .with_context(|| format!("cannot write {}", path.display()))
}

fn section(title: &str) {
    println!("\n== {title} ==");
}
