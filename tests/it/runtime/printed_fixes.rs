//! Every printed fix runs as printed (issue 45 item 3): each message that suggests a command is
//! read from `mcp list` word for word, its commands are taken out of it and run through the
//! binary exactly as printed, and the problem is then gone: the reserved-name report, a name
//! two servers list, and a package runner's connect timeout (a fake `npx` on PATH that is slow
//! to start, then runs a real server).

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::common::{Env, toolport_path};
use crate::support::runtime::{DEMO_TOOLS, clash, demo, printed_commands, write_config};

const WITHIN: Duration = Duration::from_secs(60);

/// The `mcp list` row of `server`, after `| ` of its name.
fn row(env: &Env, server: &str) -> String {
    let (code, out, err) = env.run(&["mcp", "list"], WITHIN);
    assert_eq!(code, 0, "{err}");
    let start = format!("- {server} | ");
    out.lines()
        .find(|l| l.starts_with(&start))
        .map(str::to_string)
        .unwrap_or_else(|| panic!("no {server} in {out}"))
}

/// The row of a server in `error` with `message`.
fn error_row(server: &str, message: &str) -> String {
    format!(
        "- {server} | type=stdio | state=error | workspace=enabled | paused=no | tools=0 | error={message}"
    )
}

/// The row of a connected server with `tools` tools.
fn connected(server: &str, tools: usize) -> String {
    format!("- {server} | type=stdio | state=connected | workspace=enabled | paused=no | tools={tools}")
}

/// Runs one printed command through the binary, as printed.
fn run_printed(env: &Env, words: &[String]) {
    let args: Vec<&str> = words.iter().map(String::as_str).collect();
    let (code, out, err) = env.run(&args, WITHIN);
    assert_eq!(code, 0, "toolport {args:?}\n{out}{err}");
}

/// A server listing two reserved names, which already leaves out `big`: the message names both
/// and the two fixes; the first, run as printed, keeps `big` out too and the server connects;
/// the second, on a fresh copy, prefixes every tool instead.
#[test]
fn the_reserved_name_fixes_run_as_printed() {
    let message = "MCP tool name conflicts with built-in tool: read_file, write_file. Fix: leave them out \
        (toolport mcp set files tools.exclude big read_file write_file), or prefix every tool with its \
        server's name (toolport workspace set namePolicy namespace)";
    let mut def = demo(&["--extra-tool", "read_file", "--extra-tool", "write_file"]);
    def["tools"] = json!({ "exclude": ["big"] });
    for fix in 0..2 {
        let env = Env::new();
        write_config(&env, json!({ "files": def.clone() }), &["files"], json!({}));
        let row_now = row(&env, "files");
        assert_eq!(row_now, error_row("files", message));
        let commands = printed_commands(&row_now);
        assert_eq!(commands.len(), 2, "{commands:?}");
        run_printed(&env, &commands[fix]);
        // Excluded: the six demo tools and the two extra, less `big` and the two reserved.
        // Namespaced: `big` still left out, the two reserved names now `files__…`.
        let tools = if fix == 0 { 5 } else { 7 };
        assert_eq!(row(&env, "files"), connected("files", tools), "fix {fix}");
    }
}

/// Two servers list `echo`: the later one's report offers the same two fixes, each runnable.
#[test]
fn a_clash_between_two_servers_offers_the_fixes_and_they_run_as_printed() {
    let message = clash("two", "echo", "one", &["echo"], true);
    for fix in 0..2 {
        let env = Env::new();
        let servers = json!({ "one": demo(&[]), "two": demo(&["--prefix", "b_", "--extra-tool", "echo"]) });
        write_config(&env, servers, &["one", "two"], json!({}));
        let row_now = row(&env, "two");
        assert_eq!(row_now, error_row("two", &message));
        let commands = printed_commands(&row_now);
        assert_eq!(commands.len(), 2, "{commands:?}");
        run_printed(&env, &commands[fix]);
        assert_eq!(row(&env, "one"), connected("one", DEMO_TOOLS.len()), "fix {fix}");
        assert_eq!(row(&env, "two"), connected("two", if fix == 0 { 6 } else { 7 }), "fix {fix}");
    }
}

/// A fake `npx` in `bin` that takes `delay` to start, then runs the demo server.
fn slow_npx(bin: &Path, delay: &str) {
    let script = format!("#!/bin/sh\nsleep {delay}\nexec '{}' demo-server\n", toolport_path().display());
    let path = bin.join("npx");
    std::fs::write(&path, script).unwrap_or_else(|e| panic!("write npx: {e}"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .unwrap_or_else(|e| panic!("chmod npx: {e}"));
    }
}

/// `npx` that is slow to start times out under a small `connectMs`; the message says why and
/// prints the command that raises it, and after that command the same server connects.
#[test]
fn a_package_runners_connect_timeout_prints_the_command_that_fixes_it() {
    let env = Env::new();
    let bin = tempfile::tempdir().unwrap_or_else(|e| panic!("bin: {e}"));
    slow_npx(bin.path(), "2");
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
    write_config(
        &env,
        json!({ "slow": { "command": "npx", "args": ["-y", "some-server"], "timeouts": { "connectMs": 300 } } }),
        &["slow"],
        json!({}),
    );
    let list = |env: &Env| -> String {
        let out = env.cmd(["mcp", "list"]).env("PATH", &path).timeout(WITHIN).output();
        let out = out.unwrap_or_else(|e| panic!("mcp list: {e}"));
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let out = list(&env);
    let message = "connect timed out after 300 ms. npx downloads the server's packages on its first run, which \
        can take longer. Fix: toolport mcp set slow timeouts.connectMs 120000";
    let line = out.lines().find(|l| l.starts_with("- slow | ")).unwrap_or_default().to_string();
    assert_eq!(line, error_row("slow", message), "{out}");
    let commands = printed_commands(&line);
    assert_eq!(commands, [["mcp", "set", "slow", "timeouts.connectMs", "120000"]]);
    run_printed(&env, &commands[0]);
    let store: Value = serde_json::from_str(&std::fs::read_to_string(env.store()).unwrap_or_default())
        .unwrap_or_else(|e| panic!("store: {e}"));
    assert_eq!(store["mcpServers"]["slow"]["timeouts"], json!({ "connectMs": 120000 }));
    let out = list(&env);
    assert!(out.contains(&format!("{}\n", connected("slow", DEMO_TOOLS.len()))), "{out}");
}
