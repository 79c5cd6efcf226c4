//! A signed-in server's requests carry the stored access token straight from
//! `credentials.json`, and the token is refreshed only when it has to be: a valid one is sent
//! with no token request, an expired one is refreshed once (and the new tokens written back)
//! before the request, and one the server refuses is refreshed and the request sent again.
//! Against `tests/auth/oauth_server.py`, which logs each refresh (`grant …: refreshed`),
//! rotates refresh tokens and refuses an unknown or expired access token (401).

use serde_json::{Value, json};

use crate::support::auth::{NAME, OAuthServer, PAST_EXPIRY, SHORT_TOKEN_SECONDS, add_enabled, login, ok};
use crate::support::common::Env;

/// What the fixture logs for each refresh it grants.
const REFRESHED: &str = ": refreshed";

/// Signs `env` in to a fresh fixture started with `args`.
fn signed_in(args: &[&str]) -> (OAuthServer, Env) {
    let server = OAuthServer::start(args);
    let env = Env::new();
    add_enabled(&env, &server, NAME, &json!({ "type": "http", "url": server.url, "oauth": {} }));
    login(&env, &server, NAME);
    (server, env)
}

fn credentials(env: &Env) -> Value {
    let path = env.home().join("credentials.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// The current sign-in's entry for the fixture (`auth/store`'s layout).
fn entry(env: &Env, server: &OAuthServer) -> Value {
    let doc = credentials(env);
    let server = &doc["servers"][server.url.as_str()];
    let current = server["current"].as_str().unwrap_or_else(|| panic!("no current sign-in: {doc}"));
    server["issuers"][current].clone()
}

fn access_token(entry: &Value) -> String {
    entry["token"]["access_token"].as_str().unwrap_or_default().to_string()
}

#[test]
fn a_valid_stored_token_is_sent_without_a_refresh() {
    let (server, env) = signed_in(&[]);
    let before = entry(&env, &server);

    ok(&env, &server, &["tools", "--json"]);
    assert_eq!(ok(&env, &server, &["call", "echo", r#"{"text":"stored"}"#]), "stored\n");

    assert_eq!(server.logged(REFRESHED), 0, "{}", server.log());
    assert_eq!(entry(&env, &server), before, "the sign-in is left as it was");
}

#[test]
fn an_expired_token_is_refreshed_once_and_written_back() {
    let (server, env) = signed_in(&["--token-seconds", SHORT_TOKEN_SECONDS]);
    let before = entry(&env, &server);
    std::thread::sleep(PAST_EXPIRY);

    // Several requests (initialize, its notification, the list), one refresh.
    ok(&env, &server, &["tools", "--json"]);

    assert_eq!(server.logged(REFRESHED), 1, "{}", server.log());
    let after = entry(&env, &server);
    assert_ne!(access_token(&after), access_token(&before), "the new access token is stored");
    assert_ne!(
        after["token"]["refresh_token"], before["token"]["refresh_token"],
        "and the rotated refresh token"
    );
    assert!(after["receivedAt"].as_u64() >= before["receivedAt"].as_u64(), "received when refreshed");
}

#[test]
fn a_token_the_server_refuses_is_refreshed_and_the_request_sent_again() {
    let (server, env) = signed_in(&[]);
    // A token the fixture never issued, still valid by the clock: only the server can tell.
    let path = env.home().join("credentials.json");
    let mut doc = credentials(&env);
    let current = doc["servers"][server.url.as_str()]["current"].as_str().unwrap_or_default().to_string();
    doc["servers"][server.url.as_str()]["issuers"][current.as_str()]["token"]["access_token"] =
        json!("not-issued-by-the-fixture");
    std::fs::write(&path, doc.to_string()).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));

    assert_eq!(ok(&env, &server, &["call", "echo", r#"{"text":"again"}"#]), "again\n");

    assert_eq!(server.logged(REFRESHED), 1, "{}", server.log());
    let token = access_token(&entry(&env, &server));
    assert!(!token.is_empty() && token != "not-issued-by-the-fixture", "the refreshed token is stored");
    // And it is the one used from then on.
    assert_eq!(ok(&env, &server, &["call", "echo", r#"{"text":"then"}"#]), "then\n");
    assert_eq!(server.logged(REFRESHED), 1, "{}", server.log());
}
