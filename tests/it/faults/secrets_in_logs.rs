//! Issue 11 item 14: a server URL carrying `?token=${TOKEN}` and userinfo never shows its
//! secret, at any verbosity: not in rmcp's or reqwest's log lines (`-vv`, `-vvv`), not in the
//! row's error, the `Warning:` line or `--json`. And a `${…}` that is not a variable name (a
//! token pasted in its place) is not echoed by the error. A healthy neighbour keeps working.

use std::net::TcpListener;

use serde_json::json;

use crate::support::common::Env;
use crate::support::faults::{OK, healthy, write};

/// The expanded `${TOKEN}`.
const TOKEN: &str = "tok-s3cr3t-42";
/// The password in the URL's userinfo.
const PASSWORD: &str = "pw-hunter2";
/// A secret pasted where a variable name belongs.
const PASTED: &str = "sk-live-pasted.9";

/// A port nothing listens on (bound, then released), so the connect is refused at once.
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
    listener.local_addr().unwrap_or_else(|e| panic!("addr: {e}")).port()
}

#[test]
fn url_secrets_never_reach_logs_or_messages() {
    let env = Env::new();
    let port = closed_port();
    let url = format!("http://user:{PASSWORD}@127.0.0.1:{port}/mcp?token=${{TOKEN}}&v=1");
    write(
        &env,
        &[
            ("web", json!({ "type": "http", "url": url })),
            (
                "typo",
                json!({ "type": "http", "url": format!("http://127.0.0.1:{port}/mcp?k=${{{PASTED}}}") }),
            ),
            (OK, healthy()),
        ],
        json!({}),
        json!({}),
    );
    let mut seen = String::new();
    for args in [
        &["-vv", "mcp", "list"][..],
        &["-vvv", "tools"],
        &["mcp", "list", "--json"],
        &["-vv", "call", "ok_echo", r#"{"message":"fine"}"#],
    ] {
        let out = env.cmd(args).env("TOKEN", TOKEN).output().unwrap_or_else(|e| panic!("{args:?}: {e}"));
        let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        for secret in [TOKEN, PASSWORD, PASTED] {
            assert!(!all.contains(secret), "{args:?} printed {secret}:\n{all}");
        }
        seen.push_str(&all);
    }
    // The URL is still shown, where rmcp logged it, minus its secrets.
    assert!(seen.contains("token=***"), "{seen:.4000}");
    assert!(seen.contains("- web | type=streamable_http | state=error"), "{seen:.4000}");
    assert!(seen.contains("invalid variable name in \"${…}\" (use letters, digits and _)"), "{seen:.4000}");
    assert!(seen.contains("- ok | type=stdio | state=connected"), "{seen:.4000}");
    assert!(seen.contains("fine\n"), "{seen:.4000}");
}
