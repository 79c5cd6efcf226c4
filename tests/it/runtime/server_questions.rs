//! A server's own questions to the client, answered through the built binary and the library
//! against real servers: elicitation (form and URL mode) by `call --elicit`, by a person in a
//! session on a pseudo-terminal, declined over ACP with a note; roots (the workspace root, and
//! a change announced); sampling refused; SEP-2322 input-required rounds against the built-in
//! demo server.

use std::io::Write;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use toolport::{Runtime, RuntimeOptions};

use crate::support::acp::Agent;
use crate::support::common::{Env, toolport_path};
use crate::support::peers::everything_stdio;
use crate::support::runtime::{start, write_config};

/// An environment whose one enabled server is server-everything over stdio.
fn everything() -> Env {
    let env = Env::new();
    write_config(&env, json!({ "everything": everything_stdio() }), &["everything"], json!({}));
    env
}

/// `toolport call <args…>` with no terminal anywhere (stdin empty, output captured).
fn call(env: &Env, args: &[&str]) -> (bool, String, String) {
    let out = env
        .cmd(std::iter::once("call").chain(args.iter().copied()))
        .write_stdin("")
        .timeout(Duration::from_secs(90))
        .output()
        .unwrap_or_else(|e| panic!("run call: {e}"));
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn elicit_decline_declines_and_says_so() {
    let env = everything();
    let (ok, out, err) = call(&env, &["trigger-elicitation-request", "--elicit", "decline"]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("User declined to provide the requested information"), "{out}");
    assert!(err.contains("declined the input MCP server everything asked for (--elicit decline)"), "{err}");
}

#[test]
fn without_a_terminal_the_answer_is_decline() {
    let env = everything();
    let (ok, out, err) = call(&env, &["trigger-elicitation-request"]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("\"action\": \"decline\""), "{out}");
    assert!(
        err.contains("MCP server everything asks for input, but there is no terminal to ask on"),
        "{err}"
    );
}

/// server-everything's form requires `name`, which has no default: accepting the defaults
/// cannot satisfy the schema, so the answer is decline, naming the field.
#[test]
fn accept_defaults_declines_a_form_whose_required_field_has_no_default() {
    let env = everything();
    let (ok, out, err) = call(&env, &["trigger-elicitation-request", "--elicit", "accept-defaults"]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("\"action\": \"decline\""), "{out}");
    assert!(err.contains("required field name has no default (--elicit accept-defaults)"), "{err}");
}

/// URL mode: the page is printed and handed to `$BROWSER`; accepting tells the server the
/// person went there.
#[test]
fn url_mode_prints_the_page_and_opens_it_with_browser() {
    let env = everything();
    let opened = env.root().join("opened.txt");
    let browser = env.root().join("browser.sh");
    std::fs::write(&browser, format!("#!/bin/sh\nprintf '%s' \"$1\" > '{}'\n", opened.display()))
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::set_permissions(&browser, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .unwrap_or_else(|e| panic!("{e}"));
    let page = "https://example.com/sign-in?step=1";
    let out = env
        .cmd([
            "call",
            "trigger-url-elicitation",
            &json!({"url": page}).to_string(),
            "--elicit",
            "accept-defaults",
        ])
        .env("BROWSER", &browser)
        .write_stdin("")
        .timeout(Duration::from_secs(90))
        .output()
        .unwrap_or_else(|e| panic!("run call: {e}"));
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("User completed the URL elicitation flow"), "{stdout}");
    assert!(stderr.contains("MCP server everything asks you to open a page"), "{stderr}");
    assert!(stderr.contains(&format!("  {page}")), "{stderr}");
    let mut seen = String::new();
    for _ in 0..100 {
        seen = std::fs::read_to_string(&opened).unwrap_or_default();
        if !seen.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(seen, page, "$BROWSER got the page");
}

#[test]
fn sampling_is_refused_because_this_host_has_no_model() {
    let env = everything();
    let (ok, out, err) = call(&env, &["trigger-sampling-request", r#"{"prompt": "hello"}"#]);
    // The server reports the refusal as its tool's error result (exit 1), in our words.
    assert!(!ok, "{out}{err}");
    assert!(out.contains("MCP error -1: this host has no model"), "{out}{err}");
}

#[test]
fn roots_list_answers_the_workspace_root() {
    let env = everything();
    let (ok, out, err) = call(&env, &["get-roots-list"]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("Current MCP Roots (1 total)"), "{out}");
    let uri = format!("file://{}/", env.root().display());
    assert!(out.contains(&format!("URI: {uri}")), "{out}");
}

/// An embedding host that changes the root: servers are told (`roots/list_changed`) and ask
/// again, so the next answer names the new one.
#[tokio::test(flavor = "multi_thread")]
async fn a_changed_root_is_announced() {
    let env = everything();
    let options = RuntimeOptions { workspace_root: Some(env.root().to_path_buf()), ..Default::default() };
    let runtime = start(&env, &[], options).await;
    let roots = |runtime: Runtime| async move {
        runtime.call("get-roots-list", "").await.map(|o| o.render_text()).unwrap_or_else(|e| e.to_string())
    };
    assert!(roots(runtime.clone()).await.contains(&format!("file://{}/", env.root().display())));
    let other = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    runtime.set_workspace_root(other.path().to_path_buf()).await;
    let wanted = format!("file://{}/", other.path().display());
    let mut seen = String::new();
    for _ in 0..100 {
        seen = roots(runtime.clone()).await;
        if seen.contains(&wanted) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(seen.contains(&wanted), "{seen}");
    runtime.shutdown().await;
}

/// A person answers server-everything's form in a session on a pseudo-terminal (`script`
/// from util-linux), field by field.
#[test]
fn a_person_answers_a_form_in_a_session_on_a_terminal() {
    let env = everything();
    let (mut child, mut stdin, mut stdout) = crate::support::common::session_on_a_terminal(&env);
    let screen = Arc::new(Mutex::new(String::new()));
    let shown = Arc::clone(&screen);
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = std::io::Read::read(&mut stdout, &mut buf) {
            if let Ok(mut s) = shown.lock() {
                s.push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        }
    });
    let text = || screen.lock().map(|s| s.clone()).unwrap_or_default();
    // Each key goes only once its prompt is on the screen: typed ahead, a prompt that sets
    // up the terminal may discard it. A prompt that never comes fails the test, not hangs it.
    let mut seen = 0;
    let mut type_after = |wanted: &str, keys: &str| {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let now = text();
            if let Some(at) = now.get(seen..).and_then(|rest| rest.find(wanted)) {
                seen += at + wanted.len();
                break;
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("never saw {wanted:?}:\n{now}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(150));
        stdin.write_all(keys.as_bytes()).unwrap_or_else(|e| panic!("type: {e}"));
        stdin.flush().unwrap_or_else(|e| panic!("flush: {e}"));
    };
    type_after("toolport> ", "/call trigger-elicitation-request\r");
    type_after("Fill in the form", "\r");
    // The name typed; every other field kept at its default with Enter, once its
    // description (printed just before its prompt) is shown.
    type_after("Your full, legal name", "Ada\r");
    for description in [
        "Agree to the terms",
        "Favorite first line",
        "Your email address",
        "Portfolio / personal website",
        "Your date of birth",
        "Your favorite integer",
        "Favorite number",
        "Choose your favorite friend",
        "Choose your favorite instruments",
        "Choose your favorite hero",
        "Choose your favorite types of fish",
        "Choose your favorite type of pet",
    ] {
        type_after(description, "\r");
    }
    type_after("toolport> ", "/quit\r");
    let status = child.wait().unwrap_or_else(|e| panic!("wait: {e}"));
    drop(stdin);
    let _ = reader.join();
    let screen = text();
    assert!(status.success(), "{screen}");
    assert!(
        screen.contains("MCP server everything asks: Please provide inputs for the following fields:"),
        "{screen}"
    );
    assert!(screen.contains("It was a dark and stormy night."), "the default is shown:\n{screen}");
    assert!(screen.contains("User provided the requested information!"), "{screen}");
    assert!(screen.contains("- Name: Ada"), "{screen}");
    assert!(screen.contains("- Favorite Integer: 42"), "a default kept with Enter:\n{screen}");
}

/// ACP clients cannot answer yet: declined, with a note in the session naming the server.
#[test]
fn acp_declines_with_a_note_in_the_session() {
    let env = everything();
    let mut agent = Agent::start(&env);
    let new = agent.call(1, "session/new", json!({"cwd": env.root(), "mcpServers": []}));
    let session = new["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("{new}")).to_string();
    let _commands = agent.next();
    let (stop, text) = agent.prompt(2, &session, "/call trigger-elicitation-request");
    assert_eq!(stop, "end_turn");
    assert!(
        text.starts_with(
            "MCP server everything asked for input (a form of 13 fields: Please provide inputs for the \
             following fields:); declined, because this ACP client cannot answer elicitations yet.\n"
        ),
        "{text}"
    );
    assert!(text.contains("User declined to provide the requested information"), "{text}");
    agent.finish();
}

/// SEP-2322 through the binary: the demo server's `confirm` answers `tools/call` with
/// input-required results; each is answered (here with the form's defaults) and retried with
/// the sealed `requestState` as a new request, until the server answers; a server that keeps
/// asking is stopped at the named limit.
#[test]
fn input_required_rounds_are_answered_and_retried_with_the_request_state() {
    let env = Env::new();
    let demo = json!({"command": toolport_path(), "args": ["demo-server", "--confirm"]});
    write_config(&env, json!({ "demo": demo }), &["demo"], json!({}));
    let (ok, out, err) = call(&env, &["confirm", r#"{"rounds": 2}"#, "--elicit", "accept-defaults"]);
    assert!(ok, "{out}{err}");
    let (answer, ids) = out.trim().split_once("; request ids ").unwrap_or_else(|| panic!("{out}"));
    assert_eq!(answer, r#"confirmed {"size":"m","colour":"blue","count":2,"gift":false}; rounds 2"#);
    let ids: Vec<&str> = ids.split(',').collect();
    assert_eq!(ids.len(), 3, "{out}");
    assert!(ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2], "a new JSON-RPC id each time: {out}");

    let (ok, out, err) = call(&env, &["confirm", r#"{"rounds": 50}"#, "--elicit", "accept-defaults"]);
    assert!(!ok, "{out}");
    assert!(
        err.contains(&format!(
            "the server still asked for input after {} answers",
            toolport::questions::MAX_INPUT_ROUNDS
        )),
        "{err}"
    );
    let (ok, out, _) = call(&env, &["confirm", "--elicit", "decline"]);
    assert!(ok && out.starts_with("not confirmed: decline; rounds 1"), "{out}");
}
