//! `serve --http`'s gate: what a server on a port must refuse that stdio never sees. Raw
//! HTTP by hand (`support::serve::http_post`), since a well-behaved client sends none of it.

use std::time::Duration;

use serde_json::json;

use crate::support::common::Env;
use crate::support::runtime::{demo, write_config};
use crate::support::serve::{INITIALIZE, MCP_HEADERS, ServeHttp, http_post};

fn demo_env() -> Env {
    let env = Env::new();
    write_config(&env, json!({ "demo": demo(&[]) }), &["demo"], json!({}));
    env
}

fn with<'a>(extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    MCP_HEADERS.iter().copied().chain(extra.iter().copied()).collect()
}

#[test]
fn an_address_other_than_loopback_needs_a_token() {
    let env = demo_env();
    let out = env.cmd(["serve", "--http", "0.0.0.0:0"]).timeout(Duration::from_secs(30)).output();
    let out = out.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("refusing to serve MCP on 0.0.0.0:0 without a token")
            && stderr.contains("--token-env VAR"),
        "{stderr}"
    );
    let mut unset = env.cmd(["serve", "--http", "0.0.0.0:0", "--token-env", "TOOLPORT_TEST_UNSET_TOKEN"]);
    let out = unset.env_remove("TOOLPORT_TEST_UNSET_TOKEN").timeout(Duration::from_secs(30)).output();
    let out = out.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("--token-env TOOLPORT_TEST_UNSET_TOKEN: that variable is not set"),
        "{out:?}"
    );
}

#[test]
fn a_token_is_required_and_never_printed() {
    let env = demo_env();
    let secret = "s3cret-token-value";
    let serve =
        ServeHttp::start_with(&env, &["--token-env", "SERVE_TOKEN", "-v"], &[("SERVE_TOKEN", secret)]);
    let authority = serve.authority();
    let (none, head) = http_post(&authority, &with(&[]), INITIALIZE);
    assert_eq!(none, 401, "{head}");
    assert!(head.to_ascii_lowercase().contains("www-authenticate: bearer"), "{head}");
    let (wrong, _) =
        http_post(&authority, &with(&[("Authorization", "Bearer s3cret-token-valuX")]), INITIALIZE);
    assert_eq!(wrong, 401);
    let (short, _) = http_post(&authority, &with(&[("Authorization", "Bearer s3cret")]), INITIALIZE);
    assert_eq!(short, 401);
    let bearer = format!("Bearer {secret}");
    let (right, head) = http_post(&authority, &with(&[("Authorization", bearer.as_str())]), INITIALIZE);
    assert_eq!(right, 200, "{head}");
    let printed = serve.stderr.lock().map(|l| l.join("\n")).unwrap_or_default();
    assert!(!printed.contains(secret), "the token was printed:\n{printed}");
}

#[test]
fn a_foreign_host_or_origin_is_refused() {
    let env = demo_env();
    let serve = ServeHttp::start(&env);
    let authority = serve.authority();
    let (rebound, head) = http_post(&authority, &with(&[("Host", "evil.example")]), INITIALIZE);
    assert_eq!(rebound, 403, "a foreign Host must be refused (DNS rebinding): {head}");
    let (origin, head) = http_post(&authority, &with(&[("Origin", "http://evil.example")]), INITIALIZE);
    assert_eq!(origin, 403, "a foreign Origin must be refused: {head}");
    let (local, head) = http_post(&authority, &with(&[("Origin", "http://localhost:5173")]), INITIALIZE);
    assert_eq!(local, 200, "{head}");
    let (named, head) = http_post(&authority, &with(&[("Host", "localhost")]), INITIALIZE);
    assert_eq!(named, 200, "{head}");
}

#[test]
fn a_body_over_the_cap_is_refused() {
    let env = demo_env();
    let serve = ServeHttp::start_with(&env, &["--max-body-bytes", "2000"], &[]);
    let padding = "x".repeat(5000);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"{padding}","version":"1"}}}}}}"#
    );
    let (status, head) = http_post(&serve.authority(), &with(&[]), &big);
    assert_eq!(status, 413, "{head}");
    let (small, head) = http_post(&serve.authority(), &with(&[]), INITIALIZE);
    assert_eq!(small, 200, "{head}");
}

/// SIGTERM ends serve and every downstream server with it.
#[test]
fn sigterm_closes_every_downstream_server() {
    let env = Env::new();
    let marker = format!("sigterm_{}_", std::process::id());
    write_config(
        &env,
        json!({ "a": demo(&["--prefix", &format!("{marker}a_")]), "b": demo(&["--prefix", &format!("{marker}b_")]) }),
        &["a", "b"],
        json!({}),
    );
    let mut serve = ServeHttp::start(&env);
    assert_eq!(running(&marker), 2, "both downstream servers run while serving");
    let status = serve.terminate().unwrap_or_else(|| panic!("serve did not exit on SIGTERM"));
    assert_eq!(status.code(), Some(143), "{status:?}");
    assert_eq!(running(&marker), 0, "a downstream server outlived serve");
}

/// Processes whose command line carries `marker`.
fn running(marker: &str) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else { return 0 };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().chars().all(|c| c.is_ascii_digit()))
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .filter(|cmdline| String::from_utf8_lossy(cmdline).contains(marker))
        .count()
}
