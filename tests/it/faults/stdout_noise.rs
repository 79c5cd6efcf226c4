//! Issue 45 item 2: lines on a stdio server's stdout that are not JSON-RPC (a banner, a
//! `console.log`, a JSON logger) are said at once, at the default verbosity, quoting the first;
//! and a connect that then times out says what the server printed instead of only "connect
//! timed out". Through the binary, with `tests/faults/fault_server.py`.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::common::Env;
use crate::support::faults::{fault, write_pair};

/// How long one command may take (python starts, a demo-server connects).
const WITHIN: Duration = Duration::from_secs(60);

/// What the first line that is not JSON-RPC is warned with (after the log's level and target).
const BANNER_WARNING: &str = "skipped a line on stdout that is not JSON-RPC (a stdio server writes only JSON-RPC \
                              there; its logs belong on stderr): \"Listening on port 3000\" server=bad";

#[test]
fn a_banner_on_stdout_is_warned_about_at_once_and_the_server_works() {
    let env = Env::new();
    write_pair(&env, fault("banner", &[]));
    let (code, stdout, stderr) = env.run(&["call", "poke"], WITHIN);
    assert_eq!((code, stdout.as_str()), (0, "poked\n"), "{stderr}");
    let warned: Vec<&str> = stderr.lines().filter(|l| l.contains("not JSON-RPC")).collect();
    assert_eq!(warned.len(), 1, "{stderr}");
    assert!(warned[0].contains(" WARN ") && warned[0].ends_with(BANNER_WARNING), "{stderr}");
}

#[test]
fn a_connect_timeout_after_only_noise_says_what_the_server_printed() {
    let env = Env::new();
    let mut bad = fault("noise", &[]);
    bad["timeouts"] = json!({ "connectMs": 1500 });
    write_pair(&env, bad);
    let error = "connect timed out after 1500 ms; the server printed 3 lines that are not JSON-RPC on stdout, \
                 the first: \"Listening on port 3000\"";
    let (code, stdout, stderr) = env.run(&["mcp", "list", "--json"], WITHIN);
    assert_eq!(code, 0, "{stderr}");
    let list: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let row = &list["servers"][0];
    assert_eq!((&row["name"], &row["state"], &row["error"]), (&json!("bad"), &json!("error"), &json!(error)));
    // Warned about once at once (the first quoted), never once a line.
    let warned: Vec<&str> = stderr.lines().filter(|l| l.contains("not JSON-RPC")).collect();
    assert_eq!(warned.len(), 1, "{stderr}");
    assert!(warned[0].ends_with(BANNER_WARNING), "{stderr}");
    // The status view's row keeps a connect timeout whole (its fix must stay runnable), so
    // what the server printed is there too.
    let (_, text, _) = env.run(&["mcp", "list"], WITHIN);
    assert!(text.contains(&format!("| error={error}\n")), "{text}");
}

#[test]
fn many_lines_of_noise_are_counted_not_each_warned() {
    // `garbage` writes a line that is not JSON before every answer: initialize, tools/list,
    // then ten calls make twelve, warned at the first and at the tenth.
    let env = Env::new();
    write_pair(&env, fault("garbage", &[]));
    let mut session = crate::support::session::Scripted::start(&env);
    for _ in 0..10 {
        assert_eq!(session.run("/call poke"), "poked\n");
    }
    let stderr = session.stderr();
    let warned: Vec<&str> = stderr.lines().filter(|l| l.contains("not JSON-RPC")).collect();
    assert_eq!(warned.len(), 2, "{stderr}");
    let tenth = "skipped 10 lines on stdout so far that are not JSON-RPC, the first: \
                 \"this is not JSON at all {{{\" server=bad";
    assert!(warned[1].ends_with(tenth), "{stderr}");
    assert!(session.quit().success());
}
