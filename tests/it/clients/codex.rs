//! Codex itself (npm `@openai/codex`, installed by `tests/peers/install_agents.sh`) in front of
//! `toolport serve`, driven as its editor extensions drive it: `codex app-server` over its
//! JSON-RPC on stdio, with toolport in `~/.codex/config.toml` written by
//! `toolport install --client codex`. Codex lists an MCP server's tools once, when a thread
//! starts, and never acts on `list_changed`; so a server that is slow to start must already be
//! on that first list, or be there when the call comes.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::support::acp::Agent;
use crate::support::common::{Env, Piped};
use crate::support::peers::{agent_bin, everything_entry, node};

/// How long the slow server sleeps before it starts: longer than serve waited before issue 45
/// (2 s), within the list wait and Codex's own 10 s startup timeout for an MCP server.
const START_DELAY_S: u32 = 6;

/// A stdio server that takes [`START_DELAY_S`] to start: a shell that sleeps, then becomes the
/// real server-everything (as `npx -y …` is slow to become the server it downloads).
fn slow_everything(env: &Env) -> PathBuf {
    let script = env.root().join("slow-everything.sh");
    let body = format!(
        "#!/bin/sh\nsleep {START_DELAY_S}\nexec '{}' '{}'\n",
        node().display(),
        everything_entry().display()
    );
    std::fs::write(&script, body).unwrap_or_else(|e| panic!("write {}: {e}", script.display()));
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("chmod {}: {e}", script.display()));
    script
}

/// `toolport <args…>` in the test's home and workspace, which must succeed.
fn toolport_ok(env: &Env, user: &Path, args: &[&str]) {
    let (code, out, err) = {
        let o = env
            .cmd(args)
            .env("HOME", user)
            .env_remove("CODEX_HOME")
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap_or_else(|e| panic!("toolport {args:?}: {e}"));
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (o.status.code(), text(&o.stdout), text(&o.stderr))
    };
    assert_eq!(code, Some(0), "toolport {args:?}\n{out}\n{err}");
}

/// The settings a user with slow servers gives Codex's entry (`docs/src/serve/serve.md`): serve's first
/// listing may wait 20 s for a server with no history (`--list-wait`; the default, 8 s, fits
/// a 6 s server on a quiet machine, and the tests' machine is busy), and Codex waits 30 s for
/// it (`startup_timeout_sec`, 10 s by default) — both added beside what `install` wrote.
fn give_slow_servers_time(user: &Path) {
    let file = user.join(".codex/config.toml");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("read {}: {e}", file.display()));
    assert!(text.contains("args = [\"serve\"") && text.ends_with('\n'), "{text}");
    let edited = text.replacen("args = [\"serve\"", "args = [\"serve\", \"--list-wait\", \"20s\"", 1)
        + "startup_timeout_sec = 30\n";
    std::fs::write(&file, edited).unwrap_or_else(|e| panic!("write {}: {e}", file.display()));
}

/// `codex app-server` with the temporary `HOME` (so `~/.codex/config.toml` is the one
/// `install --client codex` wrote), in the workspace, Node on `PATH`.
fn codex_app_server(env: &Env, user: &Path) -> Agent {
    let node_dir = node().parent().map(Path::to_path_buf).unwrap_or_default();
    let mut cmd = Command::new(agent_bin("codex"));
    cmd.arg("app-server")
        .current_dir(env.root())
        .env("HOME", user)
        .env("PATH", format!("{}:/usr/bin:/bin", node_dir.display()))
        .env_remove("CODEX_HOME")
        .env_remove("OPENAI_API_KEY")
        .env_remove("RUST_LOG")
        .env("NO_COLOR", "1");
    Agent::over(Piped::spawn(cmd))
}

/// What Codex reports for the `toolport` MCP server on a new thread: its tools' names, and
/// the text of one call of `echo` made through Codex.
fn codex_sees(env: &Env, user: &Path) -> (Vec<String>, Value) {
    let mut codex = codex_app_server(env, user);
    let init = codex.call(1, "initialize", json!({"clientInfo": {"name": "toolport-tests", "version": "1"}}));
    assert!(init.get("result").is_some(), "{init}");
    codex.send_line(&json!({"jsonrpc": "2.0", "method": "initialized"}).to_string());
    codex.request(2, "thread/start", json!({"ephemeral": true, "cwd": env.root()}));
    let (mut notes, thread) = codex.until_response(2);
    // As an editor shows it: the thread's MCP servers start, each reported `starting`, then
    // `ready` or `failed`.
    let started = loop {
        if let Some(status) = notes.iter().find_map(toolport_started) {
            break status;
        }
        notes = vec![codex.next()];
    };
    assert_eq!(started, "ready null", "codex's thread did not start toolport");
    let thread_id = thread["result"]["thread"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no thread id: {thread}"))
        .to_string();
    let status = codex.call(3, "mcpServerStatus/list", json!({"threadId": thread_id}));
    let servers = status["result"]["data"].as_array().unwrap_or_else(|| panic!("no data: {status}"));
    let ours = servers
        .iter()
        .find(|s| s["name"] == "toolport")
        .unwrap_or_else(|| panic!("codex does not list toolport: {status}"));
    assert!(ours["toolsError"].is_null(), "{ours}");
    let mut tools: Vec<String> =
        ours["tools"].as_object().map(|t| t.keys().cloned().collect()).unwrap_or_default();
    tools.sort();
    let call = codex.call(
        4,
        "mcpServer/tool/call",
        json!({"threadId": thread_id, "server": "toolport", "tool": "echo", "arguments": {"message": "hi"}}),
    );
    (tools, call)
}

/// `ready` or `failed` when `note` says how toolport's start on a thread ended.
fn toolport_started(note: &Value) -> Option<String> {
    let params = &note["params"];
    let ended = note["method"] == "mcpServer/startupStatus/updated"
        && params["name"] == "toolport"
        && params["status"] != "starting";
    ended.then(|| format!("{} {}", params["status"].as_str().unwrap_or_default(), params["error"]))
}

/// Codex, started as `codex app-server`, lists a server that takes 6 s to start and calls its
/// tool: the first time with no history (serve's first listing waits for it), then again
/// with the listing serve kept from the first run.
#[test]
fn codex_app_server_lists_and_calls_the_tools_of_a_server_that_takes_6_s_to_start() {
    let env = Env::new();
    let user = TempDir::new().unwrap_or_else(|e| panic!("temp HOME: {e}"));
    let script = slow_everything(&env);
    let script = script.display().to_string();
    toolport_ok(&env, user.path(), &["mcp", "add", "slow", "--", &script]);
    toolport_ok(&env, user.path(), &["mcp", "enable", "slow"]);
    toolport_ok(&env, user.path(), &["install", "--client", "codex"]);
    give_slow_servers_time(user.path());

    for run in ["no history", "with history"] {
        let (tools, call) = codex_sees(&env, user.path());
        for tool in ["echo", "get-sum", "get-tiny-image"] {
            assert!(tools.iter().any(|t| t == tool), "{run}: codex lists {tools:?}; {call}");
        }
        assert_eq!(call["result"]["isError"], json!(false), "{run}: {call}");
        assert_eq!(call["result"]["content"][0]["text"], "Echo: hi", "{run}: {call}");
    }
}
