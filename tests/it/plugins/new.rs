//! `toolport plugin new` (issue 16): each kind is scaffolded into a folder outside the
//! repository, built there with one plain `cargo build --release --target wasm32-wasip2`,
//! inspected, and run by the binary against real servers: the name policy and the tool shape on
//! `demo-server`'s tools, the transport to a `demo-server` behind TCP, the sandboxed server on
//! its own; the guard's hooks by the library's plugin host (issue 48). Plus the refusals (a bad
//! name, a folder that is not empty).
//!
//! The five projects share one cargo target folder, `<target>/scaffolds`, so their registry
//! dependencies compile once and later runs are incremental; builds take a lock so they never
//! compete for the 2 cores (cargo would serialise them on its own lock anyway).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;
use toolport::plugins::{GuardAnswer, HookContext, HookKind, PluginHost};
use toolport::store::{Grants, Limits, PluginDef, PluginKind};

use crate::support::common::Env;
use crate::support::runtime::{demo, write_config};
use crate::support::transport::{Exposed, Framing};
use crate::support::wasm::target_dir;

/// Held while cargo builds a scaffold.
static BUILD: Mutex<()> = Mutex::new(());

/// Variables a parent cargo (the test harness, clippy, a wrapper) sets that must not reach a
/// build of somebody's own project: `host/build.rs`'s `SCRUBBED_ENV`, plus every `CARGO_*`
/// the harness exports (`CARGO_HOME` stays: it is where the registry cache is).
const SCRUBBED_ENV: [&str; 12] = [
    "RUSTC_WORKSPACE_WRAPPER",
    "RUSTC_WRAPPER",
    "RUSTFLAGS",
    "RUSTDOCFLAGS",
    "CLIPPY_ARGS",
    "CLIPPY_CONF_DIR",
    "MAKEFLAGS",
    "MFLAGS",
    "RUSTC",
    "RUSTDOC",
    "RUST_LOG",
    "TOOLPORT_HOME",
];

/// A project made by `plugin new` in a temporary folder outside the repository.
struct Scaffold {
    _dir: TempDir,
    project: PathBuf,
    name: String,
    /// How long `plugin new` took.
    created_in: Duration,
}

/// `toolport plugin new NAME --kind KIND --path <temp>/NAME`, which must succeed.
fn scaffold(env: &Env, name: &str, kind: &str) -> Scaffold {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    let project = dir.path().join(name);
    let repo = target_dir().parent().map(Path::to_path_buf).unwrap_or_default();
    assert!(!project.starts_with(&repo), "{} is inside the repository", project.display());
    let started = Instant::now();
    let out = env
        .cmd(["plugin", "new", name, "--kind", kind, "--path"])
        .arg(&project)
        .output()
        .unwrap_or_else(|e| panic!("run plugin new: {e}"));
    let created_in = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "plugin new failed: {stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.starts_with(&format!("created {kind} {name} in {}\n", project.display())), "{stdout}");
    assert!(stdout.contains("cargo build --release --target wasm32-wasip2"), "{stdout}");
    for file in ["Cargo.toml", "Cargo.lock", "rust-toolchain.toml", "rustfmt.toml", ".gitignore", "README.md"]
    {
        assert!(project.join(file).is_file(), "{file} missing");
    }
    Scaffold { _dir: dir, project, name: name.to_string(), created_in }
}

impl Scaffold {
    /// `cargo <args>` in the project with the harness's environment scrubbed and the shared
    /// target folder, which must succeed; how long it took.
    fn cargo(&self, args: &[&str]) -> Duration {
        let mut cmd = Command::new("cargo");
        cmd.args(args).current_dir(&self.project);
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy();
            if key.starts_with("CARGO") && key != "CARGO_HOME" {
                cmd.env_remove(key.as_ref());
            }
        }
        for var in SCRUBBED_ENV {
            cmd.env_remove(var);
        }
        cmd.env("CARGO_TARGET_DIR", target_dir().join("scaffolds"));
        let started = Instant::now();
        let out = cmd.output().unwrap_or_else(|e| panic!("run cargo in {}: {e}", self.project.display()));
        let took = started.elapsed();
        assert!(
            out.status.success(),
            "cargo {args:?} in the {} scaffold failed:\n{}{}",
            self.name,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        took
    }

    /// `cargo build --release --target wasm32-wasip2` (after checking the project is formatted
    /// as `cargo fmt` leaves it); the built component and how long the build took.
    fn build(&self, artifact: &str) -> (PathBuf, Duration) {
        let _held = BUILD.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        self.cargo(&["fmt", "--check"]);
        let took = self.cargo(&["build", "--release", "--target", "wasm32-wasip2"]);
        let wasm = target_dir().join("scaffolds/wasm32-wasip2/release").join(artifact);
        assert!(wasm.is_file(), "{} was not built", wasm.display());
        (wasm, took)
    }
}

/// `toolport plugin inspect FILE --json`'s `world`.
fn world_of(env: &Env, wasm: &Path) -> Value {
    let out = env.cmd(["plugin", "inspect", "--json"]).arg(wasm).output();
    let out = out.unwrap_or_else(|e| panic!("run plugin inspect: {e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let found: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("inspect json: {e}"));
    found["world"].clone()
}

/// `toolport <args>` on `env`, which must succeed; its stdout.
fn run_ok(env: &Env, args: &[&str]) -> String {
    let out = env.cmd(args).output().unwrap_or_else(|e| panic!("run {args:?}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{args:?} failed: {stdout}{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

/// `toolport tools --json` as an array.
fn tools_json(env: &Env) -> Vec<Value> {
    let stdout = run_ok(env, &["tools", "--json"]);
    let tools: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("tools json: {e}: {stdout}"));
    tools.as_array().cloned().unwrap_or_else(|| panic!("not an array: {stdout}"))
}

/// The names of an OpenAI-shaped surface (the default shape).
fn openai_names(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .filter_map(|t| t.pointer("/function/name").and_then(Value::as_str).map(str::to_string))
        .collect()
}

#[test]
fn a_new_name_policy_builds_outside_the_repo_and_renames_and_hides() {
    let env = Env::new();
    let project = scaffold(&env, "my-policy", "name-policy");
    let (wasm, first_build) = project.build("my_policy.wasm");
    assert_eq!(world_of(&env, &wasm), json!("name-policy"));

    write_config(&env, json!({ "demo": demo(&["--extra-tool", "internal_debug"]) }), &["demo"], json!({}));
    // The author's loop: the verdicts on the server's live tools, before any config.
    let file = wasm.to_string_lossy().into_owned();
    let report = run_ok(&env, &["plugin", "run", &file, "--server", "demo"]);
    assert!(report.starts_with("rename echo -> demo_echo\nrename add -> demo_add\n"), "{report}");
    assert!(report.contains("\nhide internal_debug\n"), "{report}");
    assert!(report.ends_with("log info: demo: 7 tools, 1 hidden\n"), "{report}");
    // Ship it: add it to the store, turn it on for this workspace.
    let added = run_ok(&env, &["plugin", "add", "my-policy", &file]);
    assert!(added.contains("my-policy"), "{added}");
    run_ok(&env, &["workspace", "set", "namePolicy", "my-policy"]);
    let started = Instant::now();
    let names = openai_names(&tools_json(&env));
    let first_tools = started.elapsed();
    assert_eq!(names, ["demo_echo", "demo_add", "demo_sleep", "demo_fail", "demo_big", "demo_pid"]);
    // The plugin's `info!` line reaches the host's log (tracing, on stderr with -v).
    let out = env.cmd(["-v", "tools"]).output().unwrap_or_else(|e| panic!("run tools -v: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("demo: 7 tools, 1 hidden"), "{stderr}");
    // A renamed tool still reaches the server under its own name.
    let echoed = run_ok(&env, &["call", "demo_echo", r#"{"message": "through my-policy"}"#]);
    assert!(echoed.contains("through my-policy"), "{echoed}");

    // Warm rebuilds: nothing changed, then an edit of the plugin's source.
    let (_, noop_build) = project.build("my_policy.wasm");
    let lib = project.project.join("src/lib.rs");
    let source = std::fs::read_to_string(&lib).unwrap_or_else(|e| panic!("read lib.rs: {e}"));
    std::fs::write(&lib, source.replace("\"internal_\"", "\"demo_\""))
        .unwrap_or_else(|e| panic!("write lib.rs: {e}"));
    let (_, edit_build) = project.build("my_policy.wasm");
    eprintln!(
        "name-policy scaffold: plugin new {:?}, first build {first_build:?}, first tools --json \
         {first_tools:?}; warm rebuilds: no change {noop_build:?}, after an edit {edit_build:?}",
        project.created_in
    );
}

#[test]
fn a_new_tool_shape_builds_and_shapes_tools_as_declarations() {
    let env = Env::new();
    let project = scaffold(&env, "gemini-shape", "tool-shape");
    let (wasm, _) = project.build("gemini_shape.wasm");
    assert_eq!(world_of(&env, &wasm), json!("tool-shape"));

    write_config(&env, json!({ "demo": demo(&[]) }), &["demo"], json!({}));
    let file = wasm.to_string_lossy().into_owned();
    let tools_file = env.root().join("tools.json");
    let sample = json!({"tools": [{"name": "lookup", "description": "Finds a thing.",
        "inputSchema": {"type": "object", "$schema": "https://json-schema.org/draft/2020-12/schema",
                        "properties": {"q": {"type": "string"}}}}]});
    std::fs::write(&tools_file, sample.to_string()).unwrap_or_else(|e| panic!("write tools.json: {e}"));
    let report = run_ok(&env, &["plugin", "run", &file, "--tools", &tools_file.to_string_lossy(), "--json"]);
    let report: Value = serde_json::from_str(&report).unwrap_or_else(|e| panic!("{e}: {report}"));
    assert_eq!(report["kind"], json!("tool-shape"));
    assert_eq!(
        report["tools"],
        json!([{"name": "lookup", "description": "Finds a thing.",
                "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}])
    );
    run_ok(&env, &["plugin", "add", "gemini-shape", &file]);
    run_ok(&env, &["workspace", "set", "toolShape", "gemini-shape"]);
    let tools = tools_json(&env);
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["echo", "add", "sleep", "fail", "big", "pid"]);
    for tool in &tools {
        let keys: Vec<&String> = tool.as_object().map(|o| o.keys().collect()).unwrap_or_default();
        assert_eq!(keys, ["name", "description", "parameters"], "{tool}");
        assert_eq!(tool["parameters"]["type"], json!("object"), "{tool}");
        assert!(tool["parameters"].get("$schema").is_none(), "{tool}");
    }
    let echo = &tools[0];
    assert!(echo["parameters"]["properties"]["message"].is_object(), "{echo}");
    assert!(echo["description"].as_str().is_some_and(|d| !d.is_empty()), "{echo}");
}

#[test]
fn a_new_transport_builds_and_carries_mcp_over_tcp() {
    let env = Env::new();
    let project = scaffold(&env, "tcp-mine", "transport");
    let (wasm, _) = project.build("tcp_mine.wasm");
    assert_eq!(world_of(&env, &wasm), json!("transport"));

    let exposed = Exposed::start(Framing::Tcp, &["--tools", "2"]);
    write_config(
        &env,
        json!({ "remote": { "type": "tcp-mine", "url": exposed.url() } }),
        &["remote"],
        json!({}),
    );
    run_ok(&env, &["plugin", "add", "tcp-mine", &wasm.to_string_lossy()]);
    let names = openai_names(&tools_json(&env));
    assert_eq!(names, ["echo", "add", "sleep", "fail", "big", "pid", "tool_1", "tool_2"]);
    let echoed = run_ok(&env, &["call", "echo", r#"{"message": "over tcp-mine"}"#]);
    assert!(echoed.contains("over tcp-mine"), "{echoed}");
    let sum = run_ok(&env, &["call", "add", r#"{"a": 2, "b": 40}"#]);
    assert!(sum.contains("42"), "{sum}");
}

#[test]
fn a_new_server_builds_and_serves_its_tools_in_the_sandbox() {
    let env = Env::new();
    let project = scaffold(&env, "hello-server", "server");
    assert!(!project.project.join("toolport-guest").exists(), "a server needs no kit");
    let (wasm, _) = project.build("hello-server.wasm");
    assert_eq!(world_of(&env, &wasm), Value::Null);

    write_config(&env, json!({ "hello": { "type": "wasm", "component": wasm } }), &["hello"], json!({}));
    let names = openai_names(&tools_json(&env));
    assert_eq!(names, ["greet", "add"]);
    let greeting = run_ok(&env, &["call", "greet", r#"{"name": "kit"}"#]);
    assert_eq!(greeting.trim(), "Hello, kit!");
    let sum = run_ok(&env, &["call", "add", r#"{"a": 1.5, "b": 2}"#]);
    assert_eq!(sum.trim(), "3.5");
}

/// The guard scaffold refuses a call whose arguments hold one of its default words, wherever
/// they are, and passes other calls, reads and every answer.
#[tokio::test]
async fn a_new_guard_builds_and_refuses_calls_with_its_words() {
    let env = Env::new();
    let project = scaffold(&env, "word-guard", "guard");
    assert!(project.project.join("toolport-guest/src/hooks.rs").is_file(), "the kit's guard helpers");
    let (wasm, _) = project.build("word_guard.wasm");
    assert_eq!(world_of(&env, &wasm), json!("guard"));
    // Tried by its author through the binary, with no server.
    let wasm_arg = wasm.display().to_string();
    let request =
        r#"{"method": "tools/call", "params": {"name": "echo", "arguments": {"message": "rm -rf /"}}}"#;
    let said = run_ok(&env, &["plugin", "run", &wasm_arg, "--request", request, "--server-name", "demo"]);
    assert_eq!(
        said,
        "request: deny: word-guard: the arguments of echo contain \"rm -rf\"\n\
         log info: refused echo on demo: it contains \"rm -rf\"\n"
    );
    let request =
        r#"{"method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hello"}}}"#;
    assert_eq!(run_ok(&env, &["plugin", "run", &wasm_arg, "--request", request]), "request: pass\n");
    let def = PluginDef {
        name: "word-guard".into(),
        kind: PluginKind::Guard,
        path: wasm.clone(),
        grants: Grants::default(),
        limits: Limits::default(),
        sha256: None,
    };
    let host = PluginHost::new(None, &[def]).unwrap_or_else(|e| panic!("plugin host: {e:#}"));
    let guard = host.guard("word-guard").unwrap_or_else(|e| panic!("load: {e}"));
    let call =
        HookContext { kind: HookKind::Call, server: "demo", target: "echo", subject: None, client: None };
    let params =
        json!({ "name": "echo", "arguments": { "message": "please", "extra": ["DROP TABLE users"] } });
    let answer = guard.on_request(&call, &params).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(answer, GuardAnswer::Deny("word-guard: the arguments of echo contain \"drop table\"".into()));
    let params = json!({ "name": "echo", "arguments": { "message": "hello" } });
    assert_eq!(guard.on_request(&call, &params).await.ok(), Some(GuardAnswer::Pass));
    let read = HookContext { kind: HookKind::Read, target: "file:///rm -rf", ..call };
    assert_eq!(
        guard.on_request(&read, &json!({ "uri": "file:///rm -rf" })).await.ok(),
        Some(GuardAnswer::Pass)
    );
    let result = json!({ "content": [{ "type": "text", "text": "rm -rf /" }], "isError": false });
    assert_eq!(guard.on_response(&call, &params, &result).await.ok(), Some(GuardAnswer::Pass));
}

#[test]
fn plugin_new_refuses_a_bad_name_and_writes_nothing() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    for bad in ["My-Policy", "1policy", "my policy", "_x", "my.policy"] {
        let out = env
            .cmd(["plugin", "new", bad, "--kind", "name-policy", "--path"])
            .arg(dir.path().join("p"))
            .output();
        let out = out.unwrap_or_else(|e| panic!("run: {e}"));
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!(
                "invalid plugin name {bad:?}: use lowercase letters, digits, '-' and '_', starting with a letter"
            )),
            "{stderr}"
        );
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).map(|d| d.flatten().collect()).unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn plugin_new_refuses_a_folder_that_is_not_empty_and_leaves_it_alone() {
    let env = Env::new();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    let taken = dir.path().join("taken");
    std::fs::create_dir(&taken).unwrap_or_else(|e| panic!("mkdir: {e}"));
    std::fs::write(taken.join("notes.txt"), "mine").unwrap_or_else(|e| panic!("write: {e}"));
    let out = env.cmd(["plugin", "new", "shape", "--kind", "tool-shape", "--path"]).arg(&taken).output();
    let out = out.unwrap_or_else(|e| panic!("run: {e}"));
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{} already exists and is not empty: nothing written", taken.display())),
        "{stderr}"
    );
    let inside: Vec<_> =
        std::fs::read_dir(&taken).map(|d| d.flatten().map(|e| e.file_name()).collect()).unwrap_or_default();
    assert_eq!(inside, ["notes.txt"]);
    // Nor a staging folder left beside it.
    let beside: Vec<_> = std::fs::read_dir(dir.path())
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert_eq!(beside, ["taken"]);

    // An empty folder is taken as is.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap_or_else(|e| panic!("mkdir: {e}"));
    let out = env.cmd(["plugin", "new", "shape", "--kind", "tool-shape", "--path"]).arg(&empty).output();
    let out = out.unwrap_or_else(|e| panic!("run: {e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(empty.join("src/lib.rs").is_file());
    assert!(empty.join("toolport-guest/wit/since_v0.1.0/worlds.wit").is_file());
}
