//! `serve --http --auth oidc`: serve as an OAuth 2.1 resource server in front of a real issuer
//! (`tests/team/issuer.py`: keys made at its start, JWKS on loopback) and server-everything.
//! The Python SDK's default `mcp.Client` calls `echo` with the issuer's JWT; expired,
//! wrong-audience, unsigned, unknown-key and forged tokens get 401 with a `WWW-Authenticate`
//! that points at the protected-resource metadata and says why; a rotated key works; the
//! SDK's OAuth client finds the metadata from the 401, signs in at the issuer and calls; the
//! operator's `/status` takes the JWT of a caller the policy lets operate; the audit log names
//! the caller.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::auth::python;
use crate::support::common::{Env, toolport};
use crate::support::issuer::{Issuer, free_port, serve_oidc, team_file};
use crate::support::operator::{Got, http_get};
use crate::support::peers::everything_stdio;
use crate::support::runtime::write_config;
use crate::support::serve::{MCP_HEADERS, ServeHttp, http_post};

/// The audience of the tests that do not sign in through the SDK (not a URL: the resource is
/// then `http://<Host>/mcp`).
pub(super) const AUDIENCE: &str = "toolport-team";
/// How long serve may take to know the issuer's keys, and a client to finish.
const WITHIN: Duration = Duration::from_secs(90);
/// A `tools/list` body (any JSON-RPC request: the check comes first).
const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;

fn everything_env() -> Env {
    let env = Env::new();
    write_config(&env, json!({ "everything": everything_stdio() }), &["everything"], json!({}));
    env
}

/// `POST /mcp` with `token` (none: no `Authorization`); the status and the response head.
fn post(serve: &ServeHttp, token: Option<&str>) -> (u16, String) {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = MCP_HEADERS.to_vec();
    if let Some(bearer) = &bearer {
        headers.push(("Authorization", bearer.as_str()));
    }
    http_post(&serve.authority(), &headers, LIST)
}

/// Waits until serve knows the issuer's keys: a good token is no longer answered 503.
pub(super) fn keys_known(serve: &ServeHttp, token: &str) {
    let deadline = Instant::now() + WITHIN;
    loop {
        let (status, head) = post(serve, Some(token));
        if status != 503 {
            return;
        }
        assert!(Instant::now() < deadline, "serve never knew the issuer's keys: {head}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The `WWW-Authenticate` line of a response head.
fn challenge(head: &str) -> String {
    head.lines()
        .find_map(|l| l.strip_prefix("www-authenticate: ").or_else(|| l.strip_prefix("WWW-Authenticate: ")))
        .unwrap_or_default()
        .to_string()
}

/// `tests/team/oidc_client.py --url URL [args…]`: what it printed.
pub(super) fn client(url: &str, args: &[&str]) -> Value {
    let out = Command::new(python())
        .arg(team_file("oidc_client.py"))
        .args(["--url", url])
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .unwrap_or_else(|e| panic!("run oidc_client.py: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|_| {
        panic!("oidc_client.py printed no JSON:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr))
    })
}

fn json_of(got: &Got) -> Value {
    serde_json::from_str(got.body.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {}", got.body))
}

#[test]
fn a_jwt_from_the_issuer_calls_echo_and_bad_tokens_are_told_why() {
    let env = everything_env();
    let issuer = Issuer::start();
    let serve = serve_oidc(&env, 0, &issuer.url, AUDIENCE, &[]);
    let good = issuer.mint(json!({"sub": "alice", "aud": AUDIENCE, "groups": ["docs"], "client_id": "cli"}));
    keys_known(&serve, &good);

    let seen = client(&serve.url, &["--token", &good, "--args", r#"{"message": "hello team"}"#]);
    assert_eq!(
        seen["texts"],
        json!(["Echo: hello team"]),
        "{seen}\n{}",
        serve.stderr.lock().map(|l| l.join("\n")).unwrap_or_default()
    );
    assert_eq!(seen["protocol"], json!("2026-07-28"), "{seen}");

    let metadata = format!("http://{}/.well-known/oauth-protected-resource/mcp", serve.authority());
    let (status, head) = post(&serve, None);
    assert_eq!(status, 401, "{head}");
    assert_eq!(challenge(&head), format!("Bearer resource_metadata=\"{metadata}\""));

    let refused = [
        (json!({"aud": AUDIENCE, "expires_in": -120}), "the token has expired"),
        (
            json!({"aud": "someone-else"}),
            "the token is not for this server: its aud does not name toolport-team",
        ),
        (json!({"aud": AUDIENCE, "alg": "none"}), "the token is unsigned (alg none)"),
        (
            json!({"aud": AUDIENCE, "kid": "made-up"}),
            "the token is signed by a key the issuer does not publish",
        ),
        (json!({"aud": AUDIENCE, "forged": true}), "the token's signature does not verify"),
        (
            json!({"aud": AUDIENCE, "claims": {"iss": "https://evil.example"}}),
            &format!("the token is not from the issuer {}", issuer.url),
        ),
    ];
    for (asked, why) in refused {
        let token = issuer.mint(asked.clone());
        let (status, head) = post(&serve, Some(&token));
        assert_eq!(status, 401, "{asked}: {head}");
        assert_eq!(
            challenge(&head),
            format!(
                "Bearer resource_metadata=\"{metadata}\", error=\"invalid_token\", error_description=\"{why}\""
            ),
            "{asked}"
        );
        assert!(!head.contains(&token), "the token is echoed: {head}");
    }

    // The audit log names the caller before the client.
    let audit = std::fs::read_to_string(env.home().join("audit/calls.jsonl")).unwrap_or_default();
    let call =
        audit.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).find(|l| l["kind"] == "call");
    let label = call.as_ref().and_then(|c| c["client"].as_str()).unwrap_or_default().to_string();
    assert!(label.starts_with("alice via "), "{audit}");
}

#[test]
fn the_metadata_names_the_resource_and_the_issuer() {
    let env = everything_env();
    let issuer = Issuer::start();
    let serve = serve_oidc(&env, 0, &issuer.url, AUDIENCE, &[]);
    let expected = json!({
        "resource": format!("http://{}/mcp", serve.authority()),
        "authorization_servers": [issuer.url],
        "bearer_methods_supported": ["header"],
    });
    for path in ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"] {
        let got = http_get(&serve.authority(), path, &[]);
        assert_eq!(got.status, 200, "{path}: {}", got.body);
        assert_eq!(json_of(&got), expected, "{path}");
    }
    // A resource given is the resource named, wherever serve is reached.
    let fixed = serve_oidc(&env, 0, &issuer.url, AUDIENCE, &["--resource", "https://gw.example/mcp"]);
    let got = http_get(&fixed.authority(), "/.well-known/oauth-protected-resource/mcp", &[]);
    assert_eq!(json_of(&got)["resource"], json!("https://gw.example/mcp"));
    let (status, head) = post(&fixed, None);
    assert_eq!(status, 401);
    assert_eq!(
        challenge(&head),
        "Bearer resource_metadata=\"https://gw.example/.well-known/oauth-protected-resource/mcp\""
    );
}

#[test]
fn a_rotated_key_signs_tokens_that_work_and_made_up_keys_do_not_hammer_the_issuer() {
    let env = everything_env();
    let issuer = Issuer::start();
    let serve = serve_oidc(&env, 0, &issuer.url, AUDIENCE, &[]);
    keys_known(&serve, &issuer.mint(json!({"aud": AUDIENCE})));
    let before = issuer.logged("jwks served");

    let kid = issuer.rotate();
    let rotated = issuer.mint(json!({"aud": AUDIENCE, "sub": "bob"}));
    let seen = client(&serve.url, &["--token", &rotated]);
    assert_eq!(seen["texts"], json!(["Echo: hello"]), "{seen}\n{}", issuer.log());
    let last = issuer.log().lines().rfind(|l| l.contains("jwks served")).map(str::to_string);
    assert!(last.is_some_and(|l| l.contains(&kid)), "{}", issuer.log());
    assert_eq!(issuer.logged("jwks served"), before + 1, "{}", issuer.log());

    // Twenty made-up kids right after: refused without asking the issuer again.
    for n in 0..20 {
        let token = issuer.mint(json!({"aud": AUDIENCE, "kid": format!("made-up-{n}")}));
        let (status, head) = post(&serve, Some(&token));
        assert_eq!(status, 401, "{head}");
    }
    assert_eq!(issuer.logged("jwks served"), before + 1, "{}", issuer.log());
}

#[test]
fn the_sdk_oauth_client_discovers_the_metadata_signs_in_and_calls() {
    let env = everything_env();
    let issuer = Issuer::start();
    let port = free_port();
    // The audience is the resource URL: the token the SDK asks for is for that resource (RFC 8707).
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let serve = serve_oidc(&env, port, &issuer.url, &resource, &[]);
    let seen = client(&serve.url, &["--oauth", "--args", r#"{"message": "signed in"}"#]);
    assert_eq!(seen["texts"], json!(["Echo: signed in"]), "{seen}\n{}", issuer.log());
    assert_eq!(seen["authorize"], json!("/authorize"), "{seen}");
    assert_eq!(issuer.logged(&format!("for fixture-user (aud {resource})")), 1, "{}", issuer.log());
}

#[test]
fn status_takes_the_jwt_of_an_operator() {
    let env = everything_env();
    // The operator is who the policy lets `operate` (team/operator.rs): here, anyone.
    let policy = "permit(principal, action, resource);";
    std::fs::write(env.home().join("policy.cedar"), policy).unwrap_or_else(|e| panic!("{e}"));
    let issuer = Issuer::start();
    let serve = serve_oidc(&env, 0, &issuer.url, AUDIENCE, &[]);
    let good = issuer.mint(json!({"aud": AUDIENCE}));
    keys_known(&serve, &good);
    let without = http_get(&serve.authority(), "/status", &[]);
    assert_eq!(without.status, 401, "{}", without.body);
    let bearer = format!("Bearer {good}");
    let with = http_get(&serve.authority(), "/status", &[("Authorization", &bearer)]);
    assert_eq!(with.status, 200, "{}", with.body);
    assert!(json_of(&with)["servers"].is_array());
    let out = toolport()
        .args(["status", "--url", &serve.url, "--token-env", "TEAM_JWT"])
        .env("TEAM_JWT", &good)
        .output()
        .unwrap_or_else(|e| panic!("toolport status: {e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("everything"));
}

#[test]
fn an_issuer_down_at_start_is_waited_for() {
    let env = everything_env();
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let serve = serve_oidc(&env, 0, &url, AUDIENCE, &[]);
    // Shaped like a JWT signed with RS256 by the key `k`: it needs the keys to be checked.
    const SHAPED: &str = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsifQ.e30.c2ln";
    let (status, head) = post(&serve, Some(SHAPED));
    assert_eq!(status, 503, "{head}");
    assert!(head.to_ascii_lowercase().contains("retry-after: 5"), "{head}");
    let got = http_get(&serve.authority(), "/status", &[("Authorization", &format!("Bearer {SHAPED}"))]);
    assert!(
        got.body.starts_with(&format!("the keys of the issuer {url} are not known yet: no discovery document: cannot reach {url}/.well-known/openid-configuration")),
        "{}",
        got.body
    );
    // Not ready for callers while no token can be checked, whatever the servers' state.
    let ready = || {
        let got = http_get(&serve.authority(), "/readyz", &[]);
        let body: Value =
            serde_json::from_str(&got.body).unwrap_or_else(|e| panic!("/readyz: {e}: {}", got.body));
        (got.status, body)
    };
    let (status, body) = ready();
    assert_eq!((status, &body["issuerKeys"]), (503, &json!("not known yet")), "{body}");
    let issuer = Issuer::start_on(port);
    let good = issuer.mint(json!({"aud": AUDIENCE}));
    keys_known(&serve, &good);
    let deadline = Instant::now() + WITHIN;
    let (status, body) = loop {
        let (status, body) = ready();
        if status == 200 || Instant::now() > deadline {
            break (status, body);
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!((status, &body["issuerKeys"]), (200, &json!("known")), "{body}");
    assert_eq!(client(&serve.url, &["--token", &good])["texts"], json!(["Echo: hello"]));
}

#[test]
fn oidc_flags_are_checked_before_serving() {
    let env = Env::new();
    let cases: [(&[&str], &str); 4] = [
        (
            &["--auth", "oidc", "--audience", "a"],
            "the following required arguments were not provided:\n  --issuer <URL>",
        ),
        (&["--auth", "oidc", "--issuer", "https://login.example"], "--audience <A>"),
        (
            &["--auth", "oidc", "--issuer", "http://login.example", "--audience", "a"],
            "--issuer http://login.example is plain http: an issuer off this machine must be https",
        ),
        (
            &["--issuer", "https://login.example", "--audience", "a"],
            "--issuer, --audience and --resource are for --auth oidc",
        ),
    ];
    for (args, said) in cases {
        let mut all = vec!["serve", "--http", "127.0.0.1:0"];
        all.extend_from_slice(args);
        let (code, _, stderr) = env.run(&all, WITHIN);
        assert_eq!(code, 2, "{all:?}: {stderr}");
        assert!(stderr.contains(said), "{all:?}: {stderr}");
    }
    // Off loopback, OIDC is the check an address needs.
    let (code, _, stderr) = env.run(&["serve", "--http", "0.0.0.0:0"], WITHIN);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("or --auth oidc --issuer URL --audience A"), "{stderr}");
}

#[test]
fn a_2025_11_25_session_carries_its_caller_into_the_audit_log() {
    let env = everything_env();
    let issuer = Issuer::start();
    let serve = serve_oidc(&env, 0, &issuer.url, AUDIENCE, &[]);
    let good = issuer.mint(json!({"sub": "carol", "aud": AUDIENCE}));
    keys_known(&serve, &good);
    let seen = client(&serve.url, &["--token", &good, "--session"]);
    assert_eq!(
        (&seen["texts"], &seen["protocol"]),
        (&json!(["Echo: hello"]), &json!("2025-11-25")),
        "{seen}"
    );
    let audit = std::fs::read_to_string(env.home().join("audit/calls.jsonl")).unwrap_or_default();
    let call =
        audit.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).find(|l| l["kind"] == "call");
    let label = call.as_ref().and_then(|c| c["client"].as_str()).unwrap_or_default().to_string();
    // `carol via <clientInfo name>@<the session id's first 8 characters>`.
    let session =
        label.strip_prefix("carol via ").and_then(|rest| rest.split_once('@')).map(|(_, s)| s.len());
    assert_eq!(session, Some(8), "{audit}");
}
