//! `toolport plugin run|add|remove` and `toolport workspace set|unset` as a plugin author and a
//! user run them: the built binary, real components from the plugin build, and
//! `toolport demo-server` as the live server.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};
use toolport::test_support::PLUGIN_BUILD_DIR;

use crate::support::common::{Env, toolport_path};
use crate::support::runtime::demo;

fn wasm(stem: &str) -> PathBuf {
    Path::new(PLUGIN_BUILD_DIR).join(format!("{stem}.wasm"))
}

fn run(env: &Env, args: &[&str]) -> Output {
    env.cmd(args).output().unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// stdout of a command that must succeed.
fn ok(env: &Env, args: &[&str]) -> String {
    let out = run(env, args);
    assert!(out.status.success(), "{args:?} failed: {}", text(&out.stderr));
    text(&out.stdout)
}

/// (exit code, stdout, stderr) of a command that must fail.
fn fails(env: &Env, args: &[&str]) -> (Option<i32>, String, String) {
    let out = run(env, args);
    assert!(!out.status.success(), "{args:?} succeeded: {}", text(&out.stdout));
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap_or_else(|| panic!("not UTF-8: {}", p.display()))
}

/// Two tools as a `tools/list` result, and the same as a bare array.
fn write_tools(env: &Env) -> (PathBuf, PathBuf) {
    let tools = json!([
        {"name": "echo", "description": "Echoes", "inputSchema": {"type": "object"}},
        {"name": "add", "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}},
         "annotations": {"readOnlyHint": true}}
    ]);
    let listed = env.root().join("listed.json");
    let bare = env.root().join("bare.json");
    std::fs::write(&listed, json!({ "tools": tools }).to_string()).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&bare, tools.to_string()).unwrap_or_else(|e| panic!("{e}"));
    (listed, bare)
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn write_json(path: &Path, value: &Value) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{e}"));
    }
    std::fs::write(path, serde_json::to_string_pretty(value).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

#[test]
fn run_a_policy_and_a_shape_on_a_tools_file() {
    let env = Env::new();
    let (listed, bare) = write_tools(&env);
    let policy = wasm("policy_namespace");
    for tools in [&listed, &bare] {
        let out = ok(&env, &["plugin", "run", path_str(&policy), "--tools", path_str(tools)]);
        assert_eq!(out, "rename echo -> sample__echo\nrename add -> sample__add\n");
    }
    let out =
        ok(&env, &["plugin", "run", path_str(&policy), "--tools", path_str(&listed), "--server-name", "gh"]);
    assert_eq!(out, "rename echo -> gh__echo\nrename add -> gh__add\n");

    let shape = wasm("shape_anthropic");
    let out = ok(&env, &["plugin", "run", path_str(&shape), "--tools", path_str(&listed), "--json"]);
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(report["kind"], "tool-shape");
    assert_eq!(report["server"], "sample");
    assert_eq!(
        report["tools"],
        json!([
            {"name": "echo", "description": "Echoes", "input_schema": {"type": "object"}},
            {"name": "add", "input_schema": {"type": "object", "properties": {"a": {"type": "number"}}}}
        ])
    );
    assert_eq!(
        (&report["logs"], &report["denials"], &report["error"]),
        (&json!([]), &json!([]), &Value::Null)
    );
    // The text view: the same JSON, one value per tool.
    let out = ok(&env, &["plugin", "run", path_str(&shape), "--tools", path_str(&listed)]);
    assert!(out.starts_with("{\n  \"name\": \"echo\",\n"), "{out}");
    assert_eq!(out.matches("\"input_schema\"").count(), 2, "{out}");
}

#[test]
fn run_takes_the_tools_live_from_a_configured_server() {
    let env = Env::new();
    write_json(&env.store(), &json!({"mcpServers": {"demo": demo(&["--extra-tool", "zz"])}}));
    // Not enabled in this workspace: `plugin run` connects it anyway, alone.
    let out = ok(&env, &["plugin", "run", path_str(&wasm("policy_namespace")), "--server", "demo"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.first(), Some(&"rename echo -> demo__echo"), "{out}");
    assert!(lines.contains(&"rename add -> demo__add") && lines.contains(&"rename zz -> demo__zz"), "{out}");
    assert!(lines.iter().all(|l| l.starts_with("rename ")), "{out}");

    let out = ok(&env, &["plugin", "run", path_str(&wasm("shape_anthropic")), "--server", "demo", "--json"]);
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(report["server"], "demo");
    let tools = report["tools"].as_array().unwrap_or_else(|| panic!("{report}"));
    assert!(tools.iter().any(|t| t["name"] == "echo" && t["input_schema"]["type"] == "object"), "{report}");
    assert!(tools.iter().all(|t| t.get("inputSchema").is_none()), "{report}");

    let (code, _, err) =
        fails(&env, &["plugin", "run", path_str(&wasm("policy_namespace")), "--server", "nope"]);
    assert_eq!((code, err.as_str()), (Some(2), "toolport: Unknown MCP server: nope\n"));
    // An invalid definition is the store's mistake (2); a server that cannot start, a failure (1).
    write_json(
        &env.store(),
        &json!({"mcpServers": {"bad": {"type": "sse"}, "gone": {"command": "/no/such/server"}}}),
    );
    let policy = wasm("policy_namespace");
    let (code, _, err) = fails(&env, &["plugin", "run", path_str(&policy), "--server", "bad"]);
    assert_eq!(
        (code, err.as_str()),
        (Some(2), "toolport: invalid MCP server \"bad\": sse transport requires url\n")
    );
    let (code, _, err) = fails(&env, &["plugin", "run", path_str(&policy), "--server", "gone"]);
    assert_eq!(code, Some(1));
    assert!(
        err.starts_with("toolport: cannot list the tools of gone: cannot start /no/such/server"),
        "{err}"
    );
}

#[test]
fn run_shows_verdicts_log_lines_denials_and_failures() {
    let env = Env::new();
    let (tools, _) = write_tools(&env);
    let fault = wasm("fixture_fault_policy");
    let base = ["plugin", "run", path_str(&fault), "--tools", path_str(&tools), "--server-name"];
    let with = |server: &'static str| [&base[..], &[server]].concat();

    assert_eq!(ok(&env, &with("picky")), "reject echo: echo tools are not allowed here\nkeep add\n");
    // A log line with its level, escaped as the host log escapes it.
    assert_eq!(
        ok(&env, &with("forge")),
        "keep echo\nkeep add\nlog warn: innocent\\u{a}ERROR toolport: forged host line\\u{d}\\u{1b}[2J\n"
    );
    let report: Value = serde_json::from_str(&ok(&env, &[&with("forge")[..], &["--json"]].concat()))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        report["verdicts"],
        json!([{"tool": "echo", "verdict": "keep"}, {"tool": "add", "verdict": "keep"}])
    );
    assert_eq!(report["logs"][0]["level"], "warn");
    assert!(
        report["logs"][0]["message"].as_str().is_some_and(|m| m.starts_with("innocent\\u{a}")),
        "{report}"
    );

    // A plugin that fails: exit 1 with its message.
    let (code, out, err) = fails(&env, &with("trap"));
    assert_eq!((code, out.as_str()), (Some(1), ""));
    assert!(
        err.contains("toolport: name policy fixture_fault_policy: crashed: panicked at ")
            && err.contains("fault-policy trapped on purpose"),
        "{err}"
    );
    let (code, _, err) = fails(&env, &[&with("spin")[..], &["--call-ms", "300"]].concat());
    assert_eq!(code, Some(1));
    assert!(
        err.ends_with("toolport: name policy fixture_fault_policy: exceeded its time limit (300 ms)\n"),
        "{err}"
    );

    // A denial, recorded by the host: the probe GETs its server's first argument. `env NAME=VALUE`
    // gives a real server (the demo server) a first argument that is a URL.
    let probe = json!({"command": "env", "args": ["http://127.0.0.1:9/=1", toolport_path(), "demo-server"]});
    write_json(&env.store(), &json!({"mcpServers": {"probe": probe}}));
    let http_probe = wasm("fixture_http_probe");
    let (code, out, err) = fails(&env, &["plugin", "run", path_str(&http_probe), "--server", "probe"]);
    assert_eq!((code, out.as_str()), (Some(1), "denied: http://127.0.0.1:9\n"), "{err}");
    assert!(err.contains("toolport: tool shape fixture_http_probe: GET http://127.0.0.1:9/=1: "), "{err}");
    let out = run(&env, &["plugin", "run", path_str(&http_probe), "--server", "probe", "--json"]);
    let report: Value = serde_json::from_str(&text(&out.stdout)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report["denials"], json!(["http://127.0.0.1:9"]));
    assert!(report["error"].as_str().is_some_and(|e| e.contains("HttpRequestDenied")), "{report}");
    // Granted, the request leaves the sandbox (and finds nothing listening): no denial.
    let out = run(
        &env,
        &[
            "plugin",
            "run",
            path_str(&http_probe),
            "--server",
            "probe",
            "--grant-host",
            "http://127.0.0.1:9",
            "--json",
        ],
    );
    let report: Value = serde_json::from_str(&text(&out.stdout)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report["denials"], json!([]), "{report}");
}

#[test]
fn run_refuses_a_kind_mismatch_a_transport_and_bad_tools_files() {
    let env = Env::new();
    let (tools, _) = write_tools(&env);
    let shape = wasm("shape_anthropic");
    let (code, _, err) = fails(
        &env,
        &["plugin", "run", path_str(&shape), "--kind", "name-policy", "--tools", path_str(&tools)],
    );
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        format!(
            "toolport: {}: --kind name-policy does not match the component: it exports the tool-shape world\n",
            shape.display()
        )
    );
    let (code, _, err) =
        fails(&env, &["plugin", "run", path_str(&wasm("transport_tcp")), "--tools", path_str(&tools)]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("is a transport plugin: it moves a server's messages, so it needs a server"),
        "{err}"
    );
    assert!(err.contains("toolport plugin add NAME"), "{err}");

    let bad = env.root().join("bad.json");
    let policy = wasm("policy_namespace");
    for (content, message) in [
        (
            r#"{"tools": [{"name": "a"}, {"description": "no name"}]}"#,
            "tool 1: \"name\" must be a non-empty string",
        ),
        (r#"[{"name": "a", "inputSchema": 3}]"#, "tool 0 (a): \"inputSchema\" must be an object"),
        (r#"{"result": []}"#, "expected an array of tools or a tools/list result {\"tools\": [...]}"),
        ("[{\"name\": \"a\",]", "bad.json:1:15: key must be a string"),
    ] {
        std::fs::write(&bad, content).unwrap_or_else(|e| panic!("{e}"));
        let (code, _, err) = fails(&env, &["plugin", "run", path_str(&policy), "--tools", path_str(&bad)]);
        assert_eq!(code, Some(2), "{content}");
        assert!(err.starts_with(&format!("toolport: {}", bad.display())), "{err}");
        assert!(err.contains(message), "{content}: {err}");
    }
}

#[test]
fn add_then_workspace_set_changes_the_surface_and_unknown_keys_stay() {
    let env = Env::new();
    write_json(
        &env.store(),
        &json!({"x-top": {"kept": true}, "mcpServers": {"demo": demo(&[])}, "plugins": {"x-other": {"kind": "tool-shape", "path": "/nowhere.wasm", "x-mine": 1}}}),
    );
    write_json(&env.workspace_file(), &json!({"enabledMcpServers": ["demo"], "x-ws": [1, 2]}));
    // A relative path is made absolute against the current folder.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let copy = dir.path().join("ns.wasm");
    std::fs::copy(wasm("policy_namespace"), &copy).unwrap_or_else(|e| panic!("{e}"));
    let out = env
        .cmd(["plugin", "add", "ns", "ns.wasm", "--pin", "--memory-mb", "32"])
        .current_dir(dir.path())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with(&format!("plugin added: ns (name-policy, {}) -> ", copy.display()))
    );
    let store = read_json(&env.store());
    let entry = &store["plugins"]["ns"];
    assert_eq!(entry["kind"], "name-policy");
    assert_eq!(entry["path"], path_str(&copy));
    assert_eq!(entry["limits"], json!({"memoryMb": 32}));
    assert_eq!(entry["sha256"].as_str().map(str::len), Some(64));
    assert_eq!(store["x-top"], json!({"kept": true}));
    assert_eq!(store["plugins"]["x-other"]["x-mine"], 1);

    let before = ok(&env, &["tools", "--json"]);
    assert!(before.contains("\"echo\""), "{before}");
    let out = ok(&env, &["workspace", "set", "namePolicy", "ns"]);
    assert_eq!(out, format!("workspace namePolicy: ns (was none) -> {}\n", env.workspace_file().display()));
    ok(&env, &["workspace", "set", "tool-shape", "anthropic"]);
    let ws = read_json(&env.workspace_file());
    assert_eq!(
        ws,
        json!({"enabledMcpServers": ["demo"], "x-ws": [1, 2], "namePolicy": "ns", "toolShape": "anthropic"})
    );
    let tools: Value =
        serde_json::from_str(&ok(&env, &["tools", "--json"])).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> =
        tools.as_array().into_iter().flatten().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"demo__echo") && !names.contains(&"echo"), "{tools}");
    assert!(tools.as_array().into_iter().flatten().all(|t| t.get("input_schema").is_some()), "{tools}");

    // Back to the defaults: no policy, the openai shape.
    let out = ok(&env, &["workspace", "unset", "toolShape"]);
    assert!(out.starts_with("workspace toolShape: unset, now the default openai (was anthropic)"), "{out}");
    ok(&env, &["workspace", "unset", "name-policy"]);
    assert_eq!(read_json(&env.workspace_file()), json!({"enabledMcpServers": ["demo"], "x-ws": [1, 2]}));
    let after = ok(&env, &["tools", "--json"]);
    assert_eq!(after, before);
}

#[test]
fn add_refuses_builtin_names_mismatches_and_existing_entries_unless_forced() {
    let env = Env::new();
    let shape = wasm("shape_anthropic");
    let tcp = wasm("transport_tcp");
    let (code, _, err) = fails(&env, &["plugin", "add", "namespace", path_str(&shape)]);
    assert_eq!(
        (code, err.as_str()),
        (Some(2), "toolport: namespace is a built-in plugin: a configured plugin needs another name\n")
    );
    let (code, _, err) = fails(&env, &["plugin", "add", "stdio", path_str(&tcp)]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("plugin \"stdio\": a transport plugin cannot take a built-in transport name"),
        "{err}"
    );
    let (code, _, err) = fails(&env, &["plugin", "add", "s", path_str(&shape), "--kind", "transport"]);
    assert_eq!(code, Some(2));
    assert!(
        err.ends_with("--kind transport does not match the component: it exports the tool-shape world\n"),
        "{err}"
    );
    let (code, _, err) =
        fails(&env, &["plugin", "add", "s", path_str(&shape), "--grant-dir", "/no/such/folder"]);
    assert_eq!((code, err.as_str()), (Some(2), "toolport: cannot grant /no/such/folder: no such folder\n"));
    assert!(!env.store().exists(), "a refused add writes nothing");

    let data = env.root().join("data");
    std::fs::create_dir_all(&data).unwrap_or_else(|e| panic!("{e}"));
    let grant = format!("{}", data.display());
    ok(
        &env,
        &[
            "plugin",
            "add",
            "s",
            path_str(&shape),
            "--grant-dir",
            &grant,
            "--grant-host",
            "https://api.example.com",
        ],
    );
    let (code, _, err) = fails(&env, &["plugin", "add", "s", path_str(&wasm("shape_openai"))]);
    assert_eq!(code, Some(1));
    assert!(err.starts_with("toolport: plugin already exists: s (use --force"), "{err}");
    let out = ok(&env, &["plugin", "add", "s", path_str(&wasm("shape_openai")), "--force"]);
    assert!(out.starts_with("plugin replaced: s (tool-shape, "), "{out}");
    let store = read_json(&env.store());
    assert_eq!(store["plugins"]["s"], json!({"kind": "tool-shape", "path": path_str(&wasm("shape_openai"))}));
}

#[test]
fn remove_is_refused_while_named_unless_forced_and_unknown_names_fail() {
    let env = Env::new();
    let tcp = wasm("transport_tcp");
    write_json(
        &env.store(),
        &json!({"x-top": 1, "mcpServers": {"t": {"type": "tcpx", "url": "tcp://127.0.0.1:1"}}}),
    );
    ok(&env, &["plugin", "add", "tcpx", path_str(&tcp)]);
    ok(&env, &["plugin", "add", "ns", path_str(&wasm("policy_namespace"))]);
    ok(&env, &["workspace", "set", "namePolicy", "ns"]);

    let (code, _, err) = fails(&env, &["plugin", "remove", "tcpx"]);
    assert_eq!(
        (code, err.as_str()),
        (Some(1), "toolport: plugin tcpx is in use by server t (change those first, or use --force)\n")
    );
    let (code, _, err) = fails(&env, &["plugin", "remove", "ns"]);
    assert_eq!(code, Some(1));
    assert_eq!(
        err,
        format!(
            "toolport: plugin ns is in use by namePolicy of {} (change those first, or use --force)\n",
            env.workspace_file().display()
        )
    );
    let out = run(&env, &["plugin", "remove", "ns", "--force"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "plugin removed: ns\n");
    assert!(
        text(&out.stderr).contains("Warning: ns is still named by namePolicy of "),
        "{}",
        text(&out.stderr)
    );
    let store = read_json(&env.store());
    assert!(store["plugins"].get("ns").is_none() && store["plugins"].get("tcpx").is_some(), "{store}");
    assert_eq!(store["x-top"], 1);
    let (code, _, err) = fails(&env, &["plugin", "remove", "ns"]);
    assert_eq!((code, err.as_str()), (Some(2), "toolport: Unknown plugin: ns\n"));
}

#[test]
fn workspace_set_names_what_exists_when_the_plugin_does_not_fit() {
    let env = Env::new();
    ok(&env, &["plugin", "add", "mine", path_str(&wasm("shape_anthropic"))]);
    let (code, _, err) = fails(&env, &["workspace", "set", "toolShape", "nope"]);
    assert_eq!(
        (code, err.as_str()),
        (
            Some(2),
            "toolport: toolShape \"nope\": unknown plugin (built-in: openai, anthropic; configured: mine)\n"
        )
    );
    let (code, _, err) = fails(&env, &["workspace", "set", "namePolicy", "mine"]);
    assert_eq!(
        (code, err.as_str()),
        (
            Some(2),
            "toolport: namePolicy \"mine\": plugin mine is a tool-shape plugin, not a name-policy plugin (built-in: namespace; configured: none)\n"
        )
    );
    assert!(!env.workspace_file().exists(), "a refused set writes nothing");
    ok(&env, &["workspace", "set", "toolShape", "mine"]);
    assert_eq!(read_json(&env.workspace_file()), json!({"toolShape": "mine"}));
}
