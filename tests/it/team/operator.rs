//! The operator's views of a team gateway (issue 44 item 5): with `--auth oidc` every valid
//! token is some caller's, and `/status` and `/metrics` show every caller's clients and calls
//! and every server and tool. Only a caller the policy permits `Action::"operate"` reads them;
//! any other gets 403 saying what would let it, and `toolport status --url` says the same. The
//! instructions of `initialize` name only the servers the caller can use. Real JWTs from the
//! test issuer (tests/team/issuer.py), server-everything and the demo server behind serve, the
//! Python SDK's default `mcp.Client` (tests/team/access_client.py).

use serde_json::json;

use super::policy::{access_client, strings, two_servers};
use crate::support::common::{Env, toolport};
use crate::support::issuer::Issuer;
use crate::support::operator::http_get;
use crate::support::serve::ServeHttp;

const AUDIENCE: &str = "toolport-operator-test";

/// Group `docs` calls the docs server's read-only tools; group `ops` operates and may do
/// anything.
const POLICY: &str = r#"
@id("docs-read-only")
permit(principal in Group::"docs", action == Action::"call", resource in Server::"docs")
when { resource.annotations has readOnlyHint && resource.annotations.readOnlyHint };

@id("ops")
permit(principal in Group::"ops", action, resource);
"#;

/// serve with the two servers, `POLICY` in the home and `--metrics`, and tokens for alice
/// (`ops`) and bob (`docs`).
fn gateway(env: &Env, issuer: &Issuer) -> (ServeHttp, String, String) {
    two_servers(env, json!({}));
    std::fs::write(env.home().join("policy.cedar"), POLICY).unwrap_or_else(|e| panic!("{e}"));
    let serve = ServeHttp::start_with(
        env,
        &["--auth", "oidc", "--issuer", &issuer.url, "--audience", AUDIENCE, "--metrics"],
        &[],
    );
    let token = |sub: &str, group: &str| issuer.mint(json!({"sub": sub, "groups": [group], "aud": AUDIENCE}));
    let (alice, bob) = (token("alice", "ops"), token("bob", "docs"));
    super::oidc::keys_known(&serve, &alice);
    (serve, alice, bob)
}

#[test]
fn status_and_metrics_are_for_the_callers_the_policy_lets_operate() {
    let env = Env::new();
    let issuer = Issuer::start();
    let (serve, alice, bob) = gateway(&env, &issuer);
    let at = serve.authority();
    for path in ["/status", "/metrics"] {
        let bobs = http_get(&at, path, &[("Authorization", &format!("Bearer {bob}"))]);
        assert_eq!(bobs.status, 403, "{path}: {}", bobs.head);
        assert_eq!(
            bobs.body,
            format!(
                "Forbidden: {path} is for operators: the policy does not permit User::\"bob\" Action::\"operate\" on Endpoint::\"{path}\"\n"
            )
        );
        let alices = http_get(&at, path, &[("Authorization", &format!("Bearer {alice}"))]);
        assert_eq!(alices.status, 200, "{path}: {}", alices.body);
    }
    let metrics = http_get(&at, "/metrics", &[("Authorization", &format!("Bearer {alice}"))]);
    assert!(metrics.body.contains("toolport_servers"), "{}", metrics.body);

    // `toolport status --url` works for alice and says why not for bob.
    let status = |token: &str| {
        toolport()
            .args(["status", "--url", &serve.url, "--token-env", "TEAM_JWT"])
            .env("TEAM_JWT", token)
            .output()
            .unwrap_or_else(|e| panic!("toolport status: {e}"))
    };
    let hers = status(&alice);
    assert!(hers.status.success(), "{}", String::from_utf8_lossy(&hers.stderr));
    let printed = String::from_utf8_lossy(&hers.stdout);
    assert!(
        printed.contains("- docs | state=connected") && printed.contains("- demo | state=connected"),
        "{printed}"
    );
    let his = status(&bob);
    assert_eq!(his.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&his.stderr),
        format!(
            "toolport: http://{at}/status refused the request (403): /status is for operators: the policy does not permit User::\"bob\" Action::\"operate\" on Endpoint::\"/status\"\n"
        )
    );
}

#[test]
fn without_a_policy_no_oidc_caller_is_an_operator() {
    let env = Env::new();
    two_servers(&env, json!({}));
    let issuer = Issuer::start();
    let serve = ServeHttp::start_with(
        &env,
        &["--auth", "oidc", "--issuer", &issuer.url, "--audience", AUDIENCE],
        &[],
    );
    let token = issuer.mint(json!({"sub": "carol", "aud": AUDIENCE}));
    super::oidc::keys_known(&serve, &token);
    let got = http_get(&serve.authority(), "/status", &[("Authorization", &format!("Bearer {token}"))]);
    assert_eq!(got.status, 403, "{}", got.head);
    assert_eq!(
        got.body,
        "Forbidden: /status is for operators: with --auth oidc, a caller the policy permits Action::\"operate\" on Endpoint::\"/status\", and serve has no policy (--policy FILE, or policy.cedar in its home)\n"
    );
}

#[test]
fn the_instructions_name_only_the_servers_the_caller_can_use() {
    let env = Env::new();
    let issuer = Issuer::start();
    let (serve, alice, bob) = gateway(&env, &issuer);
    let seen_by_bob = access_client(&serve.url, Some(&bob), &[]);
    let seen_by_alice = access_client(&serve.url, Some(&alice), &[]);
    let instructions =
        |seen: &serde_json::Value| seen["instructions"].as_str().unwrap_or_default().to_string();
    let (his, hers) = (instructions(&seen_by_bob), instructions(&seen_by_alice));
    // Bob's count is of the tools he is shown: the docs server's read-only ones.
    let bobs_tools = strings(&seen_by_bob, "tools").len();
    assert!(bobs_tools > 0, "{seen_by_bob}");
    assert!(his.contains(&format!("- docs (connected, {bobs_tools} tools)\n")), "{his}");
    assert!(!his.contains("demo"), "bob cannot use the demo server: {his}");
    assert!(hers.contains("- docs (connected, ") && hers.contains("- demo (connected, "), "{hers}");
}
