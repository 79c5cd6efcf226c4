//! `toolport mcp|plugin grant|revoke|pin` on a temporary home: the lines printed for each
//! change, the refusals and their exit statuses, what the store holds afterwards (unknown keys
//! included), the views that show grants and pins, and a changed component refused at load.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use toolport::edit::{GrantRequest, SandboxEntry};
use toolport::plugins::PluginHost;
use toolport::store::{Grants, Limits, PluginDef, PluginKind};
use toolport::test_support::PLUGIN_BUILD_DIR;

use crate::support::common::Env;
use crate::support::runtime::demo;

fn wasm(stem: &str) -> PathBuf {
    Path::new(PLUGIN_BUILD_DIR).join(format!("{stem}.wasm"))
}

fn sha256_of(path: &Path) -> String {
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs `args` in the workspace root (what relative `--dir` paths are read against) and
/// asserts the exit status, showing both streams when it differs.
fn run(env: &Env, args: &[&str], code: i32) -> Output {
    let o = env.cmd(args).current_dir(env.root()).output().unwrap_or_else(|e| panic!("run {args:?}: {e}"));
    assert_eq!(o.status.code(), Some(code), "{args:?}\nstdout: {}\nstderr: {}", out(&o), err(&o));
    o
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Stderr without the log's warnings (an unknown key inside `grants` is warned about on
/// every read, by design).
fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| !l.contains(" WARN "))
        .map(|l| format!("{l}\n"))
        .collect()
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

/// A store with a sandboxed server, a native one and a plugin, each with keys of its own.
fn sandboxed(env: &Env) {
    write_store(
        env,
        json!({
            "x-top": "kept",
            "mcpServers": {
                "notes": {"type": "wasm", "component": "servers/notes.wasm", "x-owner": "me",
                          "env": {"NOTES_TOKEN": "secret-value"},
                          "grants": {"x-why": "notes app"}, "limits": {"memoryMb": 64}},
                "web": {"type": "stdio", "command": "npx"},
                "files": {"type": "wasm", "builtin": "files"}
            },
            "plugins": {
                "shape": {"kind": "tool-shape", "path": "plugins/shape.wasm", "x-owner": "me",
                          "grants": {"x-why": "shape"}}
            }
        }),
    );
}

#[test]
fn a_wasm_server_is_granted_and_revoked_each_kind_and_keeps_its_own_keys() {
    let env = Env::new();
    sandboxed(&env);
    let notes = folder(&env, "notes");
    let args =
        ["mcp", "grant", "notes", "--dir", "notes:rw", "--host", "http://127.0.0.1:*", "--env", "API_KEY"];
    let o = run(&env, &args, 0);
    assert_eq!(
        out(&o),
        format!(
            "granted notes: dir {notes} (rw)\ngranted notes: host http://127.0.0.1:*\ngranted notes: env API_KEY\n"
        )
    );
    // The same again changes nothing and says so.
    let before = fs::read(env.store()).unwrap_or_default();
    let o = run(&env, &args, 0);
    assert_eq!(
        out(&o),
        format!(
            "already granted notes: dir {notes} (rw)\nalready granted notes: host http://127.0.0.1:*\n\
             already granted notes: env API_KEY\n"
        )
    );
    assert_eq!(fs::read(env.store()).unwrap_or_default(), before, "a no-op grant writes nothing");
    // Another mode replaces the entry.
    let o = run(&env, &["mcp", "grant", "notes", "--dir", &notes], 0);
    assert_eq!(out(&o), format!("granted notes: dir {notes} (ro, was rw)\n"));
    run(&env, &["mcp", "grant", "notes", "--dir", &format!("{notes}:rw")], 0);

    let doc = store(&env);
    let entry = &doc["mcpServers"]["notes"];
    assert_eq!(doc["x-top"], "kept");
    assert_eq!(entry["x-owner"], "me");
    assert_eq!(entry["limits"], json!({"memoryMb": 64}));
    assert_eq!(
        entry["grants"],
        json!({"x-why": "notes app", "dirs": [{"host": notes, "mode": "rw"}],
               "hosts": ["http://127.0.0.1:*"], "env": ["API_KEY"]})
    );

    let o = run(
        &env,
        &["mcp", "revoke", "notes", "--dir", "notes", "--host", "HTTP://127.0.0.1:*", "--env", "API_KEY"],
        0,
    );
    assert_eq!(
        out(&o),
        format!(
            "revoked notes: dir {notes} (rw)\nrevoked notes: host http://127.0.0.1:*\nrevoked notes: env API_KEY\n"
        )
    );
    let doc = store(&env);
    assert_eq!(doc["mcpServers"]["notes"]["grants"], json!({"x-why": "notes app"}));
    assert_eq!(doc["mcpServers"]["notes"]["x-owner"], "me");
    assert_eq!(doc["mcpServers"]["web"], json!({"type": "stdio", "command": "npx"}));
}

#[test]
fn mcp_get_shows_the_sandbox_with_env_names_only() {
    let env = Env::new();
    sandboxed(&env);
    let notes = folder(&env, "notes");
    let mut doc = store(&env);
    doc["mcpServers"]["notes"]["grants"]["dirs"] = json!([{"host": notes, "guest": "/notes", "mode": "rw"}]);
    write_store(&env, doc);
    run(&env, &["mcp", "grant", "notes", "--host", "https://api.example.com", "--env", "API_KEY"], 0);
    let component = env.home().join("servers/notes.wasm").display().to_string();

    let text = out(&run(&env, &["mcp", "get", "notes"], 0));
    assert!(
        text.contains(&format!(
            "  env: NOTES_TOKEN=***\n  component: servers/notes.wasm ({component})\n  grant dir: {notes} -> /notes (rw)\n  \
             grant host: https://api.example.com\n  grant env: API_KEY\n  limits: memoryMb=64 callMs=30000 cpuPercent=80\n  \
             sha256: not pinned\n"
        )),
        "{text}"
    );
    assert!(!text.contains("secret-value"), "{text}");

    let json: Value =
        serde_json::from_str(&out(&run(&env, &["mcp", "get", "notes", "--json"], 0))).unwrap_or_default();
    assert_eq!(
        json["sandbox"],
        json!({
            "component": "servers/notes.wasm", "componentPath": component, "builtin": null,
            "grants": {"dirs": [{"host": notes, "path": notes, "guest": "/notes", "mode": "rw"}],
                       "hosts": ["https://api.example.com"], "env": ["API_KEY"]},
            "limits": {"memoryMb": 64, "callMs": 30000, "cpuPercent": 80}, "sha256": null
        })
    );
    assert_eq!(json["definition"]["env"], json!({"NOTES_TOKEN": "***"}));
    assert!(!json.to_string().contains("secret-value"), "{json}");

    let builtin: Value =
        serde_json::from_str(&out(&run(&env, &["mcp", "get", "files", "--json"], 0))).unwrap_or_default();
    assert_eq!(builtin["sandbox"]["builtin"], "files");
    assert_eq!(builtin["sandbox"]["component"], Value::Null);
    let web: Value =
        serde_json::from_str(&out(&run(&env, &["mcp", "get", "web", "--json"], 0))).unwrap_or_default();
    assert!(web.get("sandbox").is_none(), "{web}");
}

#[test]
fn a_plugin_takes_read_only_folders_hosts_and_env_and_plugin_list_shows_them() {
    let env = Env::new();
    sandboxed(&env);
    let data = folder(&env, "data");
    let o = run(
        &env,
        &["plugin", "grant", "shape", "--dir", "data:ro", "--host", "tcp://127.0.0.1:9000", "--env", "K"],
        0,
    );
    assert_eq!(
        out(&o),
        format!(
            "granted shape: dir {data} (ro)\ngranted shape: host tcp://127.0.0.1:9000\ngranted shape: env K\n"
        )
    );
    let doc = store(&env);
    assert_eq!(
        doc["plugins"]["shape"],
        json!({"kind": "tool-shape", "path": "plugins/shape.wasm", "x-owner": "me",
               "grants": {"x-why": "shape", "dirs": [data], "hosts": ["tcp://127.0.0.1:9000"], "env": ["K"]}})
    );

    let text = out(&run(&env, &["plugin", "list"], 0));
    let header = text.lines().next().unwrap_or_default();
    assert!(header.starts_with("NAME") && header.ends_with("PIN"), "{text}");
    let row = text.lines().last().unwrap_or_default();
    assert!(row.contains(&format!("hosts: tcp://127.0.0.1:9000; env: K; dirs: {data} (ro)")), "{row}");
    assert!(row.ends_with("none"), "{row}");
    let rows: Value =
        serde_json::from_str(&out(&run(&env, &["plugin", "list", "--json"], 0))).unwrap_or_default();
    let shape = rows.as_array().and_then(|r| r.last()).cloned().unwrap_or_default();
    assert_eq!(
        shape["grants"],
        json!({"dirs": [{"host": data, "path": data, "guest": data, "mode": "ro"}],
               "hosts": ["tcp://127.0.0.1:9000"], "env": ["K"]})
    );
    assert_eq!(shape["sha256"], Value::Null);

    let o = run(&env, &["plugin", "revoke", "shape", "--dir", &data, "--env", "K"], 0);
    assert_eq!(out(&o), format!("revoked shape: dir {data} (ro)\nrevoked shape: env K\n"));
    assert_eq!(
        store(&env)["plugins"]["shape"]["grants"],
        json!({"x-why": "shape", "hosts": ["tcp://127.0.0.1:9000"]})
    );
}

#[test]
fn refusals_say_why_exit_2_or_1_and_leave_the_store_alone() {
    let env = Env::new();
    sandboxed(&env);
    let data = folder(&env, "data");
    run(&env, &["mcp", "grant", "notes", "--host", "http://127.0.0.1:8080", "--dir", "data"], 0);
    let before = fs::read(env.store()).unwrap_or_default();
    let missing = env.root().join("missing").display().to_string();
    let cases: [(&[&str], i32, String); 10] = [
        (
            &["mcp", "grant", "web", "--env", "A"],
            2,
            "server \"web\" is not sandboxed: run `toolport mcp set web sandbox true` first".into(),
        ),
        (&["mcp", "grant", "ghost", "--env", "A"], 2, "Unknown MCP server: ghost".into()),
        (&["plugin", "revoke", "ghost", "--env", "A"], 2, "Unknown plugin: ghost".into()),
        (
            &["plugin", "grant", "shape", "--dir", "data:rw"],
            2,
            format!("plugin \"shape\": cannot grant {data} read-write: plugins get read-only folders"),
        ),
        (&["mcp", "grant", "notes", "--dir", "missing:rw"], 2, format!("cannot grant {missing}: no such folder")),
        (
            &["mcp", "grant", "notes", "--host", "127.0.0.1:8080"],
            2,
            "bad host grant \"127.0.0.1:8080\": no scheme (expected scheme://host:port)".into(),
        ),
        (
            &["mcp", "grant", "notes", "--host", "tcp://127.0.0.1"],
            2,
            "bad host grant \"tcp://127.0.0.1\": no port and no default for this scheme (expected scheme://host:port)"
                .into(),
        ),
        (
            &["mcp", "grant", "notes", "--env", "API-KEY"],
            2,
            "bad env grant \"API-KEY\": an environment variable name is letters, digits and _, not starting with a digit"
                .into(),
        ),
        (
            &["mcp", "revoke", "notes", "--host", "http://127.0.0.1:9090"],
            1,
            "server \"notes\": host http://127.0.0.1:9090 is not granted (granted hosts: http://127.0.0.1:8080)".into(),
        ),
        (
            &["mcp", "revoke", "notes", "--env", "A", "--dir", "data"],
            1,
            "server \"notes\": env A is not granted (no env names are granted)".into(),
        ),
    ];
    for (args, code, message) in cases {
        let o = run(&env, args, code);
        assert_eq!(err(&o), format!("toolport: {message}\n"), "{args:?}");
        assert_eq!(out(&o), "", "{args:?}");
    }
    let o = run(&env, &["mcp", "revoke", "notes", "--dir", "elsewhere"], 1);
    let elsewhere = env.root().join("elsewhere").display().to_string();
    assert_eq!(
        err(&o),
        format!("toolport: server \"notes\": dir {elsewhere} is not granted (granted dirs: {data} (ro))\n")
    );
    // Nothing asked for is a usage error.
    for args in [&["mcp", "grant", "notes"][..], &["plugin", "revoke", "shape"]] {
        let o = run(&env, args, 2);
        assert!(err(&o).contains("Usage: toolport "), "{args:?}: {}", err(&o));
    }
    assert_eq!(fs::read(env.store()).unwrap_or_default(), before, "no refusal writes the store");
}

#[test]
fn pin_writes_the_components_digest_and_inspect_shows_the_same() {
    let env = Env::new();
    sandboxed(&env);
    let component = env.home().join("servers/notes.wasm");
    fs::create_dir_all(env.home().join("servers")).unwrap_or_default();
    fs::copy(wasm("shape_openai"), &component).unwrap_or_else(|e| panic!("copy: {e}"));
    let digest = sha256_of(&component);

    let o = run(&env, &["mcp", "pin", "notes"], 0);
    assert_eq!(out(&o), format!("pinned notes: sha256 {digest}\n"));
    let o = run(&env, &["mcp", "pin", "notes"], 0);
    assert_eq!(out(&o), format!("pinned notes: sha256 {digest} (unchanged)\n"));
    let doc = store(&env);
    assert_eq!(doc["mcpServers"]["notes"]["sha256"], digest.as_str());
    assert_eq!(doc["mcpServers"]["notes"]["x-owner"], "me");
    assert_eq!(doc["mcpServers"]["notes"]["grants"], json!({"x-why": "notes app"}));
    let text = out(&run(&env, &["mcp", "get", "notes"], 0));
    assert!(text.contains(&format!("  sha256: {digest}\n")), "{text}");

    fs::copy(wasm("shape_anthropic"), &component).unwrap_or_else(|e| panic!("copy: {e}"));
    let new = sha256_of(&component);
    let o = run(&env, &["mcp", "pin", "notes"], 0);
    assert_eq!(out(&o), format!("pinned notes: sha256 {new} (was {digest})\n"));

    let inspected = out(&run(&env, &["plugin", "inspect", &component.display().to_string()], 0));
    assert!(inspected.starts_with(&format!("file: {}\nsha256: {new}\n", component.display())), "{inspected}");
    let json: Value = serde_json::from_str(&out(&run(
        &env,
        &["plugin", "inspect", "--json", &component.display().to_string()],
        0,
    )))
    .unwrap_or_default();
    assert_eq!(json["sha256"], new.as_str());

    let o = run(&env, &["mcp", "pin", "files"], 2);
    assert_eq!(
        err(&o),
        "toolport: server \"files\" is built in: its component is part of the toolport binary\n"
    );
    let o = run(&env, &["mcp", "pin", "web"], 2);
    assert_eq!(
        err(&o),
        "toolport: server \"web\" is not a wasm server: only a wasm server has a component to pin\n"
    );
    // The plugin's file is not there: a run-time failure naming it.
    let o = run(&env, &["plugin", "pin", "shape"], 1);
    let file = env.home().join("plugins/shape.wasm");
    assert!(err(&o).starts_with(&format!("toolport: cannot read {}: ", file.display())), "{}", err(&o));
    assert!(store(&env)["plugins"]["shape"].get("sha256").is_none());
}

/// The status row's error for `name` in `mcp list --json` (the text views clip it).
fn status_error(env: &Env, name: &str) -> String {
    let listed: Value =
        serde_json::from_str(&out(&run(env, &["mcp", "list", "--json"], 0))).unwrap_or_default();
    let rows = listed["servers"].as_array().cloned().unwrap_or_default();
    let row = rows.into_iter().find(|r| r["name"] == name).unwrap_or_default();
    row["error"].as_str().unwrap_or_default().to_string()
}

#[test]
fn a_pinned_component_that_changed_is_refused_at_load_with_both_digests() {
    let env = Env::new();
    let plugin = env.home().join("plugins/mine.wasm");
    let server = env.home().join("servers/notes.wasm");
    for file in [&plugin, &server] {
        fs::create_dir_all(file.parent().unwrap_or(env.home())).unwrap_or_default();
        fs::copy(wasm("shape_openai"), file).unwrap_or_else(|e| panic!("copy: {e}"));
    }
    write_store(
        &env,
        json!({
            "mcpServers": {"demo": demo(&[]), "notes": {"type": "wasm", "component": "servers/notes.wasm"}},
            "plugins": {"mine": {"kind": "tool-shape", "path": "plugins/mine.wasm"}}
        }),
    );
    fs::create_dir_all(env.root().join(".toolport")).unwrap_or_default();
    fs::write(
        env.workspace_file(),
        json!({"enabledMcpServers": ["demo", "notes"], "toolShape": "mine"}).to_string(),
    )
    .unwrap_or_default();
    run(&env, &["plugin", "pin", "mine"], 0);
    run(&env, &["mcp", "pin", "notes"], 0);
    let pinned = sha256_of(&plugin);
    let text = out(&run(&env, &["plugin", "list"], 0));
    assert!(text.lines().last().unwrap_or_default().ends_with(&format!("sha256 {pinned}")), "{text}");
    let rows: Value =
        serde_json::from_str(&out(&run(&env, &["plugin", "list", "--json"], 0))).unwrap_or_default();
    assert_eq!(rows.as_array().and_then(|r| r.last()).map(|r| r["sha256"].clone()), Some(json!(pinned)));
    // Pinned and unchanged: the shape loads and the demo server's tools come through it.
    assert!(!out(&run(&env, &["tools"], 0)).contains("(no tools)"));

    // Another build copied over both files.
    fs::copy(wasm("shape_anthropic"), &plugin).unwrap_or_else(|e| panic!("copy: {e}"));
    fs::copy(wasm("shape_anthropic"), &server).unwrap_or_else(|e| panic!("copy: {e}"));
    let actual = sha256_of(&plugin);
    assert_eq!(
        status_error(&env, "demo"),
        format!(
            "tool shape mine: {} does not match its pin: sha256 {actual}, pinned {pinned} (if the new component \
             is trusted, run `toolport plugin pin mine`)",
            plugin.display()
        )
    );
    assert_eq!(
        status_error(&env, "notes"),
        format!(
            "{} does not match its pin: sha256 {actual}, pinned {pinned} (if the new component is trusted, run \
             `toolport mcp pin notes`)",
            server.display()
        )
    );
    let o = run(&env, &["tools"], 0);
    assert!(err(&o).contains("Warning: MCP unavailable: demo (tool shape mine: "), "{}", err(&o));
}

/// `config` checks host patterns with a copy of the sandbox's rule (it may not import the
/// plugin host): both must refuse the same patterns with the same words. The sandbox side is
/// a plugin whose grants hold the pattern and whose file passes the header check but not the
/// compiler, so the grants are parsed and nothing is compiled.
#[test]
fn host_patterns_are_refused_exactly_as_the_sandbox_refuses_them() {
    let env = Env::new();
    let file = env.home().join("fake.wasm");
    fs::write(&file, b"\0asm\x0d\x00\x01\x00not a real component").unwrap_or_default();
    write_store(&env, json!({"plugins": {"p": {"kind": "tool-shape", "path": "fake.wasm"}}}));
    let patterns = [
        "https://api.example.com",
        "HTTPS://API.EXAMPLE.COM:443",
        "tcp://127.0.0.1:*",
        "udp://10.0.0.1:53",
        "http://[::1]:8080",
        "ws://[::1]",
        "https://*.example.com:443",
        "https://*.:1",
        "example.com:80",
        "://x:1",
        "tcp://",
        "tcp://127.0.0.1",
        "http://x.com:80/path",
        "http://x.com:99999",
        "http://x.com:-1",
        "http://[::1:80",
        "https://a.*.com:443",
        "https://*:443",
        "http://:80",
        "ftp://files.example.com",
    ];
    let mut refused = 0;
    for pattern in patterns {
        let request = GrantRequest { hosts: vec![pattern.to_string()], ..GrantRequest::default() };
        let config =
            toolport::edit::grant_sandbox(&env.store(), SandboxEntry::Plugin("p"), &request, env.root());
        if config.is_ok() {
            let undo =
                toolport::edit::revoke_sandbox(&env.store(), SandboxEntry::Plugin("p"), &request, env.root());
            assert!(undo.is_ok(), "{pattern}: {undo:?}");
        }
        let def = PluginDef {
            name: "p".into(),
            kind: PluginKind::ToolShape,
            path: file.clone(),
            grants: Grants { hosts: vec![pattern.to_string()], ..Grants::default() },
            limits: Limits::default(),
            sha256: None,
        };
        let host = PluginHost::new(None, &[def]).unwrap_or_else(|e| panic!("{e:#}"));
        let sandbox = host.tool_shape("p").err().map(|e| e.to_string()).unwrap_or_default();
        match config {
            Ok(_) => assert!(
                sandbox.contains(": cannot compile: "),
                "{pattern}: config took it, the sandbox said {sandbox}"
            ),
            Err(e) => {
                refused += 1;
                assert_eq!(sandbox, format!("tool shape p: cannot be loaded: {e}"), "{pattern}");
            }
        }
    }
    assert!(refused >= 10, "the table should exercise the refusals: {refused}");
}
