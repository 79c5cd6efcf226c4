//! `toolport session` driven as a script (stdin piped, one command per line) against the
//! binary's own `demo-server`s: the whole `/mcp` language with the original tool's exact
//! messages, pauses that never reach the disk, and `retry`/`pause` that touch only the server
//! they name (observed through each server's process id).

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::support::common::{Env, toolport_path};
use crate::support::session::{COMMAND_TIMEOUT, Scripted};

/// `/mcp add` for a demo server whose tools are named `<name>_…`, quoted shell-style.
fn add_demo(name: &str) -> String {
    let exe = toolport_path();
    let exe = shlex_quote(&exe.display().to_string());
    format!("/mcp add --transport stdio {name} -- {exe} demo-server --prefix {name}_")
}

fn shlex_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A status row as the view prints it.
fn row(name: &str, state: &str, enabled: bool, paused: bool, tools: usize) -> String {
    format!(
        "- {name} | type=stdio | state={state} | workspace={} | paused={} | tools={tools}\n",
        if enabled { "enabled" } else { "disabled" },
        if paused { "yes" } else { "no" },
    )
}

fn view(env: &Env, rows: &[String]) -> String {
    format!(
        "mcp:\n{}- store={}\n- workspaceConfig={}\n",
        rows.concat(),
        env.store().display(),
        env.workspace_file().display()
    )
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

#[test]
fn whole_mcp_language_with_the_reference_messages() {
    let env = Env::new();
    let mut s = Scripted::start(&env);
    let store = env.store().display().to_string();

    assert_eq!(s.run("/mcp"), "mcp: (none)\n");
    assert_eq!(s.run(&add_demo("a")), format!("mcp added: a -> {store}\n"));
    assert_eq!(s.run(&add_demo("b")), format!("mcp added: b -> {store}\n"));
    assert_eq!(s.run(&add_demo("a")), "MCP server already exists: a\n");
    // `add` does not enable.
    assert_eq!(
        s.run("/mcp list"),
        view(&env, &[row("a", "disabled", false, false, 0), row("b", "disabled", false, false, 0)])
    );
    assert_eq!(s.run("/mcp enable nope"), "Unknown MCP server: nope\n");
    s.run("/mcp enable a");
    assert_eq!(
        s.run("/mcp enable b"),
        view(&env, &[row("a", "connected", true, false, 6), row("b", "connected", true, false, 6)])
    );

    assert_eq!(
        s.run("/mcp pause a"),
        view(&env, &[row("a", "paused", true, true, 0), row("b", "connected", true, false, 6)])
    );
    assert_eq!(s.run("/mcp pause a"), "mcp already paused: a\n");
    // The reference's sentence, then whose the tool is (its pin) and how to get it back.
    assert_eq!(
        s.run("/call a_echo {\"message\": \"x\"}"),
        "Unknown MCP tool: a_echo. Its server is not connected: a (paused; `/mcp resume a` resumes it)\n"
    );
    s.run("/mcp resume a");
    assert_eq!(s.run("/mcp resume a"), "MCP server is not paused in this session: a\n");
    assert_eq!(s.run(r#"/call a_echo {"message": "hello  there"}"#), "hello  there\n");
    assert_eq!(s.run("/call a_add {\"a\": 2, \"b\": 3}"), "5\n");
    assert_eq!(s.run("/call a_fail"), "tool error: demo failure\n");

    assert_eq!(s.run("/mcp pause"), "Usage: /mcp pause <name>\n");
    assert_eq!(s.run("/mcp retry a b"), "Usage: /mcp retry <name>\n");
    assert_eq!(
        s.run("/mcp frobnicate a"),
        "Unknown /mcp action: frobnicate. Use /mcp, /mcp list, /mcp add --transport \
         <stdio|sse|http> <name> <target>, /mcp enable <name>, /mcp disable <name>, /mcp pause \
         <name>, /mcp resume <name>, /mcp retry <name>, /mcp login <name>, /mcp logout <name>, or \
         /mcp remove <name>.\n"
    );
    assert_eq!(s.run("/mcp retry nope"), "Unknown MCP server: nope\n");

    assert_eq!(
        s.run("/mcp disable b"),
        view(&env, &[row("a", "connected", true, false, 6), row("b", "disabled", false, false, 0)])
    );
    assert_eq!(s.run("/mcp disable b"), "MCP server is not enabled in this workspace: b\n");
    assert_eq!(s.run("/mcp pause b"), "MCP server is not enabled in this workspace: b\n");
    assert_eq!(
        s.run("/mcp remove b"),
        format!("mcp removed: b\n{}", view(&env, &[row("a", "connected", true, false, 6)]))
    );
    assert_eq!(s.run("/mcp remove b"), "Unknown MCP server: b\n");

    let help = s.run("/help");
    for line in [
        "/mcp  Show current MCP services and status",
        "/mcp add --transport <stdio|sse|http> <name> <target>  Add a global MCP service",
        "/mcp enable|disable <name>  Toggle workspace MCP enablement",
        "/mcp pause|resume <name>  Toggle current session MCP activation",
        "/mcp retry <name>  Reconnect an enabled MCP service",
        "/mcp remove <name>  Delete a global MCP service",
    ] {
        assert!(help.lines().any(|l| l == line), "{line:?} missing from /help:\n{help}");
    }
    let tools: Value = serde_json::from_str(&s.run("/tools")).unwrap_or_else(|e| panic!("/tools JSON: {e}"));
    let names: Vec<&str> = tools
        .as_array()
        .map(|t| t.iter().filter_map(|t| t.pointer("/function/name").and_then(Value::as_str)).collect())
        .unwrap_or_default();
    assert_eq!(names, ["a_echo", "a_add", "a_sleep", "a_fail", "a_big", "a_pid"]);
    assert!(s.run("what time is it?").contains("not a model"));
    assert!(s.quit().success());

    // The workspace file holds only what enable/disable/remove wrote.
    let ws: Value = serde_json::from_slice(&read(&env.workspace_file())).unwrap_or(Value::Null);
    assert_eq!(ws["enabledMcpServers"], serde_json::json!(["a"]));
}

#[test]
fn pause_lives_only_in_the_session_and_touches_only_its_server() {
    let env = Env::new();
    let mut s = Scripted::start(&env);
    s.run(&add_demo("a"));
    s.run(&add_demo("b"));
    s.run("/mcp enable a");
    s.run("/mcp enable b");
    let (a1, b1) = (s.pid("a_"), s.pid("b_"));
    let store_before = read(&env.store());
    let workspace_before = read(&env.workspace_file());

    assert!(
        s.run("/mcp pause a").contains("- a | type=stdio | state=paused | workspace=enabled | paused=yes")
    );
    assert_eq!(read(&env.store()), store_before, "pause must not write the store");
    assert_eq!(read(&env.workspace_file()), workspace_before, "pause must not write the workspace file");
    assert_eq!(s.pid("b_"), b1, "pausing a must not restart b");

    s.run("/mcp resume a");
    assert_eq!(read(&env.store()), store_before);
    assert_eq!(read(&env.workspace_file()), workspace_before);
    let a2 = s.pid("a_");
    assert_ne!(a2, a1, "resume starts a new process for a");
    assert_eq!(s.pid("b_"), b1, "resuming a must not restart b");

    // A pause ends with its session: the next session starts with nothing paused.
    s.run("/mcp pause b");
    assert!(s.quit().success());
    let mut next = Scripted::start(&env);
    assert_eq!(
        next.run("/mcp"),
        view(&env, &[row("a", "connected", true, false, 6), row("b", "connected", true, false, 6)])
    );
    assert!(next.quit().success());
}

#[test]
fn retry_reconnects_only_the_named_server() {
    let env = Env::new();
    let mut s = Scripted::start(&env);
    for name in ["a", "b", "c"] {
        s.run(&add_demo(name));
        s.run(&format!("/mcp enable {name}"));
    }
    let before = [s.pid("a_"), s.pid("b_"), s.pid("c_")];
    assert_eq!(
        s.run("/mcp retry b"),
        view(
            &env,
            &[
                row("a", "connected", true, false, 6),
                row("b", "connected", true, false, 6),
                row("c", "connected", true, false, 6)
            ]
        )
    );
    let after = [s.pid("a_"), s.pid("b_"), s.pid("c_")];
    assert_eq!(after[0], before[0], "retry b must not restart a");
    assert_ne!(after[1], before[1], "retry b reconnects b");
    assert_eq!(after[2], before[2], "retry b must not restart c");
    s.run("/mcp disable c");
    assert_eq!(s.run("/mcp retry c"), "MCP server is not enabled in this workspace: c\n");
    // enable/disable connect or close only the server they name, too.
    s.run("/mcp enable c");
    assert_ne!(s.pid("c_"), after[2], "re-enabled c runs in a new process");
    assert_eq!([s.pid("a_"), s.pid("b_")], [after[0], after[1]], "disable/enable c left a and b alone");
    assert!(s.quit().success());
}

#[test]
fn add_takes_the_cli_arguments_with_shell_quoting() {
    let env = Env::new();
    // The workspace names `q` before it exists: it is `missing` until added.
    let ws = env.workspace_file();
    std::fs::create_dir_all(ws.parent().unwrap_or_else(|| panic!("no parent")))
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&ws, r#"{"enabledMcpServers": ["q"]}"#).unwrap_or_else(|e| panic!("write workspace: {e}"));
    let mut s = Scripted::start(&env);
    assert!(s.run("/mcp").contains("- q | type=(unknown) | state=missing | workspace=enabled"));
    let exe = shlex_quote(&toolport_path().display().to_string());
    let answer = s.run(&format!(
        r#"/mcp add --transport stdio --env "GREETING=hello world" --cwd '{}' q -- {exe} demo-server --prefix "q_""#,
        env.root().display()
    ));
    // Added, and because the workspace already enabled it, connected right away.
    assert!(answer.starts_with(&format!("mcp added: q -> {}\n", env.store().display())), "{answer}");
    assert!(answer.contains(&row("q", "connected", true, false, 6)), "{answer}");
    let store: Value = serde_json::from_slice(&read(&env.store())).unwrap_or(Value::Null);
    assert_eq!(store["mcpServers"]["q"]["env"]["GREETING"], "hello world");
    assert_eq!(store["mcpServers"]["q"]["args"], serde_json::json!(["demo-server", "--prefix", "q_"]));
    // `--force` and the timeout flags as on the command line: replaced wholesale, still enabled,
    // reconnected with the new definition.
    let answer =
        s.run(&format!("/mcp add --force --connect-timeout 45000 q -- {exe} demo-server --prefix r_"));
    assert!(answer.starts_with(&format!("mcp replaced: q -> {}\n", env.store().display())), "{answer}");
    assert!(answer.contains(&row("q", "connected", true, false, 6)), "{answer}");
    let store: Value = serde_json::from_slice(&read(&env.store())).unwrap_or(Value::Null);
    assert_eq!(
        store["mcpServers"]["q"],
        serde_json::json!({"type": "stdio", "command": toolport_path(), "args": ["demo-server", "--prefix", "r_"],
                           "timeouts": {"connectMs": 45000}})
    );
    assert_eq!(s.run(r#"/call r_echo {"message": "new"}"#), "new\n");
    let bad = s.run("/mcp add --transport stdio 'unclosed");
    assert!(bad.starts_with("Unbalanced quotes in /mcp add"), "{bad}");
    let usage = s.run("/mcp add --transport sse y");
    assert!(usage.ends_with("Usage: /mcp add --transport <stdio|sse|http> <name> <target>\n"), "{usage}");
    assert!(s.quit().success());
}

#[test]
fn end_of_input_ends_the_session() {
    let env = Env::new();
    let out = crate::support::common::toolport()
        .arg("--home")
        .arg(env.home())
        .arg("--workspace")
        .arg(env.root())
        .arg("session")
        .write_stdin(&b"/mcp\n/mcp bogus\n/mcp \xff\n"[..])
        .timeout(COMMAND_TIMEOUT)
        .output()
        .unwrap_or_else(|e| panic!("run session: {e}"));
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    // No prompt or banner when stdin is not a terminal: only the answers.
    assert!(stdout.starts_with("mcp: (none)\nUnknown /mcp action: bogus. Use /mcp,"), "{stdout}");
    // A line that is not UTF-8 is answered like any other unknown action, not fatal.
    assert!(stdout.contains("Unknown /mcp action: \u{fffd}. Use /mcp,"), "{stdout}");
}

/// On a terminal the session uses the line editor: a prompt, tab completion of actions and
/// server names, and a history file in the home folder. Driven through a pseudo-terminal
/// (`script` from util-linux).
#[test]
fn a_terminal_gets_completion_and_history() {
    let env = Env::new();
    let demo = serde_json::json!({"command": toolport_path(), "args": ["demo-server", "--prefix", "t_"]});
    std::fs::write(env.store(), serde_json::json!({"mcpServers": {"alpha": demo}}).to_string())
        .unwrap_or_else(|e| panic!("write store: {e}"));
    let (mut child, mut stdin, mut stdout) = crate::support::common::session_on_a_terminal(&env);
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut out);
        String::from_utf8_lossy(&out).into_owned()
    });
    // Keys as typed: Tab completes `ena` to `enable` and `al` to `alpha`.
    for keys in ["/mcp ena\t al\t\r", "/quit\r"] {
        std::thread::sleep(Duration::from_millis(1500));
        stdin.write_all(keys.as_bytes()).unwrap_or_else(|e| panic!("type: {e}"));
        stdin.flush().unwrap_or_else(|e| panic!("flush: {e}"));
    }
    let status = child.wait().unwrap_or_else(|e| panic!("wait: {e}"));
    drop(stdin);
    let screen = reader.join().unwrap_or_else(|_| panic!("reader panicked"));
    assert!(status.success(), "{screen}");
    assert!(screen.contains("toolport> "), "no prompt:\n{screen}");
    assert!(screen.contains("- alpha | type=stdio | state=connected | workspace=enabled"), "{screen}");
    let history = std::fs::read_to_string(env.home().join("session_history")).unwrap_or_default();
    assert!(history.lines().any(|l| l == "/mcp enable alpha"), "history: {history:?}");
}
