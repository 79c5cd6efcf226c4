//! A `stdio` server's OS sandbox in the store and the commands (issue 46, config side) on a
//! temporary home: `mcp add --sandbox|--no-sandbox`, the store's `defaults.sandbox` set with
//! `mcp default` and written into servers added by `mcp add`, `mcp add-json`, `mcp import` and
//! the session's `/mcp add`; grants and revokes on a sandboxed `stdio` server; the refusal of an
//! unsandboxed one whose printed fix runs as printed; a `guest` path and a sandbox on another
//! type refused; `mcp get` as text and JSON; unknown keys kept through every edit.

use std::fs;
use std::process::Output;

use serde_json::{Value, json};

use crate::support::common::Env;
use crate::support::session::Scripted;

/// Runs `args` in the workspace root (what relative `--dir` paths are read against) with a
/// `HOME` inside the temporary home (no real client file is read, `~` means a known folder),
/// and asserts the exit status.
fn run(env: &Env, args: &[&str], code: i32) -> Output {
    let o = env
        .cmd(args)
        .current_dir(env.root())
        .env("HOME", user_home(env))
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap_or_else(|e| panic!("run {args:?}: {e}"));
    assert_eq!(o.status.code(), Some(code), "{args:?}\nstdout: {}\nstderr: {}", out(&o), all_err(&o));
    o
}

fn user_home(env: &Env) -> std::path::PathBuf {
    let home = env.home().join("user");
    fs::create_dir_all(&home).unwrap_or_else(|e| panic!("mkdir: {e}"));
    home
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn all_err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Stderr without the log's warnings.
fn err(o: &Output) -> String {
    all_err(o).lines().filter(|l| !l.contains(" WARN ")).map(|l| format!("{l}\n")).collect()
}

fn store(env: &Env) -> Value {
    serde_json::from_str(&fs::read_to_string(env.store()).unwrap_or_default()).unwrap_or_default()
}

fn write_store(env: &Env, doc: Value) {
    fs::write(env.store(), serde_json::to_string_pretty(&doc).unwrap_or_default())
        .unwrap_or_else(|e| panic!("write store: {e}"));
}

/// A folder inside the workspace root, returned as its absolute path.
fn folder(env: &Env, name: &str) -> String {
    let dir = env.root().join(name);
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("mkdir: {e}"));
    dir.display().to_string()
}

#[test]
fn add_writes_the_sandbox_as_asked_and_as_the_stores_default_says() {
    let env = Env::new();
    write_store(&env, json!({"x-top": 1, "defaults": {"x-note": "mine"}}));
    let store_path = env.store().display().to_string();
    assert_eq!(out(&run(&env, &["mcp", "default"], 0)), "sandbox: off\n");
    run(&env, &["mcp", "add", "--sandbox", "fs", "--", "npx", "-y", "pkg", "--no-sandbox"], 0);
    run(&env, &["mcp", "add", "plain", "--", "npx"], 0);

    let o = run(&env, &["mcp", "default", "sandbox", "on"], 0);
    assert_eq!(out(&o), format!("mcp default sandbox: on (was off) -> {store_path}\n"));
    assert_eq!(out(&run(&env, &["mcp", "default"], 0)), "sandbox: on\n");
    assert_eq!(out(&run(&env, &["mcp", "default", "sandbox"], 0)), "sandbox: on\n");
    run(&env, &["mcp", "add", "later", "--", "npx"], 0);
    run(&env, &["mcp", "add", "--no-sandbox", "opted-out", "--", "npx"], 0);
    run(&env, &["mcp", "add", "--transport", "http", "remote", "https://example.com/mcp"], 0);
    run(&env, &["mcp", "add-json", "given", r#"{"command": "npx", "x-own": 1}"#], 0);
    let client_file = env.root().join("client.json");
    fs::write(
        &client_file,
        json!({"mcpServers": {"imported": {"command": "uvx", "args": ["tool"]}}}).to_string(),
    )
    .unwrap_or_else(|e| panic!("write: {e}"));
    let file = client_file.display().to_string();
    run(&env, &["mcp", "import", "--from", "claude-code", "--file", &file], 0);
    let mut session = Scripted::start(&env);
    assert_eq!(session.run("/mcp add typed -- npx"), format!("mcp added: typed -> {store_path}\n"));
    assert_eq!(
        session.run("/mcp add --no-sandbox typed-out -- npx"),
        format!("mcp added: typed-out -> {store_path}\n")
    );
    assert!(session.quit().success());

    let doc = store(&env);
    let sandbox = |name: &str| doc["mcpServers"][name].get("sandbox").cloned();
    assert_eq!(sandbox("fs"), Some(json!(true)));
    assert_eq!(doc["mcpServers"]["fs"]["args"], json!(["-y", "pkg", "--no-sandbox"]));
    for on in ["later", "given", "imported", "typed"] {
        assert_eq!(sandbox(on), Some(json!(true)), "{on}: {doc}");
    }
    for off in ["plain", "opted-out", "remote", "typed-out"] {
        assert_eq!(sandbox(off), None, "{off}: {doc}");
    }
    assert_eq!(doc["mcpServers"]["given"]["x-own"], 1);
    assert_eq!(doc["x-top"], 1);
    assert_eq!(doc["defaults"], json!({"x-note": "mine", "sandbox": true}));

    let o = run(&env, &["mcp", "default", "sandbox", "off"], 0);
    assert_eq!(out(&o), format!("mcp default sandbox: off (was on) -> {store_path}\n"));
    run(&env, &["mcp", "add", "after", "--", "npx"], 0);
    assert_eq!(store(&env)["mcpServers"]["after"].get("sandbox"), None);
    // What is refused, and says why.
    let o = run(&env, &["mcp", "add", "--sandbox", "--transport", "sse", "legacy", "http://h/sse"], 2);
    assert!(
        err(&o).starts_with(
            "toolport: --sandbox is for stdio servers only: a server of type sse runs elsewhere\n\
             Usage: toolport mcp add "
        ),
        "{}",
        err(&o)
    );
    let o = run(&env, &["mcp", "default", "sandbox", "maybe"], 2);
    assert!(err(&o).contains("invalid value 'maybe'"), "{}", err(&o));
}

/// A sandboxed `stdio` server with keys of its own in the entry, its `sandbox` object, its
/// `grants` and its `limits`, beside a plain one.
fn sandboxed_store(env: &Env) {
    write_store(
        env,
        json!({"mcpServers": {
            "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"],
                   "x-owner": "me",
                   "env": {"GITHUB_TOKEN": "secret-value"},
                   "sandbox": {"required": false, "x-why": "untrusted"},
                   "grants": {"x-note": "docs"}, "limits": {"memoryMb": 1024, "x-limit": 1}},
            "web": {"type": "stdio", "command": "npx", "x-owner": "me"}
        }}),
    );
}

#[test]
fn a_sandboxed_stdio_server_is_granted_and_revoked_and_keeps_its_own_keys() {
    let env = Env::new();
    sandboxed_store(&env);
    let docs = folder(&env, "docs");
    let args = [
        "mcp",
        "grant",
        "fs",
        "--dir",
        "docs",
        "--dir",
        "~:rw",
        "--host",
        "https://api.github.com",
        "--env",
        "GITHUB_TOKEN",
    ];
    let o = run(&env, &args, 0);
    assert_eq!(
        out(&o),
        format!(
            "granted fs: dir {docs} (ro)\ngranted fs: dir ~ (rw)\ngranted fs: host https://api.github.com\n\
             granted fs: env GITHUB_TOKEN\n"
        )
    );
    let entry = store(&env)["mcpServers"]["fs"].clone();
    assert_eq!(
        entry,
        json!({"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"], "x-owner": "me",
               "env": {"GITHUB_TOKEN": "secret-value"},
               "sandbox": {"required": false, "x-why": "untrusted"},
               "grants": {"x-note": "docs", "dirs": [docs, {"host": "~", "mode": "rw"}],
                          "hosts": ["https://api.github.com"], "env": ["GITHUB_TOKEN"]},
               "limits": {"memoryMb": 1024, "x-limit": 1}})
    );
    let o = run(&env, &["mcp", "revoke", "fs", "--dir", &docs, "--dir", "~", "--env", "GITHUB_TOKEN"], 0);
    assert_eq!(
        out(&o),
        format!("revoked fs: dir {docs} (ro)\nrevoked fs: dir ~ (rw)\nrevoked fs: env GITHUB_TOKEN\n")
    );
    // Another field set and unset: the sandbox, its grants and limits stay as they were.
    run(&env, &["mcp", "set", "fs", "timeouts.connectMs", "120000"], 0);
    run(&env, &["mcp", "unset", "fs", "timeouts.connectMs"], 0);
    let entry = store(&env)["mcpServers"]["fs"].clone();
    assert_eq!(entry["sandbox"], json!({"required": false, "x-why": "untrusted"}));
    assert_eq!(entry["grants"], json!({"x-note": "docs", "hosts": ["https://api.github.com"]}));
    assert_eq!(entry["limits"], json!({"memoryMb": 1024, "x-limit": 1}));
    assert_eq!(entry["x-owner"], "me");
    // A key of the person's own inside the limits is kept, and warned about by name.
    let o = run(&env, &["mcp", "get", "fs"], 0);
    assert!(
        all_err(&o).contains("server \"fs\": unknown key \"limits.x-limit\" is ignored"),
        "{}",
        all_err(&o)
    );
}

#[test]
fn an_unsandboxed_stdio_server_is_told_the_fix_and_the_fix_runs_as_printed() {
    let env = Env::new();
    sandboxed_store(&env);
    let before = fs::read(env.store()).unwrap_or_default();
    let o = run(&env, &["mcp", "grant", "web", "--env", "API_KEY"], 2);
    assert_eq!(
        err(&o),
        "toolport: server \"web\" is not sandboxed: run `toolport mcp set web sandbox true` first\n"
    );
    assert_eq!(fs::read(env.store()).unwrap_or_default(), before, "a refusal writes nothing");
    let message = err(&o);
    let printed = message.split('`').nth(1).unwrap_or_default();
    let words = shlex::split(printed).unwrap_or_default();
    assert_eq!(words.first().map(String::as_str), Some("toolport"), "{printed}");
    let args: Vec<&str> = words.iter().skip(1).map(String::as_str).collect();
    let o = run(&env, &args, 0);
    assert_eq!(out(&o), format!("mcp web: sandbox = true (was unset) -> {}\n", env.store().display()));
    let o = run(&env, &["mcp", "grant", "web", "--env", "API_KEY"], 0);
    assert_eq!(out(&o), "granted web: env API_KEY\n");
    assert_eq!(
        store(&env)["mcpServers"]["web"],
        json!({"type": "stdio", "command": "npx", "x-owner": "me", "sandbox": true,
               "grants": {"env": ["API_KEY"]}})
    );

    // Off again: the grants stay in the file, do nothing, and are warned about.
    run(&env, &["mcp", "unset", "web", "sandbox"], 0);
    let o = run(&env, &["mcp", "get", "web"], 0);
    assert!(out(&o).contains("  sandbox: off\n"), "{}", out(&o));
    assert!(
        all_err(&o).contains(&format!(
            "{}: server \"web\": \"grants\" is ignored: it takes effect only with \"sandbox\": true",
            env.store().display()
        )),
        "{}",
        all_err(&o)
    );
    assert_eq!(store(&env)["mcpServers"]["web"]["grants"], json!({"env": ["API_KEY"]}));
    run(&env, &["mcp", "grant", "web", "--env", "OTHER"], 2);
    run(&env, &["mcp", "set", "web", "sandbox", "false"], 0);
    assert_eq!(store(&env)["mcpServers"]["web"]["sandbox"], json!(false));
}

#[test]
fn a_guest_path_and_a_sandbox_on_another_type_are_refused_naming_the_file() {
    let env = Env::new();
    let docs = folder(&env, "docs");
    let file = env.store().display().to_string();
    write_store(
        &env,
        json!({"mcpServers": {"fs": {"command": "npx", "sandbox": true,
                                     "grants": {"dirs": [{"host": docs, "guest": "/docs"}]}}}}),
    );
    let guest = format!(
        "toolport: {file}: server \"fs\": grants.dirs \"{docs}\" has a \"guest\" path, but a sandboxed stdio \
         server sees real paths: remove \"guest\"\n"
    );
    for args in [&["mcp", "get", "fs"][..], &["mcp", "grant", "fs", "--env", "A"], &["mcp", "list"]] {
        assert_eq!(err(&run(&env, args, 2)), guest, "{args:?}");
    }
    // Not sandboxed, the same grants do nothing and are no error; turning it on is refused.
    write_store(
        &env,
        json!({"mcpServers": {"fs": {"command": "npx",
                                     "grants": {"dirs": [{"host": docs, "guest": "/docs"}]}}}}),
    );
    let o = run(&env, &["mcp", "set", "fs", "sandbox", "true"], 2);
    assert!(
        err(&o).ends_with(
            "has a \"guest\" path, but a sandboxed stdio server sees real paths: remove \"guest\"\n"
        ),
        "{}",
        err(&o)
    );

    write_store(
        &env,
        json!({"mcpServers": {
            "remote": {"type": "http", "url": "https://example.com/mcp", "sandbox": true}
        }}),
    );
    let o = run(&env, &["mcp", "list"], 2);
    assert_eq!(
        err(&o),
        format!(
            "toolport: {file}: server \"remote\": \"sandbox\" is for stdio servers only: a server of type \
             streamable_http runs elsewhere, not as a process toolport starts; remove it\n"
        )
    );
    // A host pattern the sandbox cannot read: that server is invalid, saying why.
    write_store(
        &env,
        json!({"mcpServers": {"fs": {"command": "npx", "sandbox": true,
                                     "grants": {"hosts": ["api.github.com"]}}}}),
    );
    let text = out(&run(&env, &["mcp", "get", "fs"], 0));
    assert!(
        text.contains(
            "  valid: no (bad host grant \"api.github.com\": no scheme (expected scheme://host:port))\n"
        ),
        "{text}"
    );
    write_store(&env, json!({"mcpServers": {"notes": {"type": "wasm", "builtin": "files"}}}));
    let o = run(&env, &["mcp", "set", "notes", "sandbox", "true"], 2);
    assert_eq!(
        err(&o),
        "toolport: server \"notes\": \"sandbox\" is for stdio servers only: a server of type wasm is \
         always sandboxed (by its own \"grants\" and \"limits\"); remove it\n"
    );
    assert_eq!(store(&env)["mcpServers"]["notes"].get("sandbox"), None);
}

#[test]
fn mcp_get_shows_the_sandbox_grants_and_limits_never_env_values() {
    let env = Env::new();
    sandboxed_store(&env);
    let docs = folder(&env, "docs");
    run(
        &env,
        &[
            "mcp",
            "grant",
            "fs",
            "--dir",
            "docs:rw",
            "--host",
            "https://api.github.com",
            "--env",
            "GITHUB_TOKEN",
        ],
        0,
    );

    let text = out(&run(&env, &["mcp", "get", "fs"], 0));
    assert!(
        text.contains(&format!(
            "  env: GITHUB_TOKEN=***\n  sandbox: on (required: false)\n  grant dir: {docs} (rw)\n  \
             grant host: https://api.github.com\n  grant env: GITHUB_TOKEN\n  \
             limits: memoryMb=1024 processes=512 openFiles=1024\n"
        )),
        "{text}"
    );
    assert!(!text.contains("secret-value"), "{text}");
    let json: Value =
        serde_json::from_str(&out(&run(&env, &["mcp", "get", "fs", "--json"], 0))).unwrap_or_default();
    assert_eq!(
        json["sandbox"],
        json!({"required": false,
               "grants": {"dirs": [{"host": docs, "path": docs, "guest": docs, "mode": "rw"}],
                          "hosts": ["https://api.github.com"], "env": ["GITHUB_TOKEN"]},
               "limits": {"memoryMb": 1024, "processes": 512, "openFiles": 1024}})
    );
    assert_eq!(json["definition"]["sandbox"], json!({"required": false}));
    assert!(!json.to_string().contains("secret-value"), "{json}");

    run(&env, &["mcp", "set", "web", "sandbox", "true"], 0);
    let text = out(&run(&env, &["mcp", "get", "web"], 0));
    assert!(
        text.contains(
            "  sandbox: on\n  grants: none\n  limits: memoryMb=2048 processes=512 openFiles=1024\n"
        ),
        "{text}"
    );
    let json: Value =
        serde_json::from_str(&out(&run(&env, &["mcp", "get", "web", "--json"], 0))).unwrap_or_default();
    assert_eq!(json["sandbox"]["required"], true);
    // Off: `sandbox: off` in the text, no `sandbox` in the JSON (as for every unsandboxed server).
    run(&env, &["mcp", "unset", "web", "sandbox"], 0);
    assert!(out(&run(&env, &["mcp", "get", "web"], 0)).contains("  sandbox: off\n"));
    let json: Value =
        serde_json::from_str(&out(&run(&env, &["mcp", "get", "web", "--json"], 0))).unwrap_or_default();
    assert!(json.get("sandbox").is_none(), "{json}");
}
