//! Fixtures for the fault suite: a misbehaving server (`tests/faults/fault_server.py`, Python
//! standard library only) or a misbehaving plugin next to a healthy `demo-server`, a runtime
//! started on that config, and a snapshot proving the config files were never touched.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toolport::{Runtime, RuntimeOptions, ServerState, ServerStatus, load_resolved};

use crate::support::common::Env;
use crate::support::runtime::{call_text, demo, paths};

/// The healthy neighbour's name and tool prefix.
pub const OK: &str = "ok";

/// `tests/faults/fault_server.py`.
pub fn fault_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("faults/fault_server.py")
}

/// A stdio definition running the fault server in `mode` with `extra` arguments.
pub fn fault(mode: &str, extra: &[&str]) -> Value {
    let mut args = vec![fault_script().display().to_string(), "--mode".into(), mode.into()];
    args.extend(extra.iter().map(|a| a.to_string()));
    json!({ "type": "stdio", "command": "python3", "args": args })
}

/// The healthy neighbour: `demo-server` with its tools prefixed `ok_`.
pub fn healthy() -> Value {
    demo(&["--prefix", "ok_"])
}

/// Both config files, as bytes, taken before the runtime starts.
pub struct Snapshot {
    store: Vec<u8>,
    workspace: Vec<u8>,
}

impl Snapshot {
    pub fn take(env: &Env) -> Self {
        let read = |p: PathBuf| std::fs::read(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()));
        Self { store: read(env.store()), workspace: read(env.workspace_file()) }
    }

    /// Panics unless both files are byte-for-byte what they were.
    pub fn assert_unchanged(&self, env: &Env) {
        let now = Self::take(env);
        assert!(now.store == self.store, "the global store changed");
        assert!(now.workspace == self.workspace, "the workspace file changed");
    }
}

/// Writes the store (`servers` in the given order, `plugins`) and the workspace file enabling
/// every server, with `extra` workspace keys; returns the snapshot of both.
pub fn write(env: &Env, servers: &[(&str, Value)], plugins: Value, extra: Value) -> Snapshot {
    let mut defs = serde_json::Map::new();
    for (name, def) in servers {
        defs.insert((*name).to_string(), def.clone());
    }
    let store = json!({ "mcpServers": defs, "plugins": plugins });
    std::fs::write(env.store(), serde_json::to_vec_pretty(&store).unwrap_or_default())
        .unwrap_or_else(|e| panic!("write store: {e}"));
    let enabled: Vec<&str> = servers.iter().map(|(n, _)| *n).collect();
    let mut workspace = json!({ "enabledMcpServers": enabled });
    if let (Some(w), Some(extra)) = (workspace.as_object_mut(), extra.as_object()) {
        w.extend(extra.clone());
    }
    let file = env.workspace_file();
    std::fs::create_dir_all(file.parent().unwrap_or_else(|| panic!("no parent")))
        .unwrap_or_else(|e| panic!("mkdir: {e}"));
    std::fs::write(&file, serde_json::to_vec_pretty(&workspace).unwrap_or_default())
        .unwrap_or_else(|e| panic!("write workspace: {e}"));
    Snapshot::take(env)
}

/// Writes `bad` (named `bad`, defined first so a failure cannot starve a later server) next to
/// the healthy neighbour and returns the snapshot.
pub fn write_pair(env: &Env, bad: Value) -> Snapshot {
    write(env, &[("bad", bad), (OK, healthy())], json!({}), json!({}))
}

/// A runtime on `env`'s config. The plugin cache is shared by the whole suite: compiling the
/// built-in shape with a debug-built cranelift takes seconds, and the cache is what a real
/// home would hold after the first run.
pub async fn start(env: &Env) -> Runtime {
    let resolved = load_resolved(&paths(env), &Default::default()).unwrap_or_else(|e| panic!("load: {e}"));
    let cache = std::env::temp_dir().join("toolport-it-faults-cache");
    let options = RuntimeOptions { cache_dir: Some(cache), ..RuntimeOptions::default() };
    Runtime::start(resolved, options).await.unwrap_or_else(|e| panic!("start: {e:#}"))
}

/// The status row of `name`.
pub fn row(runtime: &Runtime, name: &str) -> ServerStatus {
    runtime.status().into_iter().find(|r| r.name == name).unwrap_or_else(|| panic!("no row {name}"))
}

/// Asserts `name` is in `error` with exactly `message`, offers no tools, and is warned about
/// (the warning clips the message to the status view's 120 columns, except a report that ends
/// with its fix commands: a reserved name, a clash, a connect timeout).
pub fn assert_failed(runtime: &Runtime, name: &str, message: &str) {
    let r = row(runtime, name);
    assert_eq!((r.state, r.error.as_deref(), r.tools), (ServerState::Error, Some(message), 0), "{name}");
    let with_fix =
        ["MCP tool name conflict", "connect timed out after "].iter().any(|p| message.starts_with(p));
    let shown = if message.chars().count() > 120 && !with_fix {
        format!("{}...", message.chars().take(117).collect::<String>())
    } else {
        message.to_string()
    };
    let warning = format!("Warning: MCP unavailable: {name} ({shown})");
    assert!(runtime.warnings().contains(&warning), "{:?}", runtime.warnings());
}

/// Asserts the healthy neighbour is `connected` with its six tools and still answers.
pub async fn assert_neighbour_fine(runtime: &Runtime) {
    let r = row(runtime, OK);
    assert_eq!((r.state, r.tools, r.error.as_deref()), (ServerState::Connected, 6, None));
    assert_eq!(call_text(runtime, "ok_echo", r#"{"message":"still fine"}"#).await, "still fine");
}
