//! The audit log (`<home>/audit/calls.jsonl`): a real agent's calls through `toolport serve`
//! (the Python SDK's default `mcp.Client` over streamable HTTP) to server-everything, one line
//! each and not one argument value in them unless the workspace asks (`audit.values`), and a
//! configured secret never; reads and prompts; `toolport audit tail` as text, as JSON,
//! filtered and followed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::serve::clients::python;
use crate::support::common::Env;
use crate::support::peers::everything_stdio;
use crate::support::runtime::{demo, write_config};
use crate::support::serve::ServeHttp;

const WITHIN: Duration = Duration::from_secs(120);

fn log_file(env: &Env) -> PathBuf {
    env.home().join("audit/calls.jsonl")
}

/// Every line of the log, parsed.
fn lines(env: &Env) -> Vec<Value> {
    let text = std::fs::read_to_string(log_file(env)).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}")))
        .collect()
}

/// `tests/observe/audit_client.py` against `url`; the JSON it printed.
fn client(url: &str, extra: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("observe/audit_client.py");
    let out = Command::new(python())
        .arg(&script)
        .args(["--url", url])
        .args(extra)
        .output()
        .unwrap_or_else(|e| panic!("run audit_client.py: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let seen: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|_| {
        panic!("audit_client.py printed no JSON:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr))
    });
    assert!(seen.get("error").is_none() && out.status.success(), "audit_client.py failed: {seen}");
    seen
}

#[test]
fn a_thousand_calls_through_serve_are_a_thousand_lines_without_one_value() {
    let env = Env::new();
    write_config(&env, json!({ "everything": everything_stdio() }), &["everything"], json!({}));
    let serve = ServeHttp::start(&env);
    let seen = client(
        &serve.url,
        &[
            "--calls",
            "1000",
            "--prefix",
            "tangerine",
            "--uri",
            "demo://resource/static/document/architecture.md",
            "--prompt",
            "args-prompt",
            "--prompt-args",
            r#"{"city": "Lisbon-quince"}"#,
        ],
    );
    assert_eq!(seen["errors"], json!(0), "{seen}");
    let text = std::fs::read_to_string(log_file(&env)).unwrap_or_default();
    let all = lines(&env);
    let calls: Vec<&Value> = all.iter().filter(|l| l["kind"] == "call").collect();
    assert_eq!(calls.len(), 1000, "{} lines", all.len());
    assert!(!text.contains("tangerine"), "an argument value is in the log");
    assert!(!text.contains("quince"), "a prompt argument's value is in the log");
    let first = calls[0];
    assert_eq!(first["server"], "everything");
    assert_eq!(first["tool"], "echo");
    assert_eq!(first["outcome"], "ok");
    assert_eq!(first["shape"], json!({"message": "string"}));
    assert!(first.get("arguments").is_none(), "{first}");
    assert_eq!(first["bytes_in"], json!(r#"{"message":"tangerine-0000"}"#.len()));
    assert!(first["bytes_out"].as_u64().is_some_and(|n| n > 0), "{first}");
    assert!(first["duration_ms"].as_f64().is_some_and(|ms| ms >= 0.0), "{first}");
    let time = first["time"].as_str().unwrap_or_default();
    // RFC 3339 in UTC to the millisecond: 2026-12-04T22:31:07.123Z.
    let b = time.as_bytes();
    assert!(b.len() == 24 && b[10] == b'T' && b[19] == b'.' && b[23] == b'Z', "{time}");
    // The client is named: the SDK's clientInfo name and, over HTTP with a session, its id.
    let client = first["client"].as_str().unwrap_or_default();
    assert!(!client.is_empty(), "{first}");
    assert!(calls.iter().all(|c| c["client"] == first["client"]), "one client, one label");

    let read = all.iter().find(|l| l["kind"] == "read").unwrap_or_else(|| panic!("no read line"));
    assert_eq!(read["uri"], "demo://resource/static/document/architecture.md");
    assert_eq!((&read["server"], &read["outcome"]), (&json!("everything"), &json!("ok")));
    let prompt = all.iter().find(|l| l["kind"] == "prompt").unwrap_or_else(|| panic!("no prompt line"));
    assert_eq!(prompt["prompt"], "args-prompt");
    assert_eq!(prompt["shape"], json!({"city": "string"}));
    assert_eq!(prompt["outcome"], "ok");

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(log_file(&env)).map(|m| m.permissions().mode() & 0o777);
        assert_eq!(mode.ok(), Some(0o600));
    }
}

#[test]
fn with_audit_values_the_arguments_are_logged_but_never_a_configured_secret() {
    const TOKEN: &str = "tpk-audit-5f9c2e7a1b8d";
    const GITHUB_TOKEN: &str = "ghp_R7kQ2mZx9VbN4cL8wT1yH6sJ3dF5gA0pE2uI";
    let env = Env::new();
    let mut everything = everything_stdio();
    everything["env"] = json!({ "AUDIT_TOKEN": "${AUDIT_TEST_TOKEN}" });
    // The guard lets arguments through (`off`): the log must still mask the secret itself.
    let settings = json!({ "audit": { "values": true }, "secrets": "off" });
    write_config(&env, json!({ "everything": everything }), &["everything"], settings);
    let serve = ServeHttp::start_with(&env, &["--audit-stderr"], &[("AUDIT_TEST_TOKEN", TOKEN)]);
    client(&serve.url, &["--calls", "3", "--prefix", "plum"]);
    client(&serve.url, &["--calls", "1", "--prefix", TOKEN]);
    // A secret of a shape the scanner knows (a GitHub token) is masked too.
    client(&serve.url, &["--calls", "1", "--prefix", GITHUB_TOKEN]);
    let text = std::fs::read_to_string(log_file(&env)).unwrap_or_default();
    let all = lines(&env);
    assert_eq!(all.len(), 5, "{text}");
    assert!(!text.contains(GITHUB_TOKEN), "a token is in the log:\n{text}");
    assert_eq!(all[4]["shape"], json!({"message": "string"}));
    assert_eq!(all[1]["arguments"], json!({"message": "plum-0001"}));
    assert_eq!(all[1]["shape"], json!({"message": "string"}));
    assert!(!text.contains(TOKEN), "a configured secret is in the log:\n{text}");
    assert_eq!(all[3]["arguments"], json!({"message": "***-0000"}));
    // `--audit-stderr`: the same lines on serve's stderr, the secret masked there too.
    let stderr = serve.wait_for_line("plum-0002", WITHIN);
    assert!(stderr.contains(r#""tool":"echo""#) && !stderr.contains(TOKEN), "{stderr}");
}

/// A workspace of the demo server with a few calls made by `toolport call`: ok, a tool's own
/// error, and one that never reached a server.
fn demo_with_calls() -> Env {
    let env = Env::new();
    write_config(&env, json!({ "demo": demo(&[]) }), &["demo"], json!({}));
    for (tool, args) in [("echo", r#"{"message": "fig-1"}"#), ("fail", "{}"), ("nope", "{}")] {
        env.run(&["call", tool, args], WITHIN);
    }
    env
}

#[test]
fn audit_tail_shows_text_json_and_filters() {
    let env = Env::new();
    write_config(&env, json!({ "demo": demo(&[]) }), &["demo"], json!({}));
    let (code, _, stderr) = env.run(&["audit", "tail"], WITHIN);
    let file = log_file(&env);
    assert_eq!(code, 0);
    assert_eq!(
        stderr,
        format!("No audit log yet: toolport writes it to {} as calls pass through.\n", file.display())
    );

    let env = demo_with_calls();
    let (code, stdout, stderr) = env.run(&["audit", "tail"], WITHIN);
    assert_eq!(code, 0, "{stderr}");
    let shown: Vec<&str> = stdout.lines().collect();
    assert_eq!(shown.len(), 3, "{stdout}");
    let words = |line: &str| line.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    assert_eq!(words(shown[0])[1..4], ["call", "demo/echo", "ok"], "{stdout}");
    assert_eq!(words(shown[1])[1..4], ["call", "demo/fail", "tool-error"], "{stdout}");
    assert_eq!(words(shown[2])[1..5], ["call", "nope", "error", "(unknown-tool)"], "{stdout}");
    // Aligned: the outcome starts at the same column on every line.
    let at = |line: &str, word: &str| line.find(word).unwrap_or_default();
    assert_eq!(at(shown[0], " ok "), at(shown[1], " tool-error "), "{stdout}");
    assert!(!stdout.contains("fig-1"), "{stdout}");

    let (_, json_out, _) = env.run(&["audit", "tail", "--json", "-n", "2"], WITHIN);
    let raw = std::fs::read_to_string(log_file(&env)).unwrap_or_default();
    let newest: Vec<&str> = raw.lines().skip(1).collect();
    assert_eq!(json_out.lines().collect::<Vec<_>>(), newest);

    let filtered = |args: &[&str]| {
        let mut all = vec!["audit", "tail", "--json"];
        all.extend(args);
        let (code, out, err) = env.run(&all, WITHIN);
        assert_eq!(code, 0, "{err}");
        out.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap_or_default()["tool"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(filtered(&["--outcome", "tool-error"]), [json!("fail")]);
    assert_eq!(filtered(&["--server", "demo"]), [json!("echo"), json!("fail")]);
    assert_eq!(filtered(&["--tool", "echo", "--kind", "call"]), [json!("echo")]);
    assert_eq!(filtered(&["--kind", "read"]), Vec::<Value>::new());

    let (code, _, stderr) = env.run(&["audit", "tail", "--outcome", "failed"], WITHIN);
    assert_eq!(code, 2);
    assert_eq!(stderr, "toolport: --outcome must be ok, tool-error, error, not \"failed\"\n");
    let (code, _, stderr) = env.run(&["audit", "tail", "--kind", "list"], WITHIN);
    assert_eq!(code, 2);
    assert_eq!(stderr, "toolport: --kind must be call, read, prompt, sign-in, not \"list\"\n");
}

/// Runs `follow` (an `audit tail --follow`) and makes calls until it prints a line (it may
/// open the file after the first call), then stops it: the first line it printed, if any.
fn follow_while_calling(env: &Env, follow: &[&str]) -> Option<String> {
    let mut follow = env.spawn_piped(true, follow);
    let mut seen = None;
    for n in 0..20 {
        env.run(&["call", "add", r#"{"a": 1, "b": 2}"#], WITHIN);
        if let Ok(line) = follow.lines.recv_timeout(Duration::from_secs(if n == 0 { 30 } else { 5 })) {
            seen = Some(line);
            break;
        }
    }
    let _ = follow.child.kill();
    let _ = follow.child.wait();
    seen
}

#[test]
fn audit_tail_follow_prints_a_call_made_after_it_started() {
    let env = demo_with_calls();
    let seen = follow_while_calling(&env, &["audit", "tail", "--follow", "--json", "-n", "0"]);
    let line: Value = serde_json::from_str(&seen.unwrap_or_else(|| panic!("--follow printed nothing")))
        .unwrap_or_else(|e| panic!("not JSON: {e}"));
    assert_eq!((&line["tool"], &line["outcome"]), (&json!("add"), &json!("ok")));
    assert_eq!(line["shape"], json!({"a": "number", "b": "number"}));
}

/// Past 8 MiB the log moves to `calls.jsonl.1` before the next line: `--follow` goes on with
/// the new file, and `tail` reads back across both.
#[test]
fn audit_tail_follows_across_a_rotation() {
    let env = demo_with_calls();
    let file = log_file(&env);
    let old = std::fs::read_to_string(&file).unwrap_or_default();
    let filler = old.lines().next().unwrap_or_else(|| panic!("no line in the log")).to_string();
    let mut big = old.clone();
    while big.len() < 8 * 1024 * 1024 {
        big.push_str(&filler);
        big.push('\n');
    }
    std::fs::write(&file, &big).unwrap_or_else(|e| panic!("write {}: {e}", file.display()));
    let seen =
        follow_while_calling(&env, &["audit", "tail", "--follow", "--json", "-n", "0", "--tool", "add"]);
    assert!(seen.is_some_and(|l| l.contains(r#""tool":"add""#)), "--follow missed the line after a rotation");
    let rotated = std::fs::metadata(env.home().join("audit/calls.jsonl.1")).map(|m| m.len());
    assert_eq!(rotated.ok(), Some(big.len() as u64));
    assert!(std::fs::metadata(&file).map(|m| m.len()).unwrap_or(u64::MAX) < 4096);
    // `tail -n` reads the live file, then the rotated one.
    let (_, stdout, _) = env.run(&["audit", "tail", "--json", "-n", "3", "--tool", "echo"], WITHIN);
    assert_eq!(stdout.lines().count(), 3, "{stdout}");
}
