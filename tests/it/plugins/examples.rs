//! The contract as one binary WIT package (`toolport plugin wit`), and plugins written in other
//! languages against it: `plugins/examples/policy-python` and `guard-python` (componentize-py,
//! built from that package), `plugins/examples/shape-js` and `guard-js` (ComponentizeJS), each
//! built by `plugins/examples/build.sh` and inspected. The policy and the shape are configured in
//! a temporary home and run by the built binary on `demo-server`; the guards' hooks are run by
//! the library's plugin host (the binary's `plugin run` for guards is still to come). A missing
//! toolchain or a failed build fails these tests.
//!
//! The components are 12 to 18 MB (an interpreter each): a debug-built host compiles one in
//! about 45 s on 2 cores. So each is compiled once into a kept home under
//! `<target>/wasm-peers/` (as `support::wasm` does for the `wasm` servers) and each test's home
//! gets a copy of that compiled cache and its key; `plugin inspect` still compiles it in full.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolport::plugins::{
    GuardAnswer, GuardPlugin, HookContext, HookKind, PluginHost, WIT_PACKAGE, WIT_VERSION,
};
use toolport::store::{Grants, Limits, PluginDef, PluginKind};

use crate::support::common::{Env, toolport_path};
use crate::support::runtime::{demo, write_config};
use crate::support::wasm::{built_by, copy_files, kept_home, target_dir};

/// A command once the compiled cache is there.
const WARM: Duration = Duration::from_secs(120);

/// Builds (or finds up to date) one example; its path. Any failure fails the test.
fn example(name: &str) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins/examples/build.sh");
    let started = Instant::now();
    let path = built_by(&script, &[name]);
    eprintln!("examples: build.sh {name} took {:?}", started.elapsed());
    path
}

/// `plugin inspect --json` of `component`: its world and contract version.
fn inspected(component: &Path) -> (Value, Value) {
    let started = Instant::now();
    let out = Command::new(toolport_path())
        .args(["plugin", "inspect", "--json"])
        .arg(component)
        .output()
        .unwrap_or_else(|e| panic!("toolport plugin inspect: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "inspect failed:\n{stdout}{}", String::from_utf8_lossy(&out.stderr));
    eprintln!("examples: plugin inspect {} took {:?}", component.display(), started.elapsed());
    let found: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("inspect --json: {e}:\n{stdout}"));
    assert_eq!(found["compatible"], json!(true), "{stdout}");
    (found["world"].clone(), found["version"].clone())
}

/// The store's `plugins` entry for `component`, as a `kind` plugin named `name`.
fn store_with_plugin(env: &Env, name: &str, kind: &str, component: &Path) {
    let mut store: Value = serde_json::from_slice(&std::fs::read(env.store()).unwrap_or_default())
        .unwrap_or_else(|e| panic!("read store: {e}"));
    store["plugins"] = json!({ name: { "kind": kind, "path": component } });
    std::fs::write(env.store(), store.to_string()).unwrap_or_else(|e| panic!("write store: {e}"));
}

/// Components whose kept home this process has warmed; held while warming (one at a time).
static WARMED: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// Gives `env`'s home the compiled cache of `component`. It is compiled in its kept home, by
/// `tools` with `env`'s config there: a cold compile the first time, a cache hit (seconds)
/// once an earlier run did it.
fn seed(env: &Env, component: &Path) {
    let mut warmed = WARMED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let kept = kept_home(component);
    if !warmed.contains(component) {
        let workspace = kept.join("workspace");
        std::fs::create_dir_all(workspace.join(".toolport"))
            .unwrap_or_else(|e| panic!("create {}: {e}", workspace.display()));
        std::fs::copy(env.store(), kept.join("mcp.json")).unwrap_or_else(|e| panic!("copy store: {e}"));
        std::fs::copy(env.workspace_file(), workspace.join(".toolport/workspace.json"))
            .unwrap_or_else(|e| panic!("copy workspace: {e}"));
        let started = Instant::now();
        let out = Command::new(toolport_path())
            .arg("--home")
            .arg(&kept)
            .arg("--workspace")
            .arg(&workspace)
            .arg("tools")
            .env_remove("RUST_LOG")
            .env_remove("TOOLPORT_HOME")
            .output()
            .unwrap_or_else(|e| panic!("warm-up in {}: {e}", kept.display()));
        eprintln!("examples: warm-up of {} took {:?}", component.display(), started.elapsed());
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "warm-up of {} failed ({}):\n{}",
            component.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        warmed.insert(component.to_path_buf());
    }
    copy_files(&kept.join("cache"), &env.home().join("cache"));
    std::fs::copy(kept.join("cache.key"), env.home().join("cache.key"))
        .unwrap_or_else(|e| panic!("copy {}: {e}", kept.join("cache.key").display()));
}

/// `toolport <args…>` in `env`: (stdout, stderr), after checking it succeeded.
fn run(env: &Env, args: &[&str]) -> (String, String) {
    let started = Instant::now();
    let out = env.cmd(args).timeout(WARM).output().unwrap_or_else(|e| panic!("toolport {args:?}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    eprintln!("examples: toolport {args:?} (cached) took {:?}", started.elapsed());
    assert!(out.status.success(), "toolport {args:?} failed ({}):\n{stdout}{stderr}", out.status);
    (stdout, stderr)
}

/// `plugin wit` writes the contract as one binary WIT package that decodes to
/// `toolport:plugin@<version>` with its four worlds, under its default name in the current
/// folder; it refuses to replace a file unless `--force`.
#[test]
fn plugin_wit_writes_the_contract_as_one_wit_package() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let out = Command::new(toolport_path())
        .args(["plugin", "wit"])
        .current_dir(dir.path())
        .output()
        .unwrap_or_else(|e| panic!("toolport plugin wit: {e}"));
    let default_name = format!("toolport-plugin@{WIT_VERSION}.wasm");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{default_name}\n"));
    let written = dir.path().join(&default_name);
    let bytes = std::fs::read(&written).unwrap_or_else(|e| panic!("read {}: {e}", written.display()));

    let decoded = wit_parser::decoding::decode(&bytes).unwrap_or_else(|e| panic!("decode: {e:#}"));
    let wit_parser::decoding::DecodedWasm::WitPackage(resolve, package) = decoded else {
        panic!("{default_name} is a component, not a WIT package");
    };
    let package = &resolve.packages[package];
    assert_eq!(package.name.to_string(), format!("{WIT_PACKAGE}@{WIT_VERSION}"));
    let worlds: BTreeSet<&str> = package.worlds.keys().map(String::as_str).collect();
    assert_eq!(worlds, BTreeSet::from(["guard", "name-policy", "tool-shape", "transport"]));
    let interfaces: BTreeSet<&str> = package.interfaces.keys().map(String::as_str).collect();
    assert_eq!(
        interfaces,
        BTreeSet::from(["channel", "connection", "hooks", "log", "policy", "shape", "types"])
    );

    // The same bytes as the copy the example build scripts use.
    let copy = target_dir().join("plugins/wit").join(&default_name);
    assert_eq!(std::fs::read(&copy).unwrap_or_else(|e| panic!("read {}: {e}", copy.display())), bytes);

    let other = dir.path().join("contract.wasm");
    std::fs::write(&other, b"mine").unwrap_or_else(|e| panic!("write: {e}"));
    let refused = Command::new(toolport_path())
        .args(["plugin", "wit", "--out"])
        .arg(&other)
        .output()
        .unwrap_or_else(|e| panic!("toolport plugin wit: {e}"));
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr),
        format!("toolport: {} exists: pass --force to replace it\n", other.display())
    );
    assert_eq!(std::fs::read(&other).unwrap_or_default(), b"mine", "the file is untouched");
    let forced = Command::new(toolport_path())
        .args(["plugin", "wit", "--force", "--out"])
        .arg(&other)
        .output()
        .unwrap_or_else(|e| panic!("toolport plugin wit: {e}"));
    assert!(forced.status.success(), "{}", String::from_utf8_lossy(&forced.stderr));
    assert_eq!(std::fs::read(&other).unwrap_or_default(), bytes);
}

/// The Python name policy, built from the binary WIT package: hides `internal_`/`debug_`
/// tools, keeps an already namespaced name, renames the rest to `<server>_<tool>` in lower
/// case, and its log line reaches the host's log tagged with the plugin's name.
#[test]
fn a_python_name_policy_keeps_renames_and_hides_and_logs() {
    let component = example("policy-python");
    assert_eq!(inspected(&component), (json!("name-policy"), json!(WIT_VERSION)));

    let env = Env::new();
    let server =
        demo(&["--extra-tool", "internal_reset", "--extra-tool", "demo_status", "--extra-tool", "Fetch-URL"]);
    write_config(&env, json!({ "demo": server }), &["demo"], json!({ "namePolicy": "platform" }));
    store_with_plugin(&env, "platform", "name-policy", &component);
    seed(&env, &component);

    let (stdout, stderr) = run(&env, &["-v", "tools", "--json"]);
    let tools: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("tools --json: {e}:\n{stdout}"));
    let names: Vec<&str> = tools
        .as_array()
        .map(|t| t.iter().filter_map(|t| t.pointer("/function/name").and_then(Value::as_str)).collect())
        .unwrap_or_default();
    assert_eq!(
        names,
        [
            "demo_echo",
            "demo_add",
            "demo_sleep",
            "demo_fail",
            "demo_big",
            "demo_pid",
            "demo_status",
            "demo_fetch_url"
        ],
        "{stdout}"
    );
    let logged: Vec<&str> = stderr.lines().filter(|l| l.contains("toolport::plugin::log")).collect();
    assert_eq!(logged.len(), 1, "one log line per review:\n{stderr}");
    assert!(
        logged[0].contains(" INFO ")
            && logged[0].ends_with("reviewed 9 tools of demo: kept 1, renamed 7, hid 1 plugin=\"platform\""),
        "{stderr}"
    );
    // A renamed tool is still called by its new name.
    let (echoed, _) = run(&env, &["call", "demo_echo", r#"{"message": "through python"}"#]);
    assert_eq!(echoed, "through python\n");
}

/// The JavaScript tool shape gives every tool as a Gemini function declaration: only the
/// schema keywords Gemini accepts (`x-mcp-header` is dropped), no `parameters` without
/// properties.
#[test]
fn a_javascript_tool_shape_gives_gemini_declarations() {
    let component = example("shape-js");
    assert_eq!(inspected(&component), (json!("tool-shape"), json!(WIT_VERSION)));

    let env = Env::new();
    write_config(
        &env,
        json!({ "demo": demo(&["--header-tools"]) }),
        &["demo"],
        json!({ "toolShape": "gemini" }),
    );
    store_with_plugin(&env, "gemini", "tool-shape", &component);
    seed(&env, &component);

    let (stdout, stderr) = run(&env, &["tools", "--json"]);
    assert_eq!(stderr, "");
    let tools: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("tools --json: {e}:\n{stdout}"));
    let object = |properties: Value, required: &[&str]| {
        let mut schema = json!({ "type": "object", "properties": properties });
        if !required.is_empty() {
            schema["required"] = json!(required);
        }
        schema
    };
    let region = object(json!({ "region": { "type": "string" } }), &[]);
    assert_eq!(
        tools,
        json!([
            { "name": "echo", "description": "Returns its message",
              "parameters": object(json!({ "message": { "type": "string" } }), &["message"]) },
            { "name": "add", "description": "Adds two numbers",
              "parameters": object(json!({ "a": { "type": "number" }, "b": { "type": "number" } }), &["a", "b"]) },
            { "name": "sleep", "description": "Waits ms milliseconds, then answers",
              "parameters": object(json!({ "ms": { "type": "integer", "minimum": 0 } }), &["ms"]) },
            { "name": "fail", "description": "Always returns an error result (isError)",
              "parameters": object(json!({ "message": { "type": "string" } }), &[]) },
            { "name": "big", "description": "Returns a large text (size bytes)",
              "parameters": object(json!({ "size": { "type": "integer", "minimum": 0 } }), &[]) },
            { "name": "pid", "description": "Returns this server's process id" },
            { "name": "headed", "description": "Mirrors region into Mcp-Param-Region", "parameters": region },
            { "name": "misheaded", "description": "Its x-mcp-header is empty", "parameters": region },
        ]),
        "{stdout}"
    );
}

/// The guard example `component`, loaded by the library's plugin host with its log lines kept.
/// Its compiled code is cached in a folder of its kept home, so only the first run after a
/// rebuild of the example compiles it.
fn guard_plugin(component: &Path) -> GuardPlugin {
    let def = PluginDef {
        name: "example".into(),
        kind: PluginKind::Guard,
        path: component.to_path_buf(),
        grants: Grants::default(),
        limits: Limits::default(),
        sha256: None,
    };
    let cache = kept_home(component).join("library-cache");
    let started = Instant::now();
    let host = PluginHost::with_caches(Some(cache.clone()), Some(cache), &[def])
        .unwrap_or_else(|e| panic!("plugin host: {e:#}"));
    let guard = host.guard("example").unwrap_or_else(|e| panic!("load {}: {e}", component.display()));
    eprintln!("examples: loading {} as a guard took {:?}", component.display(), started.elapsed());
    guard.keep_logs();
    guard
}

/// `toolport plugin run <component> <args…>`, which must succeed: its stdout. It runs in a home
/// kept beside the example, so its compiled code is cached from one test run to the next.
fn plugin_run(component: &Path, args: &[&str]) -> String {
    let home = kept_home(component).join("run-home");
    std::fs::create_dir_all(&home).unwrap_or_else(|e| panic!("create {}: {e}", home.display()));
    let started = Instant::now();
    let out = Command::new(toolport_path())
        .arg("--home")
        .arg(&home)
        .arg("--workspace")
        .arg(&home)
        .args(["plugin", "run"])
        .arg(component)
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("TOOLPORT_HOME")
        .output()
        .unwrap_or_else(|e| panic!("plugin run {}: {e}", component.display()));
    eprintln!("examples: plugin run {} took {:?}", component.display(), started.elapsed());
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "plugin run {args:?}: {stdout}{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

/// The context of a hook about `kind` of `target` on server `server`.
fn hook<'a>(kind: HookKind, server: &'a str, target: &'a str) -> HookContext<'a> {
    HookContext { kind, server, target, subject: None, client: Some("it") }
}

/// The Python guard refuses a `tools/call` whose `query` holds a destructive SQL statement (not
/// one inside a string or a comment), logs the refusal, and passes every other request and every
/// answer unchanged.
#[tokio::test]
async fn a_python_guard_refuses_a_destructive_query_and_passes_the_rest() {
    let component = example("guard-python");
    assert_eq!(inspected(&component), (json!("guard"), json!(WIT_VERSION)));
    let request = r#"{"method": "tools/call", "params": {"name": "query", "arguments": {"query": "DROP TABLE users"}}}"#;
    assert_eq!(
        plugin_run(&component, &["--request", request, "--server-name", "db"]),
        "request: deny: DROP statements are not allowed through query; ask a person to run it\n\
         log info: refused query on db: SQL DROP\n"
    );
    let request =
        r#"{"method": "tools/call", "params": {"name": "query", "arguments": {"query": "select 1"}}}"#;
    assert_eq!(plugin_run(&component, &["--request", request]), "request: pass\n");
    let guard = guard_plugin(&component);
    let call = hook(HookKind::Call, "db", "query");
    let on = async |query: Value| {
        let params = json!({ "name": "query", "arguments": { "query": query } });
        guard.on_request(&call, &params).await.unwrap_or_else(|e| panic!("{query}: {e}"))
    };
    for (query, keyword) in [("DROP TABLE users", "DROP"), ("select 1; truncate logs -- nightly", "TRUNCATE")]
    {
        assert_eq!(
            on(json!(query)).await,
            GuardAnswer::Deny(format!(
                "{keyword} statements are not allowed through query; ask a person to run it"
            )),
            "{query}"
        );
    }
    for query in [
        json!("select * from events where note = 'drop table x'"),
        json!("select 1 /* truncate later */"),
        json!("select dropped_at from t"),
        json!(42),
    ] {
        assert_eq!(on(query.clone()).await, GuardAnswer::Pass, "{query}");
    }
    let read = hook(HookKind::Read, "db", "file:///drop");
    let answer = guard.on_request(&read, &json!({ "uri": "file:///drop" })).await;
    assert_eq!(answer.ok(), Some(GuardAnswer::Pass));
    let result = json!({ "content": [{ "type": "text", "text": "DROP TABLE done" }], "isError": false });
    let params = json!({ "name": "query", "arguments": { "query": "drop table t" } });
    assert_eq!(guard.on_response(&call, &params, &result).await.ok(), Some(GuardAnswer::Pass));
    let logged: Vec<String> =
        guard.log_lines().iter().map(|l| format!("{} {}", l.level, l.message)).collect();
    assert_eq!(logged, ["info refused query on db: SQL DROP", "info refused query on db: SQL TRUNCATE"]);
}

/// The JavaScript guard replaces email addresses with `[email]` in what a model reads of an
/// answer (a call's text and structured content, a read's text, a prompt's text messages),
/// keeping the answer's shape, logs how many, and passes answers without one and every request.
#[tokio::test]
async fn a_javascript_guard_redacts_email_addresses_in_answers() {
    let component = example("guard-js");
    assert_eq!(inspected(&component), (json!("guard"), json!(WIT_VERSION)));
    let request = r#"{"method": "tools/call", "params": {"name": "lookup", "arguments": {}}}"#;
    let result = r#"{"content": [{"type": "text", "text": "mail ada@example.com"}], "isError": false}"#;
    let said =
        plugin_run(&component, &["--request", request, "--result", result, "--server-name", "crm", "--json"]);
    let said: Value = serde_json::from_str(&said).unwrap_or_else(|e| panic!("{e}: {said}"));
    assert_eq!(said["request"], json!({"decision": "pass"}), "{said}");
    assert_eq!(
        said["response"],
        json!({"decision": "mutate", "value": {"content": [{"type": "text", "text": "mail [email]"}], "isError": false}}),
        "{said}"
    );
    assert_eq!(
        said["logs"],
        json!([{"level": "info", "message": "redacted 1 email address(es) in lookup of crm"}])
    );
    let guard = guard_plugin(&component);
    let call = hook(HookKind::Call, "crm", "lookup");
    let params = json!({ "name": "lookup", "arguments": { "who": "ada@example.com" } });
    assert_eq!(guard.on_request(&call, &params).await.ok(), Some(GuardAnswer::Pass), "requests pass");
    let result = json!({
        "content": [
            { "type": "text", "text": "Write to ada@example.com or bob.smith+crm@mail.example.org." },
            { "type": "image", "data": "aGk=", "mimeType": "image/png" }
        ],
        "structuredContent": { "owner": { "name": "Ada", "emails": ["ada@example.com"] } },
        "isError": false
    });
    let redacted = json!({
        "content": [
            { "type": "text", "text": "Write to [email] or [email]." },
            { "type": "image", "data": "aGk=", "mimeType": "image/png" }
        ],
        "structuredContent": { "owner": { "name": "Ada", "emails": ["[email]"] } },
        "isError": false
    });
    let answer = guard.on_response(&call, &params, &result).await;
    assert_eq!(answer.ok(), Some(GuardAnswer::Mutate(redacted)));
    let plain = json!({ "content": [{ "type": "text", "text": "no address here" }], "isError": false });
    assert_eq!(guard.on_response(&call, &params, &plain).await.ok(), Some(GuardAnswer::Pass));

    let read = hook(HookKind::Read, "crm", "crm://people/ada");
    let contents = json!({ "contents": [{ "uri": "crm://people/ada", "mimeType": "text/plain", "text": "ada@example.com" }] });
    let answer = guard.on_response(&read, &json!({ "uri": "crm://people/ada" }), &contents).await;
    let expected =
        json!({ "contents": [{ "uri": "crm://people/ada", "mimeType": "text/plain", "text": "[email]" }] });
    assert_eq!(answer.ok(), Some(GuardAnswer::Mutate(expected)));
    let prompt = hook(HookKind::Prompt, "crm", "follow-up");
    let messages = |text: &str| json!({ "description": "d", "messages": [{ "role": "user", "content": { "type": "text", "text": text } }] });
    let answer =
        guard.on_response(&prompt, &json!({ "name": "follow-up" }), &messages("Ask ada@example.com")).await;
    assert_eq!(answer.ok(), Some(GuardAnswer::Mutate(messages("Ask [email]"))));

    let logged: Vec<String> =
        guard.log_lines().iter().map(|l| format!("{} {}", l.level, l.message)).collect();
    assert_eq!(
        logged,
        [
            "info redacted 3 email address(es) in lookup of crm",
            "info redacted 1 email address(es) in crm://people/ada of crm",
            "info redacted 1 email address(es) in follow-up of crm",
        ]
    );
}
