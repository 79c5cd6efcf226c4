//! OAuth sign-in from inside `toolport session`, on a terminal as a person uses it: the `/mcp`
//! view says what to run for a server that needs a sign-in, `/mcp login NAME` signs in through
//! the browser (`tests/auth/browser.sh` as `$BROWSER`) and reconnects that server, its tools
//! answer `/call`, and `/mcp logout NAME` forgets the tokens and brings the sign-in back. The
//! server is the real one of `auth/login.rs`: `tests/auth/oauth_server.py` on the Python SDK.

use serde_json::json;

use crate::support::auth::{
    CONNECTED_ROW, LOGIN_TIMEOUT, NAME, OAuthServer, SIGN_IN_ROW, Terminal, add_enabled, browser_log,
    shown_lines,
};
use crate::support::common::Env;

/// What `/call echo` is given, and so what it must answer with.
const ECHOED: &str = "said in a signed-in session";

/// Whether `answer` shows `line` as a whole line.
fn has_line(answer: &str, line: &str) -> bool {
    shown_lines(answer).iter().any(|l| l == line)
}

/// The session starts with the server asking for a sign-in; `/mcp login` signs in and
/// reconnects it with its tools, which `/call` then reaches; `/mcp logout` forgets the tokens
/// and the row asks for a sign-in again, all in one session.
#[test]
fn a_session_signs_in_calls_and_signs_out() {
    let server = OAuthServer::start(&[]);
    let env = Env::new();
    add_enabled(&env, &server, NAME, &json!({ "type": "http", "url": server.url, "oauth": {} }));

    let mut terminal = Terminal::session(&env);
    let context = |terminal: &Terminal| {
        format!(
            "screen:\n{}\noauth_server.py:\n{}\nbrowser.sh:\n{}",
            terminal.screen(),
            server.log(),
            std::fs::read_to_string(browser_log(&env)).unwrap_or_default()
        )
    };

    let view = terminal.ask("/mcp", LOGIN_TIMEOUT, |a| a.contains("- remote | "));
    assert!(has_line(&view, SIGN_IN_ROW), "/mcp before the sign-in:\n{view}\n{}", context(&terminal));

    let login = terminal.ask(&format!("/mcp login {NAME}"), LOGIN_TIMEOUT, |a| {
        a.contains("- remote | ") || a.contains("cannot sign in")
    });
    assert!(has_line(&login, "mcp login: signed in to remote"), "{login}\n{}", context(&terminal));
    assert!(has_line(&login, CONNECTED_ROW), "/mcp login:\n{login}\n{}", context(&terminal));

    let call = format!(r#"/call echo {{"text":"{ECHOED}"}}"#);
    let echoed = terminal.ask(&call, LOGIN_TIMEOUT, |a| !a.trim().is_empty());
    assert!(has_line(&echoed, ECHOED), "{call}:\n{echoed}\n{}", context(&terminal));

    let logout = terminal.ask(&format!("/mcp logout {NAME}"), LOGIN_TIMEOUT, |a| a.contains("- remote | "));
    assert!(
        has_line(&logout, "mcp logout: remote signed out (its tokens are forgotten)"),
        "{logout}\n{}",
        context(&terminal)
    );
    assert!(has_line(&logout, SIGN_IN_ROW), "/mcp logout:\n{logout}\n{}", context(&terminal));

    let after = terminal.ask(&call, LOGIN_TIMEOUT, |a| !a.trim().is_empty());
    // Signed out, the server is not connected, so its tools are gone from the session; the
    // call says whose the tool is (its pin) and what to do (issue 45 item 2).
    let said = format!(
        "Unknown MCP tool: echo. Its server is not connected: {NAME} (error: authorization required: run \
         toolport mcp login {NAME})"
    );
    assert!(has_line(&after, &said), "a call after the logout:\n{after}\n{}", context(&terminal));

    terminal.type_line("/quit");
    let status = terminal.wait(LOGIN_TIMEOUT);
    assert!(status.success(), "the session exited {status}\n{}", context(&terminal));
}
