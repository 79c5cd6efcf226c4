//! `toolport mcp set|unset` and `mcp add --force` and the timeout flags (issue 45 item 3): one
//! field edited with the rest of the definition kept (unknown keys included), each kind of key,
//! bad keys and values refused before anything is written, secrets never echoed, and
//! concurrent edits all landing (the store's lock).

use std::fs;
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::common::{Env, toolport_path};
use crate::support::runtime::demo;

const WITHIN: Duration = Duration::from_secs(60);

fn read_json(path: &std::path::Path) -> Value {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()))
}

fn write_store(env: &Env, servers: Value) {
    fs::write(env.store(), json!({ "mcpServers": servers }).to_string())
        .unwrap_or_else(|e| panic!("store: {e}"));
}

/// Runs and asserts the exit status 0 and stdout, word for word.
fn ok(env: &Env, args: &[&str], stdout: &str) {
    let (code, out, err) = env.run(args, WITHIN);
    assert_eq!((code, out.as_str()), (0, stdout), "{args:?}\n{err}");
}

#[test]
fn set_and_unset_edit_one_field_of_each_kind_and_keep_the_rest() {
    let env = Env::new();
    let store = env.store().display().to_string();
    write_store(
        &env,
        json!({ "s": { "x-note": "mine", "type": "stdio", "command": "srv", "args": ["-v"],
                        "tools": { "x-keep": 1, "include": ["a*"] }, "env": { "KEEP": "k" } } }),
    );
    let line = |what: &str| format!("mcp s: {what} -> {store}\n");
    ok(
        &env,
        &["mcp", "set", "s", "timeouts.connectMs", "120000"],
        &line("timeouts.connectMs = 120000 (was the default 30000)"),
    );
    ok(
        &env,
        &["mcp", "set", "s", "timeouts.listMs", "9000"],
        &line("timeouts.listMs = 9000 (was the default 30000)"),
    );
    ok(
        &env,
        &["mcp", "set", "s", "timeouts.callMs", "5000"],
        &line("timeouts.callMs = 5000 (was the default 60000)"),
    );
    ok(
        &env,
        &["mcp", "set", "s", "tools.exclude", "debug_*", "rm"],
        &line(r#"tools.exclude = ["debug_*","rm"] (was unset)"#),
    );
    ok(&env, &["mcp", "set", "s", "tools.include", "b*"], &line(r#"tools.include = ["b*"] (was ["a*"])"#));
    // Arguments that look like flags are the server's, verbatim.
    ok(
        &env,
        &["mcp", "set", "s", "args", "-y", "pkg", "--port", "1"],
        &line(r#"args = ["-y","pkg","--port","1"] (was ["-v"])"#),
    );
    ok(&env, &["mcp", "set", "s", "env.TOKEN", "s3cret"], &line("env.TOKEN = *** (was unset)"));
    ok(&env, &["mcp", "set", "s", "cwd", "/srv"], &line("cwd = /srv (was unset)"));
    assert_eq!(
        read_json(&env.store())["mcpServers"]["s"],
        json!({ "x-note": "mine", "type": "stdio", "command": "srv", "args": ["-y", "pkg", "--port", "1"],
                "tools": { "x-keep": 1, "include": ["b*"], "exclude": ["debug_*", "rm"] },
                "env": { "KEEP": "k", "TOKEN": "s3cret" },
                "timeouts": { "connectMs": 120000, "listMs": 9000, "callMs": 5000 }, "cwd": "/srv" })
    );

    ok(&env, &["mcp", "unset", "s", "timeouts.connectMs"], &line("timeouts.connectMs unset (was 120000)"));
    ok(&env, &["mcp", "unset", "s", "timeouts.listMs"], &line("timeouts.listMs unset (was 9000)"));
    ok(&env, &["mcp", "unset", "s", "timeouts.callMs"], &line("timeouts.callMs unset (was 5000)"));
    ok(&env, &["mcp", "unset", "s", "tools.include"], &line(r#"tools.include unset (was ["b*"])"#));
    ok(&env, &["mcp", "unset", "s", "tools.exclude"], &line(r#"tools.exclude unset (was ["debug_*","rm"])"#));
    ok(&env, &["mcp", "unset", "s", "env.TOKEN"], &line("env.TOKEN unset (was ***)"));
    ok(&env, &["mcp", "unset", "s", "env.KEEP"], &line("env.KEEP unset (was ***)"));
    ok(&env, &["mcp", "unset", "s", "cwd"], &line("cwd unset (was /srv)"));
    ok(&env, &["mcp", "unset", "s", "args"], &line(r#"args unset (was ["-y","pkg","--port","1"])"#));
    ok(&env, &["mcp", "unset", "s", "cwd"], &line("cwd unset (was unset)"));
    assert_eq!(
        read_json(&env.store())["mcpServers"]["s"],
        json!({ "x-note": "mine", "type": "stdio", "command": "srv", "tools": { "x-keep": 1 } }),
        "emptied objects go, the user's own keys stay"
    );

    // A network server's url and headers; a header is the same header in any case.
    write_store(
        &env,
        json!({ "r": { "type": "http", "url": "https://a/mcp", "headers": { "Authorization": "old" } } }),
    );
    let line = |what: &str| format!("mcp r: {what} -> {store}\n");
    ok(&env, &["mcp", "set", "r", "url", "https://b/mcp"], &line("url = https://b/mcp (was https://a/mcp)"));
    ok(
        &env,
        &["mcp", "set", "r", "headers.authorization", "Bearer new"],
        &line("headers.authorization = *** (was ***)"),
    );
    assert_eq!(
        read_json(&env.store())["mcpServers"]["r"],
        json!({ "type": "http", "url": "https://b/mcp", "headers": { "Authorization": "Bearer new" } })
    );
    ok(&env, &["mcp", "unset", "r", "headers.AUTHORIZATION"], &line("headers.AUTHORIZATION unset (was ***)"));
    assert_eq!(read_json(&env.store())["mcpServers"]["r"], json!({ "type": "http", "url": "https://b/mcp" }));
}

#[test]
fn bad_keys_values_and_servers_are_refused_and_nothing_is_written() {
    let env = Env::new();
    write_store(&env, json!({ "s": { "command": "srv" }, "r": { "type": "http", "url": "https://a/mcp" } }));
    let before = fs::read(env.store()).unwrap_or_default();
    let keys = "timeouts.connectMs, timeouts.listMs, timeouts.callMs, tools.include, tools.exclude, args, \
                env.VAR, headers.NAME, cwd, url, sandbox";
    for (args, code, message) in [
        (
            &["mcp", "set", "s", "timeout.connectMs", "1"][..],
            2,
            format!("unknown key \"timeout.connectMs\"; the keys are: {keys}"),
        ),
        (&["mcp", "unset", "s", "command"][..], 2, format!("unknown key \"command\"; the keys are: {keys}")),
        (
            &["mcp", "set", "s", "timeouts.connectMs", "2m"][..],
            2,
            "timeouts.connectMs must be a positive whole number of milliseconds, not \"2m\"".to_string(),
        ),
        (
            &["mcp", "set", "s", "timeouts.callMs", "0"][..],
            2,
            "timeouts.callMs must be a positive whole number of milliseconds, not \"0\"".to_string(),
        ),
        (&["mcp", "set", "s", "timeouts.listMs"][..], 2, "timeouts.listMs needs a value".to_string()),
        (
            &["mcp", "set", "s", "tools.exclude", "ok", "[a"][..],
            2,
            "tools.exclude has a bad glob \"[a\": unclosed character class; missing ']'".to_string(),
        ),
        (
            &["mcp", "set", "s", "tools.include"][..],
            2,
            "tools.include needs at least one glob (unset removes the list)".to_string(),
        ),
        (
            &["mcp", "set", "s", "args"][..],
            2,
            "args needs at least one value (unset removes them)".to_string(),
        ),
        (&["mcp", "set", "s", "cwd", " "][..], 2, "cwd needs a value, not a blank".to_string()),
        (&["mcp", "set", "nope", "cwd", "/srv"][..], 1, "Unknown MCP server: nope".to_string()),
        (&["mcp", "unset", "nope", "cwd"][..], 1, "Unknown MCP server: nope".to_string()),
        // The edited definition must still be one `mcp add` would take.
        (
            &["mcp", "unset", "r", "url"][..],
            2,
            "invalid MCP server \"r\": streamable_http transport requires url".to_string(),
        ),
    ] {
        let (got, out, err) = env.run(args, WITHIN);
        assert_eq!(
            (got, out.as_str(), err.as_str()),
            (code, "", format!("toolport: {message}\n").as_str()),
            "{args:?}"
        );
    }
    assert_eq!(fs::read(env.store()).unwrap_or_default(), before, "a refused edit writes nothing");
}

#[test]
fn secret_values_are_never_echoed() {
    let env = Env::new();
    write_store(&env, json!({ "s": { "command": "srv" }, "r": { "type": "http", "url": "https://a/mcp" } }));
    let secret = "hunter2-secret";
    for args in [
        &["mcp", "set", "s", "env.TOKEN", secret][..],
        &["mcp", "set", "s", "env.TOKEN", secret, "twice"][..],
        &["mcp", "set", "r", "headers.Authorization", secret][..],
        &["mcp", "set", "r", "headers.Authorization", secret, secret][..],
        &["mcp", "unset", "s", "env.TOKEN"][..],
        &["mcp", "get", "r"][..],
    ] {
        let (_, out, err) = env.run(args, WITHIN);
        assert!(!out.contains(secret) && !err.contains(secret), "{args:?} echoed the secret:\n{out}\n{err}");
    }
    let (code, _, err) = env.run(&["mcp", "set", "s", "env.TOKEN", secret, "twice"], WITHIN);
    assert_eq!((code, err.as_str()), (2, "toolport: env.TOKEN takes one value, not 2\n"));
    assert_eq!(read_json(&env.store())["mcpServers"]["r"]["headers"]["Authorization"], secret);
}

/// Eight processes each set their own variable at once: the lock queues them, so every one
/// lands and the user's own key survives all of them.
#[test]
fn concurrent_sets_all_land() {
    let env = Env::new();
    write_store(&env, json!({ "s": { "command": "srv", "x-note": "mine" } }));
    thread::scope(|scope| {
        for i in 0..8 {
            let env = &env;
            scope.spawn(move || {
                let key = format!("env.V{i}");
                let (code, _, err) = env.run(&["mcp", "set", "s", &key, "v"], WITHIN);
                assert_eq!(code, 0, "{err}");
            });
        }
    });
    let def = read_json(&env.store())["mcpServers"]["s"].clone();
    let env_keys: Vec<String> =
        def["env"].as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
    assert_eq!(env_keys.len(), 8, "{def}");
    assert_eq!(def["x-note"], "mine");
}

#[test]
fn add_force_replaces_the_definition_wholesale_and_keeps_enablement() {
    let env = Env::new();
    let bin = toolport_path().display().to_string();
    let store = env.store().display().to_string();
    write_store(&env, json!({ "files": { "command": "gone", "x-old": 1 }, "other": demo(&[]) }));
    ok(&env, &["mcp", "enable", "files"], "mcp enabled: files\n");
    let add = [
        "mcp",
        "add",
        "files",
        "--connect-timeout",
        "45000",
        "--call-timeout",
        "9000",
        "--",
        &bin,
        "demo-server",
    ];
    let (code, _, err) = env.run(&add, WITHIN);
    assert_eq!((code, err.as_str()), (1, "toolport: MCP server already exists: files\n"));
    let forced = [
        "mcp",
        "add",
        "--force",
        "files",
        "--connect-timeout",
        "45000",
        "--call-timeout",
        "9000",
        "--",
        &bin,
        "demo-server",
    ];
    ok(&env, &forced, &format!("mcp replaced: files -> {store}\n"));
    let servers = read_json(&env.store())["mcpServers"].clone();
    assert_eq!(
        servers["files"],
        json!({ "type": "stdio", "command": bin, "args": ["demo-server"], "timeouts": { "connectMs": 45000, "callMs": 9000 } }),
        "none of the old definition's keys survive"
    );
    assert_eq!(
        servers.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["files".into(), "other".into()])
    );
    assert_eq!(read_json(&env.workspace_file())["enabledMcpServers"], json!(["files"]));
    let (code, out, err) = env.run(&["mcp", "list"], WITHIN);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("- files | type=stdio | state=connected | workspace=enabled | paused=no | tools=6\n"),
        "{out}"
    );

    // --force on a new name is a plain add; add-json takes it too.
    ok(
        &env,
        &["mcp", "add", "--force", "fresh", "--", &bin, "demo-server"],
        &format!("mcp added: fresh -> {store}\n"),
    );
    ok(
        &env,
        &["mcp", "add-json", "fresh", r#"{"command":"x"}"#, "--force"],
        &format!("mcp replaced: fresh -> {store}\n"),
    );
    assert_eq!(read_json(&env.store())["mcpServers"]["fresh"], json!({ "command": "x", "type": "stdio" }));
    let (code, _, err) = env.run(&["mcp", "add", "--list-timeout", "soon", "t", "--", "x"], WITHIN);
    assert_eq!(code, 2);
    assert_eq!(
        err.lines().next(),
        Some("toolport: --list-timeout must be a positive whole number of milliseconds, not \"soon\"")
    );
}
