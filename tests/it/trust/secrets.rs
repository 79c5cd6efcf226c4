//! Secrets kept out of calls (issue 28 item 4), end to end against real servers:
//! server-everything's `echo` returns its argument, so a secret sent in comes back in the
//! result; server-memory writes what it is sent to its file, so a call that was blocked is
//! seen not to have reached it. The secret of another server is a value toolport expanded
//! from `${VAR}` into the `vault` server's `env` (the binary's own demo-server).

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{Value, json};

use crate::serve::clients::{py_command, py_output};
use crate::support::common::Env;
use crate::support::peers::{everything_stdio, install, node, peers};
use crate::support::runtime::{demo, write_config};
use crate::support::serve::serve_command;

/// Long enough for Node's first start; only stops a hang.
const CALL_TIMEOUT: Duration = Duration::from_secs(90);

/// The variable the vault server's definition takes its token from, and the token.
const VAULT_VAR: &str = "TOOLPORT_IT_VAULT_TOKEN";
const VAULT_TOKEN: &str = "vault-token-4f8a1c";

/// An AWS access key id of the right shape, made up (AWS's documented `…EXAMPLE` key is
/// allowlisted by gitleaks' own rule, see the scanner's unit tests); built from parts so
/// secret scanning of this repository does not take it for a leak.
fn aws_key() -> String {
    format!("{}{}", "AKIA", "QYLPMN5HHHFPZAM2")
}

/// server-everything, server-memory (writing to `<home>/memory.jsonl`) and the vault, with
/// `extra` workspace keys; tools namespaced by server.
fn servers(env: &Env, extra: Value) {
    static MEMORY: OnceLock<String> = OnceLock::new();
    install("peers/install_memory.sh", &MEMORY);
    let memory_entry = peers().join("node_modules/@modelcontextprotocol/server-memory/dist/index.js");
    let mut vault = demo(&[]);
    vault["env"] = json!({ "VAULT_TOKEN": format!("${{{VAULT_VAR}}}") });
    let servers = json!({
        "everything": everything_stdio(),
        "memory": {"type": "stdio", "command": node(), "args": [memory_entry],
                   "env": {"MEMORY_FILE_PATH": memory_file(env)}},
        "vault": vault,
    });
    let mut workspace = json!({"namePolicy": "namespace"});
    if let (Some(w), Some(extra)) = (workspace.as_object_mut(), extra.as_object()) {
        w.extend(extra.clone());
    }
    write_config(env, servers, &["everything", "memory", "vault"], workspace);
}

fn memory_file(env: &Env) -> PathBuf {
    env.home().join("memory.jsonl")
}

/// `toolport call <tool> <args>` with the vault's variable set: exit status, stdout, stderr.
fn call(env: &Env, tool: &str, args: &Value) -> (i32, String, String) {
    let out = env
        .cmd(["call", tool, &args.to_string()])
        .env(VAULT_VAR, VAULT_TOKEN)
        .timeout(CALL_TIMEOUT)
        .output()
        .unwrap_or_else(|e| panic!("toolport call {tool}: {e}"));
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// A server-memory call that stores `observation`.
fn remember(observation: &str) -> Value {
    json!({"entities": [{"name": "note", "entityType": "note", "observations": [observation]}]})
}

/// The trail's lines (`<home>/audit/decisions.jsonl`).
fn trail(env: &Env) -> String {
    std::fs::read_to_string(env.home().join("audit/decisions.jsonl")).unwrap_or_default()
}

#[test]
fn a_result_carrying_an_aws_key_comes_back_redacted_with_a_note() {
    let env = Env::new();
    servers(&env, json!({}));
    let key = aws_key();
    let (code, stdout, stderr) =
        call(&env, "everything__echo", &json!({"message": format!("the key is {key}")}));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout.trim_end(),
        "Echo: the key is ***\n[toolport: 1 secret in this result replaced by *** (aws-access-token)]"
    );
    assert!(!stderr.contains(&key), "{stderr}");
    let trail = trail(&env);
    assert!(!trail.contains(&key), "{trail}");
    // The trail also holds the pins' first sights: the guard's own decision is the redaction.
    let line: Value = trail
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|l| l["action"] == "redacted")
        .unwrap_or_else(|| panic!("no redaction recorded: {trail}"));
    assert_eq!(
        (&line["action"], &line["server"], &line["tool"], &line["rule"]),
        (&json!("redacted"), &json!("everything"), &json!("echo"), &json!("aws-access-token")),
        "{line}"
    );
}

#[test]
fn a_result_carrying_an_aws_key_comes_back_redacted_through_serve() {
    let env = Env::new();
    servers(&env, json!({}));
    let key = aws_key();
    let args = json!({"message": format!("the key is {key}")}).to_string();
    let errlog = env.root().join("serve.stderr");
    let out = py_command("call", &["--tool", "everything__echo", "--args", &args])
        .arg("--errlog")
        .arg(&errlog)
        .arg("--")
        .args(serve_command(&env))
        .env(VAULT_VAR, VAULT_TOKEN)
        .output()
        .unwrap_or_else(|e| panic!("cannot run client.py: {e}"));
    let serve_stderr = std::fs::read_to_string(&errlog).unwrap_or_default();
    let seen = py_output("call", &out, &serve_stderr);
    assert_eq!(
        seen["texts"],
        json!([
            "Echo: the key is ***",
            "[toolport: 1 secret in this result replaced by *** (aws-access-token)]"
        ]),
        "{seen}"
    );
    assert_eq!(seen["is_error"], json!(false));
}

#[test]
fn an_argument_carrying_another_servers_secret_is_blocked_and_never_sent() {
    let env = Env::new();
    servers(&env, json!({}));
    let (code, stdout, stderr) =
        call(&env, "everything__echo", &json!({"message": format!("token {VAULT_TOKEN}")}));
    assert_eq!(code, 1, "{stdout}");
    assert_eq!(stdout, "");
    let expected = "MCP tool everything__echo on server everything was not called: an argument carries the \
        value of $TOOLPORT_IT_VAULT_TOKEN, a secret configured for server vault (workspace setting \
        secrets.arguments is \"block\")";
    assert!(stderr.contains(expected), "{stderr}");
    assert!(!stderr.contains(VAULT_TOKEN), "{stderr}");
    // server-memory writes what it is sent: a blocked call leaves nothing.
    let (code, _, stderr) = call(&env, "memory__create_entities", &remember(&format!("token {VAULT_TOKEN}")));
    assert_eq!(code, 1, "{stderr}");
    let stored = std::fs::read_to_string(memory_file(&env)).unwrap_or_default();
    assert!(!stored.contains(VAULT_TOKEN), "the server got it: {stored}");
    let trail = trail(&env);
    assert!(
        trail.contains(r#""action":"blocked""#) && trail.contains(r#""rule":"configured-secret""#),
        "{trail}"
    );
    assert!(!trail.contains(VAULT_TOKEN), "{trail}");
    // The vault's own tools may be sent its own secret.
    let (code, stdout, stderr) = call(&env, "vault__echo", &json!({"message": VAULT_TOKEN}));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("***"), "its result is still redacted: {stdout}");
}

#[test]
fn secrets_off_lets_both_through() {
    let env = Env::new();
    servers(&env, json!({"secrets": "off"}));
    let key = aws_key();
    let message = format!("{key} {VAULT_TOKEN}");
    let (code, stdout, stderr) = call(&env, "everything__echo", &json!({ "message": message }));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim_end(), format!("Echo: {message}"));
    let (code, _, stderr) = call(&env, "memory__create_entities", &remember(VAULT_TOKEN));
    assert_eq!(code, 0, "{stderr}");
    let stored = std::fs::read_to_string(memory_file(&env)).unwrap_or_default();
    assert!(stored.contains(VAULT_TOKEN), "{stored}");
}

#[test]
fn arguments_redact_masks_the_secret_and_the_call_goes_on() {
    let env = Env::new();
    servers(&env, json!({"secrets": {"arguments": "redact"}}));
    let (code, stdout, stderr) =
        call(&env, "everything__echo", &json!({"message": format!("token {VAULT_TOKEN}")}));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout.trim_end(),
        "Echo: token ***\n[toolport: the value of $TOOLPORT_IT_VAULT_TOKEN of server vault was replaced by *** \
         in the arguments before the call]"
    );
}

#[test]
fn results_block_withholds_a_result_carrying_a_secret() {
    let env = Env::new();
    servers(&env, json!({"secrets": {"results": "block"}}));
    let key = aws_key();
    let (code, stdout, stderr) =
        call(&env, "everything__echo", &json!({"message": format!("the key is {key}")}));
    assert_eq!(code, 1, "{stdout}");
    assert_eq!(stdout, "");
    let expected = "MCP tool everything__echo on server everything returned a result carrying a secret \
        (aws-access-token); it was withheld (workspace setting secrets.results is \"block\")";
    assert!(stderr.contains(expected), "{stderr}");
    assert!(!stderr.contains(&key), "{stderr}");
}
