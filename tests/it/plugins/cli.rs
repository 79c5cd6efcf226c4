//! `toolport plugin list|inspect` as a user runs them: the built binary on a temporary home
//! (`plugin grant|revoke|pin` are in `config/grants.rs`).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toolport::test_support::PLUGIN_BUILD_DIR;

use crate::support::common::Env;

fn wasm(stem: &str) -> PathBuf {
    Path::new(PLUGIN_BUILD_DIR).join(format!("{stem}.wasm"))
}

fn stdout_of(cmd: &mut assert_cmd::Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn list_shows_builtins_first_then_configured_plugins() {
    let env = Env::new();
    std::fs::write(
        env.store(),
        json!({"plugins": {"tcp": {
            "kind": "transport", "path": "plugins/tcp.wasm",
            "grants": {"hosts": ["tcp://127.0.0.1:*"], "env": ["TOKEN"]},
            "limits": {"memoryMb": 32}
        }}})
        .to_string(),
    )
    .unwrap();
    let text = stdout_of(&mut env.cmd(["plugin", "list"]));
    let lines: Vec<&str> = text.lines().collect();
    // Header, the built-ins (more may join the three below), then the configured entry.
    assert!(lines[1..lines.len() - 1].iter().all(|l| l.contains(" built-in ")), "{text}");
    assert!(lines[0].starts_with("NAME"), "{text}");
    assert!(
        lines[1].starts_with("openai") && lines[1].contains("tool-shape") && lines[1].contains("built-in")
    );
    assert!(lines[2].starts_with("anthropic") && lines[2].contains("tool-shape"));
    assert!(lines[3].starts_with("namespace") && lines[3].contains("name-policy"));
    assert!(lines[1].contains("none") && lines[1].contains("64 MiB, 5000 ms, 80% CPU"), "{text}");
    // USES (what its imports would reach) stands next to GRANTS: the built-in SSE speaks HTTP.
    assert!(lines[0].contains("  USES  ") && lines[0].find("USES") < lines[0].find("GRANTS"), "{text}");
    let sse = lines.iter().find(|l| l.starts_with("sse ")).unwrap_or_else(|| panic!("{text}"));
    assert!(sse.contains(" http "), "{sse}");
    let tcp = lines[lines.len() - 1];
    assert!(tcp.starts_with("tcp") && tcp.contains("transport"), "{tcp}");
    assert!(tcp.contains(&env.home().join("plugins/tcp.wasm").display().to_string()), "{tcp}");
    assert!(
        tcp.contains("hosts: tcp://127.0.0.1:*; env: TOKEN") && tcp.contains("32 MiB, 5000 ms, 80% CPU"),
        "{tcp}"
    );
    assert!(tcp.contains("? (cannot read: "), "a missing file is said, not hidden: {tcp}");

    let json: Value = serde_json::from_str(&stdout_of(&mut env.cmd(["plugin", "list", "--json"]))).unwrap();
    let rows = json.as_array().unwrap();
    assert!(rows[..rows.len() - 1].iter().all(|r| r["builtin"] == true), "{json}");
    assert_eq!(
        rows[0],
        json!({"name": "openai", "kind": "tool-shape", "builtin": true, "path": null, "uses": ["env"],
               "grants": {"dirs": [], "hosts": [], "env": []}, "limits": {"memoryMb": 64, "callMs": 5000, "cpuPercent": 80},
               "sha256": null})
    );
    let tcp = &rows[rows.len() - 1];
    assert_eq!(tcp["name"], "tcp");
    assert_eq!(tcp["builtin"], false);
    assert_eq!(tcp["limits"], json!({"memoryMb": 32, "callMs": 5000, "cpuPercent": 80}));
}

#[test]
fn inspect_shows_world_version_imports_and_exports() {
    let env = Env::new();
    let file = wasm("fixture_hostile");
    let text = stdout_of(env.cmd(["plugin", "inspect"]).arg(&file));
    assert!(text.contains("world: tool-shape\n"), "{text}");
    assert!(text.lines().nth(1).is_some_and(|l| l.starts_with("sha256: ") && l.len() == 8 + 64), "{text}");
    assert!(text.contains("version: toolport:plugin@0.1.1 (served by this toolport)\n"), "{text}");
    assert!(text.contains("  wasi:sockets/tcp@"), "{text}");
    assert!(text.contains("  wasi:filesystem/preopens@"), "{text}");
    assert!(text.contains("other imports:\n  toolport:plugin/log@0.1.1\n"), "{text}");
    assert!(text.contains("exports:\n  toolport:plugin/shape@0.1.1\n"), "{text}");
    assert!(text.ends_with("\nuses: dirs env sockets\n"), "not configured, so no grants: {text}");
    // Configured, the entry's grants show beside what it uses.
    let store =
        json!({"plugins": {"hostile": {"kind": "tool-shape", "path": file, "grants": {"env": ["HOME"]}}}});
    std::fs::write(env.store(), store.to_string()).unwrap();
    let text = stdout_of(env.cmd(["plugin", "inspect"]).arg(&file));
    assert!(
        text.ends_with("\nuses: dirs env sockets\nconfigured as hostile (tool-shape): grants env: HOME\n"),
        "{text}"
    );

    let json: Value = serde_json::from_str(&stdout_of(
        env.cmd(["plugin", "inspect", "--json"]).arg(wasm("policy_namespace")),
    ))
    .unwrap();
    assert_eq!(json["world"], "name-policy");
    assert_eq!(json["version"], "0.1.1");
    assert_eq!(json["compatible"], true);
    assert_eq!(json["exports"], json!(["toolport:plugin/policy@0.1.1"]));
    assert_eq!(json["uses"], json!(["env"]));
    assert_eq!(json["configuredAs"], json!([]));
}

#[test]
fn inspect_flags_a_future_version_and_rejects_junk() {
    let env = Env::new();
    let text = stdout_of(env.cmd(["plugin", "inspect"]).arg(wasm("fixture_future_shape")));
    assert!(
        text.contains(
            "version: toolport:plugin@1.0.0 (NOT served: this toolport serves toolport:plugin@0.1.1)"
        ),
        "{text}"
    );
    let junk = env.root().join("junk.wasm");
    std::fs::write(&junk, "not wasm").unwrap();
    let out = env.cmd(["plugin", "inspect"]).arg(&junk).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "toolport: {}: not a WebAssembly component: it does not start with the WebAssembly magic number\n",
            junk.display()
        )
    );
    let out = env.cmd(["plugin", "inspect", "/nonexistent/x.wasm"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("toolport: cannot read /nonexistent/x.wasm: "));
}
