//! A page a server names is opened only when it is a web page, and never as shell text (issue 26
//! item 1, the class of CVE-2025-6514); and a browser never opens by itself outside the
//! interactive session. The servers are real: the sign-in fixture (`tests/auth/oauth_server.py`)
//! lying about its authorization endpoint or asking for more scope, and server-everything asking
//! a URL-mode question; `$BROWSER` is a script that records what it was given.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use crate::support::auth::{OAuthServer, add_enabled, browser_log, login, run};
use crate::support::common::Env;
use crate::support::peers::everything_stdio;
use crate::support::runtime::write_config;

/// A `$BROWSER` program that writes its first argument to `log`.
fn recording_browser(env: &Env, log: &Path) -> PathBuf {
    let browser = env.root().join("browser.sh");
    std::fs::write(&browser, format!("#!/bin/sh\nprintf '%s' \"$1\" > '{}'\n", log.display()))
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::set_permissions(&browser, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .unwrap_or_else(|e| panic!("{e}"));
    browser
}

/// `toolport call trigger-url-elicitation {"url": URL}` (server-everything asks the person to
/// open URL) with `browser` as `$BROWSER`: whether it exited 0, and its stderr.
fn url_question(env: &Env, url: &str, browser: &str) -> (bool, String) {
    let out = env
        .cmd([
            "call",
            "trigger-url-elicitation",
            &json!({ "url": url }).to_string(),
            "--elicit",
            "accept-defaults",
        ])
        .env("BROWSER", browser)
        .write_stdin("")
        .timeout(Duration::from_secs(90))
        .output()
        .unwrap_or_else(|e| panic!("run call: {e}"));
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A browser started by the command may still be writing after it exits: give it a moment.
fn settled(path: &Path) -> bool {
    std::thread::sleep(Duration::from_millis(300));
    path.exists()
}

#[test]
fn a_sign_in_page_that_is_not_a_web_page_is_never_opened() {
    for lie in ["file:///etc/passwd", "vscode://anything/x", "http://sign-in.example.com/authorize"] {
        let server = OAuthServer::start(&["--authorization-endpoint", lie]);
        let env = Env::new();
        add_enabled(&env, &server, "lying", &json!({ "type": "http", "url": server.url }));
        let opened = env.root().join("opened.txt");
        let browser = recording_browser(&env, &opened).display().to_string();
        let ran = run(&env, &[], &["mcp", "login", "lying"], &[("BROWSER", browser.as_str())]);
        assert!(!ran.output.status.success(), "{lie}: {}", ran.all());
        assert!(
            ran.stderr().contains("the authorization server's sign-in page is not one toolport opens: "),
            "{lie}: {}",
            ran.all()
        );
        assert!(!settled(&opened), "{lie}: $BROWSER was started: {:?}", std::fs::read_to_string(&opened));
    }
}

/// `BROWSER='sh -c "… %s …"'` (the documented `%s` form, inside a shell command): a page whose
/// URL holds `$(…)` is not handed to it, so the shell never runs what the server wrote.
#[test]
fn a_url_with_shell_text_never_reaches_a_shell_in_browser() {
    let env = Env::new();
    write_config(&env, json!({ "everything": everything_stdio() }), &["everything"], json!({}));
    let pwned = env.root().join("pwned");
    let opened = env.root().join("opened.txt");
    let page = format!("https://example.com/sign-in?next=$(touch {})", pwned.display());
    let browser = format!(r#"sh -c "printf %s > {}""#, opened.display());
    let (ok, stderr) = url_question(&env, &page, &browser);
    assert!(ok, "{stderr}");
    assert!(stderr.contains("asks you to open a page"), "{stderr}");
    assert!(!settled(&pwned), "the server's URL ran as shell text: {stderr}");
    assert!(!opened.exists(), "the entry that embeds %s in a shell command was used: {stderr}");
}

/// A URL-mode question naming a `file:` page: printed for the person, opened by nothing.
#[test]
fn a_url_question_for_a_file_is_printed_and_not_opened() {
    let env = Env::new();
    write_config(&env, json!({ "everything": everything_stdio() }), &["everything"], json!({}));
    let opened = env.root().join("opened.txt");
    let browser = recording_browser(&env, &opened);
    let (_, stderr) = url_question(&env, "file:///etc/passwd", &browser.display().to_string());
    assert!(stderr.contains("  file:///etc/passwd"), "{stderr}");
    assert!(stderr.contains("(not opened: a file: URL without a host is not a web page"), "{stderr}");
    assert!(!settled(&opened), "$BROWSER was started on a file: URL");
}

/// A call refused for more scope (`403 insufficient_scope`) from a command, where nobody may be
/// looking: no browser opens, the error names the login, and that login asks for the scope.
#[test]
fn more_scope_asked_outside_the_session_opens_no_browser_and_the_next_login_asks_for_it() {
    let server = OAuthServer::start(&["--step-up", "notes:write"]);
    let env = Env::new();
    add_enabled(&env, &server, "notes", &json!({ "type": "http", "url": server.url }));
    login(&env, &server, "notes");
    let opened_before = std::fs::read_to_string(browser_log(&env)).unwrap_or_default();

    let refused = run(&env, &[], &["call", "write_note", r#"{"text": "hi"}"#], &[]);
    assert!(!refused.output.status.success(), "{}\n{}", refused.all(), server.log());
    assert!(
        refused.stderr().contains("authorization required: run toolport mcp login notes"),
        "{}\n{}",
        refused.all(),
        server.log()
    );
    assert_eq!(server.logged("refused a write_note call"), 1, "{}", server.log());
    std::thread::sleep(Duration::from_millis(300));
    let opened_after = std::fs::read_to_string(browser_log(&env)).unwrap_or_default();
    assert_eq!(opened_after, opened_before, "a browser opened for the step-up: {}", refused.all());

    login(&env, &server, "notes");
    assert_eq!(
        server.logged("for mcp:tools notes:write"),
        1,
        "the login did not ask for the scope: {}",
        server.log()
    );
    let called = run(&env, &[], &["call", "write_note", r#"{"text": "hi"}"#], &[]);
    assert!(called.output.status.success(), "{}", called.all());
    assert!(called.stdout().contains("noted: hi"), "{}", called.all());
}
