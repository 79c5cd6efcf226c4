//! The contract as one binary WIT package (`toolport plugin wit`), and plugins written in other
//! languages against it: `plugins/examples/policy-python` (componentize-py, built from that
//! package) and `plugins/examples/shape-js` (ComponentizeJS), each built by
//! `plugins/examples/build.sh`, inspected, configured in a temporary home and run by the built
//! binary on `demo-server`. A missing toolchain or a failed build fails these tests.
//!
//! Both components are 12 to 18 MB (an interpreter each): a debug-built host compiles one in
//! about 45 s on 2 cores. So each is compiled once into a kept home under
//! `<target>/wasm-peers/` (as `support::wasm` does for the `wasm` servers) and each test's home
//! gets a copy of that compiled cache and its key; `plugin inspect` still compiles it in full.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolport::plugins::{WIT_PACKAGE, WIT_VERSION};

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
/// `toolport:plugin@<version>` with its three worlds, under its default name in the current
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
    assert_eq!(worlds, BTreeSet::from(["name-policy", "tool-shape", "transport"]));
    let interfaces: BTreeSet<&str> = package.interfaces.keys().map(String::as_str).collect();
    assert_eq!(interfaces, BTreeSet::from(["channel", "connection", "log", "policy", "shape", "types"]));

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
