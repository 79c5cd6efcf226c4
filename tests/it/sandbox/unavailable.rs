//! Fail closed: on a machine that cannot sandbox, a sandboxed server goes to `error` naming
//! what is missing and never starts unconfined, unless its definition says `"required":
//! false`; `toolport sandbox check` says the same. The machine without user namespaces is this
//! one seen from a user namespace whose `user.max_user_namespaces` is 0 (`unshare -U -r`), so
//! the kernel itself refuses, as it would on a machine where they are off.

use std::process::Command;
use std::time::Duration;

use serde_json::json;

use crate::support::common::{Env, toolport_path};
use crate::support::runtime::{demo, write_config};

/// What the launcher says when the kernel refuses it user namespaces.
const NO_USERNS: &str = "cannot make user and network namespaces";

/// `toolport <args>` in `env`, run where no user namespace can be made: (exit, stdout, stderr).
fn without_user_namespaces(env: &Env, args: &[&str]) -> (i32, String, String) {
    let mut line = format!(
        "echo 0 > /proc/sys/user/max_user_namespaces && exec '{}' --home '{}' --workspace '{}'",
        toolport_path().display(),
        env.home().display(),
        env.root().display()
    );
    for arg in args {
        line.push_str(&format!(" '{arg}'"));
    }
    let out = Command::new("unshare")
        .args(["--user", "--map-root-user", "sh", "-c", &line])
        .env_remove("RUST_LOG")
        .output()
        .unwrap_or_else(|e| panic!("unshare (util-linux) must be on PATH: {e}"));
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

fn boxed_demo(sandbox: serde_json::Value) -> serde_json::Value {
    let mut def = demo(&[]);
    def["sandbox"] = sandbox;
    def
}

#[test]
fn sandbox_check_says_this_machine_can_and_what_it_uses() {
    let env = Env::new();
    let (code, out, err) = env.run(&["sandbox", "check"], Duration::from_secs(30));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("this machine can sandbox stdio servers:\n  files: Landlock ABI "), "{out}");
    assert!(out.contains("network: a network namespace of their own"), "{out}");
}

#[test]
fn without_user_namespaces_a_sandboxed_server_is_in_error_and_its_neighbour_runs() {
    let env = Env::new();
    let servers = json!({ "boxed": boxed_demo(json!(true)), "plain": demo(&[]) });
    write_config(&env, servers, &["boxed", "plain"], json!({}));

    let (code, out, _) = without_user_namespaces(&env, &["sandbox", "check"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with(&format!("this machine cannot sandbox stdio servers: {NO_USERNS} (")), "{out}");
    assert!(out.contains("\"sandbox\": { \"required\": false }"), "{out}");

    let (_, out, err) = without_user_namespaces(&env, &["mcp", "get", "boxed", "--json"]);
    assert!(out.contains("\"sandbox\""), "{out}{err}");
    let (_, out, err) = without_user_namespaces(&env, &["mcp", "list", "--json"]);
    let listed: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    let servers = listed["servers"].as_array().cloned().unwrap_or_default();
    let row = |name: &str| servers.iter().find(|s| s["name"] == name).cloned().unwrap_or_default();
    assert_eq!(row("boxed")["state"], "error", "{out}");
    let error = row("boxed")["error"].as_str().unwrap_or_default().to_string();
    assert!(error.contains(&format!("toolport sandbox: {NO_USERNS}")), "{error}");
    assert_eq!(row("plain")["state"], "connected", "{out}");
}

#[test]
fn required_false_starts_the_server_unconfined_where_it_cannot_be_sandboxed() {
    let env = Env::new();
    write_config(&env, json!({ "boxed": boxed_demo(json!({ "required": false })) }), &["boxed"], json!({}));
    let (code, out, err) = without_user_namespaces(&env, &["mcp", "list", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("\"state\": \"connected\""), "{out}{err}");
}
