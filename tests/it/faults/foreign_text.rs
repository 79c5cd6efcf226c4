//! Issue 11 item 8: text a server or a plugin controls is bounded where the error is built
//! (4 KiB) and escaped in every text view: no raw escape sequence (clear screen, window title,
//! OSC 52 clipboard write) reaches the terminal from the status view, the `Warning:` lines,
//! `tools`, `call` or the session, a plugin's log message cannot forge a host log line, and a
//! transport's flood of messages that are not JSON-RPC costs a few log lines, not one each.
//! `--json` keeps the exact text (JSON escapes it its own way). Every case runs next to a
//! healthy neighbour that keeps working.

use std::process::Output;

use serde_json::{Value, json};
use toolport::{RuntimeOptions, Session};

use crate::support::common::Env;
use crate::support::faults::{OK, fault, healthy, write};
use crate::support::runtime::{demo, paths};
use crate::support::transport::{Exposed, Framing, built_plugin};

/// `toolport <args…>` in `env`, with the default log level (warnings on stderr).
fn run(env: &Env, args: &[&str]) -> Output {
    env.cmd(args).output().unwrap_or_else(|e| panic!("run {args:?}: {e}"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Panics if `out` holds a raw C0 control other than `\n` and `\t`, DEL or a C1 control.
fn assert_no_raw_controls(what: &str, out: &str) {
    let raw: Vec<char> = out.chars().filter(|c| c.is_control() && *c != '\n' && *c != '\t').collect();
    assert!(raw.is_empty(), "{what} holds raw controls {raw:?}: {out}");
}

fn plugins() -> Value {
    json!({
        "fault": { "kind": "name-policy", "path": built_plugin("fixture_fault_policy") },
        "hostile": { "kind": "transport", "path": built_plugin("fixture_transport_hostile") },
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_sequences_from_a_server_never_reach_the_terminal() {
    let env = Env::new();
    write(&env, &[("esc", fault("escapes", &[])), (OK, healthy())], json!({}), json!({}));

    let tools = text(&run(&env, &["tools"]).stdout);
    assert_no_raw_controls("tools", &tools);
    assert!(tools.contains("poke — Pokes\\u{1b}[2J\\u{1b}]0;owned\\u{7} and more\n"), "{tools}");
    assert!(tools.contains("ok_echo"), "{tools}");

    let call = run(&env, &["call", "poke"]);
    let shown = text(&call.stdout);
    assert_no_raw_controls("call", &shown);
    assert_eq!(
        shown,
        "\\u{1b}[2J\\u{1b}]0;owned\\u{7}\\u{1b}]52;c;ZXZpbA==\\u{7}poked\\u{d}\nline two\\u{9b}31m\n"
    );
    let neighbour = run(&env, &["call", "ok_echo", r#"{"message":"fine"}"#]);
    assert_eq!(text(&neighbour.stdout), "fine\n");

    // `--json` is for programs: the exact text, escaped as JSON escapes it.
    let json_out = run(&env, &["tools", "--json"]);
    let parsed: Value = serde_json::from_slice(&json_out.stdout).unwrap_or_else(|e| panic!("json: {e}"));
    let description = parsed[0]["function"]["description"].as_str().unwrap_or_default().to_string();
    assert_eq!(description, "Pokes\u{1b}[2J\u{1b}]0;owned\u{7} and more");

    // The session's replies are text views too.
    let mut session = Session::start(paths(&env), RuntimeOptions::default())
        .await
        .unwrap_or_else(|e| panic!("session: {e:#}"));
    let reply = session.execute("/call poke").await.text;
    assert_no_raw_controls("/call", &reply);
    assert!(reply.contains("\\u{1b}]52;c;ZXZpbA==\\u{7}poked"), "{reply}");
    let tools = session.execute("/tools").await.text;
    assert_no_raw_controls("/tools", &tools);
    assert!(session.execute("/call ok_echo {\"message\":\"hi\"}").await.text.contains("hi"));
    session.shutdown().await;
}

/// A 10 MiB reject reason (the name policy) or a 10 MiB transport error (the transport
/// plugin), both full of escape sequences, from a server named `shout` (the fixtures' mode):
/// the row holds at most 4 KiB of it, `mcp list --json` stays small, and the text view and the
/// `Warning:` line are escaped and clipped to the status view's 120 columns.
#[tokio::test(flavor = "multi_thread")]
async fn a_10_mb_reason_or_transport_error_is_clipped_and_escaped() {
    let policy = json!({ "namePolicy": "fault" });
    let cases = [
        (demo(&["--prefix", "shout_"]), policy, "name policy fault rejected tool shout_echo: \u{1b}[2J"),
        (
            json!({ "type": "hostile", "url": "tcp://127.0.0.1:9" }),
            json!({}),
            "transport plugin hostile: \u{1b}[2J",
        ),
    ];
    for (shout, workspace, starts) in cases {
        let env = Env::new();
        write(&env, &[("shout", shout), (OK, healthy())], plugins(), workspace);
        let listed = run(&env, &["mcp", "list", "--json"]);
        assert!(listed.stdout.len() < 32 << 10, "mcp list --json printed {} bytes", listed.stdout.len());
        let parsed: Value = serde_json::from_slice(&listed.stdout).unwrap_or_else(|e| panic!("json: {e}"));
        let rows = parsed["servers"].as_array().cloned().unwrap_or_default();
        let row = |name: &str| rows.iter().find(|r| r["name"] == name).cloned().unwrap_or_default();
        let error = row("shout")["error"].as_str().unwrap_or_default().to_string();
        assert!(error.starts_with(starts), "{error:.200}");
        assert!(error.len() < 4096 + 200 && error.ends_with("more bytes cut)"), "{} bytes", error.len());
        let ok = row(OK);
        assert_eq!((ok["state"].as_str(), ok["tools"].as_u64()), (Some("connected"), Some(6)));

        let view = run(&env, &["mcp", "list"]);
        let (stdout, stderr) = (text(&view.stdout), text(&view.stderr));
        assert_no_raw_controls("the status view", &stdout);
        assert_no_raw_controls("stderr", &stderr);
        assert!(stdout.lines().all(|l| l.chars().count() < 250), "{stdout}");
        assert!(
            stdout.contains("| error=name policy fault rejected tool shout_echo: \\u{1b}[2J")
                || stdout.contains("| error=transport plugin hostile: \\u{1b}[2J"),
            "{stdout}"
        );
        // `tools` prints the startup warnings.
        let stderr = text(&run(&env, &["tools"]).stderr);
        assert_no_raw_controls("stderr of tools", &stderr);
        let warnings: Vec<&str> = stderr.lines().filter(|l| l.starts_with("Warning:")).collect();
        assert_eq!(warnings.len(), 1, "{stderr:.2000}");
        let clipped = warnings[0].strip_prefix("Warning: MCP unavailable: shout (").unwrap_or_default();
        assert_eq!(clipped.trim_end_matches(')').chars().count(), 120, "{}", warnings[0]);
        assert!(clipped.ends_with("...)"), "{}", warnings[0]);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plugin_log_message_cannot_forge_a_host_log_line() {
    let env = Env::new();
    write(
        &env,
        &[("forge", demo(&["--prefix", "forge_"])), (OK, healthy())],
        plugins(),
        json!({ "namePolicy": "fault" }),
    );
    let listed = run(&env, &["mcp", "list"]);
    let (stdout, stderr) = (text(&listed.stdout), text(&listed.stderr));
    assert!(stdout.contains("- forge | type=stdio | state=connected"), "{stdout}");
    assert!(stdout.contains("- ok | type=stdio | state=connected"), "{stdout}");
    assert_no_raw_controls("stderr", &stderr);
    let forged: Vec<&str> = stderr.lines().filter(|l| l.contains("forged host line")).collect();
    assert_eq!(forged.len(), 1, "{stderr}");
    assert!(forged[0].contains("innocent\\u{a}ERROR toolport: forged host line\\u{d}\\u{1b}[2J"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_flood_of_messages_that_are_not_json_rpc_costs_a_few_log_lines() {
    let env = Env::new();
    let server = Exposed::start(Framing::Tcp, &[]);
    write(
        &env,
        &[("babble", json!({ "type": "hostile", "url": server.url() })), (OK, healthy())],
        plugins(),
        json!({}),
    );
    let listed = run(&env, &["mcp", "list"]);
    let (stdout, stderr) = (text(&listed.stdout), text(&listed.stderr));
    assert!(
        stdout
            .contains("- babble | type=hostile | state=connected | workspace=enabled | paused=no | tools=6"),
        "{stdout}"
    );
    assert!(stdout.contains("- ok | type=stdio | state=connected"), "{stdout}");
    let noted = stderr.lines().filter(|l| l.contains("not JSON-RPC")).count();
    // The first, then 10, 100, 1,000, 10,000 and 100,000 so far, then maybe the total.
    assert!((1..=8).contains(&noted), "{noted} lines about messages that are not JSON-RPC");
    assert!(stderr.contains("dropped 100000 messages that are not JSON-RPC"), "{stderr:.3000}");
}
