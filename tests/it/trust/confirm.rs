//! The workspace's `confirm` setting end to end (issue 28 item 3): toolport asks before it
//! sends a call the setting names, and the server hears of the call only after a yes. The
//! fixture (`tests/trust/confirm_server.py`) writes every call it receives to a log, so "never
//! sent" is what the server saw, not what toolport says. Asked through `serve` of the Python
//! SDK's `ClientSession` (2025-11-25, `elicitation/create`) and `mcp.Client` (2026-07-28, an
//! input-required result); of a client without elicitation (declined, saying why); on a
//! terminal (`call`, y and n); by `call --yes`; and over ACP, as `session/request_permission`
//! the official ACP SDK answers (allow once, reject once).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::serve::clients::{Via, py};
use crate::support::acp::acp_client;
use crate::support::auth::python;
use crate::support::common::{Env, on_a_terminal, toolport_path};
use crate::support::runtime::write_config;
use crate::support::serve::ServeHttp;

/// Long enough for the Python SDK's imports; only stops a hang.
const CALL_TIMEOUT: Duration = Duration::from_secs(90);

/// The question toolport asks before `delete_note` with `{"id": id}`.
pub(crate) fn question(id: &str) -> String {
    format!(
        "toolport asks before calling destructive tools: allow the call of tool delete_note of MCP server \
         notes with the arguments {{\"id\":\"{id}\"}}?"
    )
}

/// What the caller gets for a call of `tool` not sent, ending in `how`.
pub(crate) fn declined(tool: &str, rule: &str, how: &str) -> String {
    format!(
        "MCP tool {tool} on server notes was not called: declined: toolport asks before calling {rule}, and {how}"
    )
}

/// The fixture server enabled in a new workspace with `settings`; returns the env and the log
/// of the calls the server received.
pub(crate) fn notes(settings: Value) -> (Env, PathBuf) {
    let env = Env::new();
    let log = env.root().join("calls.log");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("trust/confirm_server.py");
    let def = json!({"type": "stdio", "command": python(), "args": [script, "--log", log]});
    write_config(&env, json!({ "notes": def }), &["notes"], settings);
    (env, log)
}

/// The calls the server received, one `<tool> <arguments>` each.
pub(crate) fn received(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log).unwrap_or_default().lines().map(str::to_string).collect()
}

/// The audit trail's lines of `env`'s home about confirmations (the tool pins' first sights,
/// recorded there too, are another test's).
fn trail(env: &Env) -> Vec<Value> {
    let text = std::fs::read_to_string(env.home().join("audit/decisions.jsonl")).unwrap_or_default();
    let all = text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("{e}: {l}")));
    all.filter(|d| d["action"] != "pinned").collect()
}

/// `client.py elicit` of `delete_note` with `{"id": id}`, answering `action`.
fn ask_python(via: &Via, client: &str, id: &str, action: &str) -> Value {
    let args = json!({ "id": id }).to_string();
    let tool = ["--tool", "delete_note", "--expect", "delete_note", "--args", &args];
    py("elicit", via, &[&["--client", client, "--action", action][..], &tool].concat())
}

/// Accept sends the call and the result arrives; decline sends nothing and the client reads
/// why; both asked exactly toolport's question, a form without fields.
fn accept_then_decline(via: &Via, client: &str, log: &Path) {
    let accepted = ask_python(via, client, "1", "accept");
    let asked = json!([{"message": question("1"), "fields": []}]);
    assert_eq!(
        accepted,
        json!({"asked": asked, "is_error": false, "texts": [r#"delete_note done: {"id": "1"}"#]}),
        "{client}"
    );
    assert_eq!(received(log), [r#"delete_note {"id": "1"}"#], "{client}");
    let refused = ask_python(via, client, "2", "decline");
    let asked = json!([{"message": question("2"), "fields": []}]);
    let why = declined("delete_note", "destructive tools", "the answer was no");
    assert_eq!(refused, json!({"asked": asked, "is_error": true, "texts": [why]}), "{client}");
    assert_eq!(received(log), [r#"delete_note {"id": "1"}"#], "the declined call reached the server");
}

#[test]
fn serve_asks_the_python_sdk_session_before_a_destructive_call_over_stdio() {
    let (env, log) = notes(json!({}));
    accept_then_decline(&Via::Stdio(&env), "session", &log);
    // serve's process wrote the trail: the tool and the rule, never the arguments.
    let decisions = trail(&env);
    let actions: Vec<&str> = decisions.iter().filter_map(|d| d["action"].as_str()).collect();
    assert_eq!(actions, ["confirmed", "declined"]);
    for decision in &decisions {
        assert_eq!(
            [&decision["server"], &decision["tool"], &decision["rule"]],
            [&json!("notes"), &json!("delete_note"), &json!("confirm")]
        );
        assert!(!decision.to_string().contains("\"id\""), "{decision}");
    }
}

#[test]
fn serve_asks_the_python_sdks_default_client_through_input_required_rounds_over_http() {
    let (env, log) = notes(json!({}));
    let serve = ServeHttp::start(&env);
    accept_then_decline(&Via::Http(&serve.url), "default", &log);
}

#[test]
fn serve_asks_the_python_sdk_session_before_a_destructive_call_over_http() {
    let (env, log) = notes(json!({}));
    let serve = ServeHttp::start(&env);
    accept_then_decline(&Via::Http(&serve.url), "session", &log);
}

/// A client that offers no elicitation cannot be asked: its call is declined, the reason is the
/// tool result it reads, and the server never hears of it. Tools the rule does not name go
/// through unasked.
#[test]
fn a_client_without_elicitation_gets_a_declined_call_with_the_reason() {
    let (env, log) = notes(json!({}));
    let serve = ServeHttp::start(&env);
    for client in ["session", "default"] {
        let seen = py(
            "call",
            &Via::Http(&serve.url),
            &["--client", client, "--tool", "delete_note", "--args", r#"{"id": "3"}"#],
        );
        let why = declined(
            "delete_note",
            "destructive tools",
            "the calling client cannot be asked (it offers no elicitation)",
        );
        assert_eq!((&seen["is_error"], &seen["texts"]), (&json!(true), &json!([why])), "{client}: {seen}");
        let seen = py(
            "call",
            &Via::Http(&serve.url),
            &["--client", client, "--tool", "add_note", "--args", r#"{"id": "4"}"#],
        );
        assert_eq!(seen["texts"], json!([r#"add_note done: {"id": "4"}"#]), "{client}: {seen}");
    }
    assert_eq!(received(&log), [r#"add_note {"id": "4"}"#, r#"add_note {"id": "4"}"#]);
}

/// `toolport call <tool> {"id": id}` without a terminal: (exit code, stdout, stderr).
fn call(env: &Env, tool: &str, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["call", tool, r#"{"id": "x"}"#];
    args.extend(extra);
    env.run(&args, CALL_TIMEOUT)
}

const NO_TERMINAL: &str = "there is no terminal to ask on (toolport call --yes allows it without asking)";

/// Which of the fixture's tools a `call` without a terminal is refused, under `settings`.
fn refused_under(settings: Value) -> Vec<&'static str> {
    let (env, log) = notes(settings);
    let mut refused = Vec::new();
    for tool in ["delete_note", "read_note", "add_note", "plain_note"] {
        let (code, stdout, stderr) = call(&env, tool, &[]);
        if code == 0 {
            assert_eq!(stdout.trim(), format!(r#"{tool} done: {{"id": "x"}}"#));
        } else {
            assert_eq!(code, 1, "{stderr}");
            assert!(
                stderr.contains(&format!("MCP tool {tool} on server notes was not called: declined: ")),
                "{stderr}"
            );
            assert!(stderr.contains(NO_TERMINAL), "{stderr}");
            refused.push(tool);
        }
    }
    let sent: Vec<String> =
        received(&log).iter().filter_map(|l| l.split(' ').next().map(str::to_string)).collect();
    let all = ["delete_note", "read_note", "add_note", "plain_note"];
    let expected: Vec<&str> = all.into_iter().filter(|t| !refused.contains(t)).collect();
    assert_eq!(sent, expected, "the server received a refused call");
    refused
}

#[test]
fn each_setting_asks_about_its_own_tools() {
    assert_eq!(refused_under(json!({})), ["delete_note"]);
    assert_eq!(refused_under(json!({"confirm": "destructive"})), ["delete_note"]);
    assert_eq!(refused_under(json!({"confirm": "writes"})), ["delete_note", "add_note", "plain_note"]);
    assert!(refused_under(json!({"confirm": "never"})).is_empty());
    assert_eq!(refused_under(json!({"confirm": ["read_*", "plain_note"]})), ["read_note", "plain_note"]);
}

#[test]
fn a_wrong_setting_is_a_configuration_error_naming_the_file_and_key() {
    let (env, _log) = notes(json!({"confirm": "sometimes"}));
    let (code, _, stderr) = call(&env, "delete_note", &[]);
    assert_eq!(code, 2, "{stderr}");
    let file = env.workspace_file();
    assert!(
        stderr.contains(&format!(
            "{}: \"confirm\" must be \"destructive\", \"writes\", \"never\" or an array of tool-name globs, not \"sometimes\"",
            file.display()
        )),
        "{stderr}"
    );
}

/// `--yes` allows the call unasked, says so, and the trail records it; the full decline message
/// names the rule.
#[test]
fn call_yes_allows_a_destructive_call_without_a_terminal() {
    let (env, log) = notes(json!({}));
    let (code, _, stderr) = call(&env, "delete_note", &[]);
    assert_eq!(code, 1);
    assert!(stderr.contains(&declined("delete_note", "destructive tools", NO_TERMINAL)), "{stderr}");
    let (code, stdout, stderr) = call(&env, "delete_note", &["--yes"]);
    assert_eq!((code, stdout.trim()), (0, r#"delete_note done: {"id": "x"}"#), "{stderr}");
    assert!(
        stderr.contains(
            "toolport: allowed the call of tool delete_note of MCP server notes without asking (--yes)"
        ),
        "{stderr}"
    );
    assert_eq!(received(&log), [r#"delete_note {"id": "x"}"#]);
    let actions: Vec<Value> = trail(&env).iter().map(|d| d["action"].clone()).collect();
    assert_eq!(actions, [json!("declined"), json!("confirmed")]);
}

/// toolport on a pseudo-terminal (util-linux `script`): keys typed as prompts appear.
struct Terminal {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    screen: Arc<Mutex<String>>,
    reader: std::thread::JoinHandle<()>,
    /// How much of the screen the last awaited text ended at.
    seen: usize,
}

impl Terminal {
    fn start(env: &Env, args: &[&str]) -> Self {
        let (child, stdin, mut stdout) = on_a_terminal(env, args, &[]);
        let screen = Arc::new(Mutex::new(String::new()));
        let shown = Arc::clone(&screen);
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = std::io::Read::read(&mut stdout, &mut buf) {
                if let Ok(mut s) = shown.lock() {
                    s.push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            }
        });
        Self { child, stdin, screen, reader, seen: 0 }
    }

    fn text(&self) -> String {
        self.screen.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Types `keys` once `wanted` is on the screen after what was awaited before. Typed ahead, a
    /// prompt that sets up the terminal may discard them; a prompt that never comes fails.
    fn type_after(&mut self, wanted: &str, keys: &str) {
        let deadline = std::time::Instant::now() + CALL_TIMEOUT;
        loop {
            let now = self.text();
            if let Some(at) = now.get(self.seen..).and_then(|rest| rest.find(wanted)) {
                self.seen += at + wanted.len();
                break;
            }
            if std::time::Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("never saw {wanted:?}:\n{now}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(150));
        self.stdin.write_all(keys.as_bytes()).unwrap_or_else(|e| panic!("type: {e}"));
        self.stdin.flush().unwrap_or_else(|e| panic!("flush: {e}"));
    }

    /// Waits for the process to end; the whole screen.
    fn finish(mut self) -> String {
        let _ = self.child.wait();
        drop(self.stdin);
        let _ = self.reader.join();
        self.screen.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

/// `toolport call delete_note` on a pseudo-terminal, answering `key` to the y/N question; the
/// screen as the terminal got it.
fn answer_on_a_terminal(env: &Env, key: &str) -> String {
    let mut terminal = Terminal::start(env, &["call", "delete_note", r#"{"id": "t"}"#]);
    terminal.type_after("Allow this call?", key);
    terminal.finish()
}

#[test]
fn call_on_a_terminal_asks_y_or_n_before_a_destructive_call() {
    let (env, log) = notes(json!({}));
    let screen = answer_on_a_terminal(&env, "n");
    assert!(screen.contains("toolport asks before calling destructive tools:"), "{screen}");
    assert!(screen.contains("tool delete_note of MCP server notes"), "{screen}");
    assert!(screen.contains(r#"arguments: {"id":"t"}"#), "{screen}");
    assert!(screen.contains(&declined("delete_note", "destructive tools", "the answer was no")), "{screen}");
    assert!(received(&log).is_empty(), "a call answered n reached the server");
    let screen = answer_on_a_terminal(&env, "y");
    assert!(screen.contains(r#"delete_note done: {"id": "t"}"#), "{screen}");
    assert_eq!(received(&log), [r#"delete_note {"id": "t"}"#]);
}

/// The session asks the same way, between its own prompts.
#[test]
fn the_session_on_a_terminal_asks_before_a_destructive_call() {
    let (env, log) = notes(json!({}));
    let mut terminal = Terminal::start(&env, &["session"]);
    terminal.type_after("toolport> ", "/call delete_note {\"id\": \"n\"}\r");
    terminal.type_after("Allow this call?", "n");
    terminal.type_after("toolport> ", "/call delete_note {\"id\": \"y\"}\r");
    terminal.type_after("Allow this call?", "y");
    terminal.type_after("toolport> ", "/quit\r");
    let screen = terminal.finish();
    assert!(screen.contains(&declined("delete_note", "destructive tools", "the answer was no")), "{screen}");
    assert!(screen.contains(r#"delete_note done: {"id": "y"}"#), "{screen}");
    assert_eq!(received(&log), [r#"delete_note {"id": "y"}"#]);
}

/// Over ACP toolport asks with `session/request_permission` (the official SDK client answers):
/// allow once sends the call, reject once does not, and the prompt's reply says why.
#[test]
fn acp_asks_the_clients_permission_before_a_destructive_call() {
    let (client_dir, node) = acp_client();
    let (env, log) = notes(json!({}));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("trust/confirm_server.py");
    let config = json!({
        "toolport": toolport_path(),
        "home": env.home(),
        "cwd": env.root(),
        "server": {"command": python(), "args": [script, "--log", log]},
        "answers": ["allow_once", "reject_once"],
    });
    let out = std::process::Command::new(&node)
        .arg(client_dir.join("permission.mjs"))
        .arg(config.to_string())
        .current_dir(&client_dir)
        .output()
        .unwrap_or_else(|e| panic!("run the ACP client with {}: {e}", node.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "ACP client failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let seen: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let asked = seen["asked"].as_array().cloned().unwrap_or_default();
    assert_eq!(asked.len(), 2, "{seen}");
    for (i, request) in asked.iter().enumerate() {
        assert_eq!(request["sessionId"], seen["sessionId"]);
        let call = &request["toolCall"];
        assert_eq!(call["title"], "Call tool delete_note of MCP server notes", "{seen}");
        assert_eq!(call["rawInput"], json!({"id": i.to_string()}), "{seen}");
        assert_eq!(call["content"][0]["content"]["text"], question(&i.to_string()), "{seen}");
        let kinds: Vec<&Value> =
            request["options"].as_array().into_iter().flatten().map(|o| &o["kind"]).collect();
        assert_eq!(kinds, [&json!("allow_once"), &json!("reject_once")]);
    }
    let replies: Vec<&str> =
        seen["replies"].as_array().into_iter().flatten().filter_map(|r| r["text"].as_str()).collect();
    assert_eq!(
        replies,
        [
            r#"delete_note done: {"id": "0"}"#.to_string(),
            declined("delete_note", "destructive tools", "the answer was no")
        ]
    );
    assert_eq!(received(&log), [r#"delete_note {"id": "0"}"#], "the rejected call reached the server");
}
