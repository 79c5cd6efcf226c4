//! A server with the machine-to-machine grant (`oauth.grant: "client_credentials"`): no
//! person signs in; toolport fetches a token with the client's own secret when it connects,
//! and when the server later refuses that token (it expired in a long-running session, and
//! this grant has no refresh token) fetches a new one and sends the request again. One session
//! on a terminal outlives its first token. The server is the real one of `auth/login.rs`:
//! `tests/auth/oauth_server.py` on the Python SDK, which refuses an expired token at /mcp and
//! logs each client_credentials token it issues.

use serde_json::{Value, json};

use crate::support::auth::{
    CONNECTED_ROW, LOGIN_TIMEOUT, NAME, OAuthServer, PAST_EXPIRY, SHORT_TOKEN_SECONDS, Terminal, add_enabled,
    run, shown_lines,
};
use crate::support::common::Env;
use crate::support::serve::{INITIALIZE, MCP_HEADERS, http_post};

/// The pre-registered client (`--client`), the variable its secret is given in, and the secret.
const CLIENT_ID: &str = "toolport-machine";
const SECRET_VAR: &str = "TOOLPORT_IT_MACHINE_SECRET";
const SECRET: &str = "cc-it-5b2e8c71-machine-secret";
/// What the fixture logs for each client_credentials token it issues.
const TOKEN_ISSUED: &str = "client_credentials token issued to toolport-machine";

/// `{"type":"http","url":URL,"oauth":{"grant":"client_credentials",…}}`, the secret left as
/// `${SECRET_VAR}` for the environment to fill in.
fn machine_definition(server: &OAuthServer) -> Value {
    json!({
        "type": "http",
        "url": server.url,
        "oauth": {
            "grant": "client_credentials",
            "clientId": CLIENT_ID,
            "clientSecret": format!("${{{SECRET_VAR}}}"),
        },
    })
}

/// `--client ID:SECRET`, and for `issued` a `--issued FILE`.
fn machine_server(issued: Option<&str>) -> OAuthServer {
    let client = format!("{CLIENT_ID}:{SECRET}");
    let mut args = vec!["--token-seconds", SHORT_TOKEN_SECONDS, "--client", client.as_str()];
    if let Some(file) = issued {
        args.extend(["--issued", file]);
    }
    OAuthServer::start(&args)
}

/// Whether `answer` shows `line` as a whole line.
fn has_line(answer: &str, line: &str) -> bool {
    shown_lines(answer).iter().any(|l| l == line)
}

/// A call answers; past the lifetime of every token issued so far (the fixture refuses them
/// then: checked by presenting the first at /mcp) the next call in the same session still
/// answers, and a new token was issued for it: toolport fetched one when the server refused
/// the old. (The first call may already need one: the connect's token lives under 2 s.)
#[test]
fn a_session_fetches_a_new_machine_token_when_the_old_one_expires() {
    let issued = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    let issued_file = issued.path().join("issued.txt");
    let server = machine_server(Some(&issued_file.display().to_string()));
    let env = Env::new();
    add_enabled(&env, &server, NAME, &machine_definition(&server));

    let mut terminal = Terminal::start(&env, &["session"], &[(SECRET_VAR, SECRET)]);
    let context =
        |terminal: &Terminal| format!("screen:\n{}\noauth_server.py:\n{}", terminal.screen(), server.log());

    let view = terminal.ask("/mcp", LOGIN_TIMEOUT, |a| a.contains("- remote | "));
    assert!(has_line(&view, CONNECTED_ROW), "/mcp:\n{view}\n{}", context(&terminal));

    let call = |text: &str| format!(r#"/call echo {{"text":"{text}"}}"#);
    let first = "a first call";
    let answer = terminal.ask(&call(first), LOGIN_TIMEOUT, |a| !a.trim().is_empty());
    assert!(has_line(&answer, first), "the first call:\n{answer}\n{}", context(&terminal));
    let before = server.logged(TOKEN_ISSUED);
    assert!(before >= 1, "no client_credentials token was issued\n{}", context(&terminal));

    std::thread::sleep(PAST_EXPIRY);
    // The first token the fixture issued (the `--issued` lines after the client secret) is
    // refused now, as is every token issued before the wait: a call that still answers has
    // not merely got through on an expired token.
    let tokens = std::fs::read_to_string(&issued_file)
        .unwrap_or_else(|e| panic!("read {}: {e}", issued_file.display()));
    let expired = tokens
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && *l != SECRET)
        .unwrap_or_else(|| panic!("no access token in {}:\n{tokens}", issued_file.display()));
    let authority = server.issuer().trim_start_matches("http://").to_string();
    let bearer = format!("Bearer {expired}");
    let [content_type, accept] = MCP_HEADERS;
    let (status, head) =
        http_post(&authority, &[content_type, accept, ("Authorization", &bearer)], INITIALIZE);
    assert_eq!(status, 401, "the fixture accepted an expired token:\n{head}");

    let second = "a call after the wait";
    let answer = terminal.ask(&call(second), LOGIN_TIMEOUT, |a| !a.trim().is_empty());
    assert!(has_line(&answer, second), "the call after expiry:\n{answer}\n{}", context(&terminal));
    let after = server.logged(TOKEN_ISSUED);
    assert!(
        after > before && after >= 2,
        "the call after expiry answered without a new token ({before} issued before it, {after} after)\n{}",
        context(&terminal)
    );

    terminal.type_line("/quit");
    let status = terminal.wait(LOGIN_TIMEOUT);
    assert!(status.success(), "the session exited {status}\n{}", context(&terminal));
    // Each token fetch is a sign-in line of the audit log.
    let audit = std::fs::read_to_string(env.home().join("audit/calls.jsonl")).unwrap_or_default();
    let sign_ins =
        audit.lines().filter(|l| l.contains(r#""kind":"sign-in""#) && l.contains(r#""outcome":"ok""#));
    assert!(sign_ins.count() >= 1, "no sign-in in the audit log:\n{audit}");
}

/// Such a server has nothing to log in to: `mcp login` says so, exits 2 (a usage error) and
/// asks the authorization server for nothing.
#[test]
fn login_is_refused_for_a_machine_grant() {
    let server = machine_server(None);
    let env = Env::new();
    add_enabled(&env, &server, NAME, &machine_definition(&server));

    let ran = run(&env, &[], &["mcp", "login", NAME], &[(SECRET_VAR, SECRET)]);
    let all = ran.all();
    assert_eq!(ran.output.status.code(), Some(2), "mcp login:\n{all}");
    assert!(
        all.contains("remote signs in by itself (oauth.grant is client_credentials)"),
        "mcp login:\n{all}"
    );
    assert_eq!(server.logged(TOKEN_ISSUED), 0, "mcp login fetched a token\n{}", server.log());
}
