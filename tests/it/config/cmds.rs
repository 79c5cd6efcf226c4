//! `toolport mcp list|add|add-json|get|remove|enable|disable` on a temporary home and
//! workspace: exact messages and exit statuses, and what the files look like afterwards.

use std::fs;
use std::process::Output;

use serde_json::{Value, json};

use crate::support::common::{Env, toolport_path};

fn run(env: &Env, args: &[&str]) -> Output {
    env.cmd(args).output().unwrap_or_else(|e| panic!("run {args:?}: {e}"))
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs and asserts the exit status, showing both streams when it differs.
fn run_status(env: &Env, args: &[&str], code: i32) -> Output {
    let o = run(env, args);
    assert_eq!(o.status.code(), Some(code), "{args:?}\nstdout: {}\nstderr: {}", stdout(&o), stderr(&o));
    o
}

fn read_json(path: &std::path::Path) -> Value {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not valid JSON: {e}\n{text}", path.display()))
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default()
}

#[test]
fn list_with_nothing_says_none() {
    let env = Env::new();
    let o = run_status(&env, &["mcp", "list"], 0);
    assert_eq!(stdout(&o), "mcp: (none)\n");
    assert!(!env.store().exists(), "list must not create the store");
    assert!(!env.root().join(".toolport").exists(), "list must not create .toolport");
}

/// Tools the built-in `demo-server` offers with no options.
const DEMO_TOOLS: usize = 6;

#[test]
fn add_does_not_enable_and_list_shows_every_state() {
    let env = Env::new();
    let bin = toolport_path().display().to_string();
    let o = run_status(&env, &["mcp", "add", "--transport", "stdio", "files", "--", &bin, "demo-server"], 0);
    assert_eq!(stdout(&o), format!("mcp added: files -> {}\n", env.store().display()));
    run_status(&env, &["mcp", "add", "--transport", "sse", "legacy", "http://127.0.0.1:3001/sse"], 0);
    run_status(&env, &["mcp", "add-json", "broken", r#"{"type":"stdio"}"#], 2);
    // An invalid definition can still arrive by hand; it must show `error`, not break the view.
    let mut store = read_json(&env.store());
    store["mcpServers"]["broken"] = json!({"type": "stdio"});
    fs::write(env.store(), serde_json::to_string_pretty(&store).unwrap_or_default()).unwrap_or_default();
    run_status(&env, &["mcp", "enable", "files"], 0);
    run_status(&env, &["mcp", "enable", "broken"], 0);
    fs::write(env.workspace_file(), r#"{"enabledMcpServers":["files","broken","ghost"]}"#)
        .unwrap_or_default();

    let o = run_status(&env, &["mcp", "list"], 0);
    assert_eq!(
        stdout(&o),
        format!(
            "mcp:\n\
             - files | type=stdio | state=connected | workspace=enabled | paused=no | tools={DEMO_TOOLS}\n\
             - legacy | type=sse | state=disabled | workspace=disabled | paused=no | tools=0\n\
             - broken | type=stdio | state=error | workspace=enabled | paused=no | tools=0 | error=stdio transport requires command\n\
             - ghost | type=(unknown) | state=missing | workspace=enabled | paused=no | tools=0 | error=workspace references undefined MCP server\n\
             - store={}\n\
             - workspaceConfig={}\n",
            env.store().display(),
            env.workspace_file().display()
        )
    );

    let o = run_status(&env, &["mcp", "list", "--json"], 0);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap_or_default();
    assert_eq!(v["store"], json!(env.store().display().to_string()));
    assert_eq!(v["workspaceConfig"], json!(env.workspace_file().display().to_string()));
    assert_eq!(
        v["servers"][0],
        json!({"name":"files","type":"stdio","state":"connected","workspaceEnabled":true,"paused":false,"tools":DEMO_TOOLS,
               "listed":DEMO_TOOLS,"exposed":DEMO_TOOLS,"protocolVersion":"2026-07-28"})
    );
    assert_eq!(v["servers"][3]["state"], json!("missing"));
    assert_eq!(v["servers"][3]["type"], Value::Null);
    assert_eq!(v["servers"][2]["error"], json!("stdio transport requires command"));
}

#[test]
fn add_existing_name_fails_with_exit_1() {
    let env = Env::new();
    run_status(&env, &["mcp", "add", "x", "--", "cmd"], 0);
    let before = fs::read(env.store()).unwrap_or_default();
    let o = run_status(&env, &["mcp", "add", "--transport", "http", "x", "https://h/mcp"], 1);
    assert!(stderr(&o).contains("MCP server already exists: x"), "{}", stderr(&o));
    assert_eq!(fs::read(env.store()).unwrap_or_default(), before);
}

#[test]
fn add_usage_errors_exit_2() {
    let env = Env::new();
    let o = run_status(&env, &["mcp", "add", "--transport", "sse", "x"], 2);
    assert!(stderr(&o).contains("missing url for sse"), "{}", stderr(&o));
    assert!(stderr(&o).contains("Usage: toolport mcp add"), "{}", stderr(&o));
    assert!(!env.store().exists());
}

#[test]
fn add_json_normalises_and_keeps_unknown_keys() {
    let env = Env::new();
    let o = run_status(
        &env,
        &[
            "mcp",
            "add-json",
            "remote",
            r#"{"x-note":"mine","type":" HTTP ","url":" https://h/mcp ","cwd":""}"#,
        ],
        0,
    );
    assert_eq!(stdout(&o), format!("mcp added: remote -> {}\n", env.store().display()));
    assert_eq!(
        read_json(&env.store())["mcpServers"]["remote"],
        json!({"x-note":"mine","type":"streamable_http","url":"https://h/mcp"})
    );
    assert_eq!(keys(&read_json(&env.store())["mcpServers"]["remote"]), ["x-note", "type", "url"]);
}

#[test]
fn add_json_refuses_invalid_definitions_with_the_validation_message() {
    let env = Env::new();
    for (def, msg) in [
        (r#"{"url":"https://h/mcp"}"#, "missing MCP transport type"),
        (r#"{"type":"stdio"}"#, "stdio transport requires command"),
        (r#"{"type":"sse"}"#, "sse transport requires url"),
        (r#"{"type":"http"}"#, "streamable_http transport requires url"),
        (r#"{"type":"carrier-pigeon","url":"x"}"#, "unsupported MCP transport: carrier-pigeon"),
        (r#"{"command":"x","args":"a b"}"#, "server \"bad\": \"args\" must be an array of strings"),
        (r#"{"command":"x","#, "<json argument>:1:15: EOF while parsing a value"),
    ] {
        let o = run_status(&env, &["mcp", "add-json", "bad", def], 2);
        assert!(stderr(&o).contains(msg), "{def}: {}", stderr(&o));
    }
    assert!(!env.store().exists());
}

#[test]
fn get_masks_every_secret_value() {
    let env = Env::new();
    run_status(
        &env,
        &[
            "mcp",
            "add",
            "--transport",
            "http",
            "--header",
            "Authorization: Bearer sk-live-123",
            "--env",
            "TOKEN=hunter2",
            "remote",
            "https://h/mcp",
        ],
        0,
    );
    let o = run_status(&env, &["mcp", "get", "remote"], 0);
    let text = stdout(&o);
    assert!(text.contains("  header: Authorization: ***\n"), "{text}");
    assert!(text.contains("  env: TOKEN=***\n"), "{text}");
    assert!(text.contains("  url: https://h/mcp\n"), "{text}");
    let o = run_status(&env, &["mcp", "get", "remote", "--json"], 0);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap_or_default();
    assert_eq!(v["definition"]["headers"], json!({"Authorization":"***"}));
    assert_eq!(v["definition"]["env"], json!({"TOKEN":"***"}));
    assert_eq!(v["workspaceEnabled"], json!(false));
    for o in [run(&env, &["mcp", "get", "remote"]), run(&env, &["mcp", "get", "remote", "--json"])] {
        let all = format!("{}{}", stdout(&o), stderr(&o));
        assert!(!all.contains("sk-live-123") && !all.contains("hunter2"), "{all}");
    }
    // The store itself keeps the real values.
    assert_eq!(read_json(&env.store())["mcpServers"]["remote"]["env"]["TOKEN"], json!("hunter2"));
    let o = run_status(&env, &["mcp", "get", "nope"], 1);
    assert!(stderr(&o).contains("Unknown MCP server: nope"));
}

#[test]
fn enable_disable_remove_messages() {
    let env = Env::new();
    let o = run_status(&env, &["mcp", "enable", "files"], 1);
    assert!(stderr(&o).contains("Unknown MCP server: files"), "{}", stderr(&o));
    run_status(&env, &["mcp", "add", "files", "--", "npx", "pkg"], 0);
    let o = run_status(&env, &["mcp", "disable", "files"], 1);
    assert!(stderr(&o).contains("MCP server is not enabled in this workspace: files"), "{}", stderr(&o));
    // Names are exact: `Files` is another (undefined) server.
    let o = run_status(&env, &["mcp", "enable", "Files"], 1);
    assert!(stderr(&o).contains("Unknown MCP server: Files"));

    assert_eq!(stdout(&run_status(&env, &["mcp", "enable", "files"], 0)), "mcp enabled: files\n");
    assert_eq!(read_json(&env.workspace_file()), json!({"enabledMcpServers":["files"]}));
    assert_eq!(stdout(&run_status(&env, &["mcp", "disable", "files"], 0)), "mcp disabled: files\n");
    assert_eq!(read_json(&env.workspace_file()), json!({"enabledMcpServers":[]}));

    run_status(&env, &["mcp", "enable", "files"], 0);
    assert_eq!(stdout(&run_status(&env, &["mcp", "remove", "files"], 0)), "mcp removed: files\n");
    assert_eq!(read_json(&env.workspace_file()), json!({"enabledMcpServers":[]}));
    assert_eq!(read_json(&env.store()), json!({"mcpServers":{}}));
    let o = run_status(&env, &["mcp", "remove", "files"], 1);
    assert!(stderr(&o).contains("Unknown MCP server: files"));
}

#[test]
fn unknown_keys_and_order_survive_add_and_remove() {
    let env = Env::new();
    let original = r#"{
  "zFirst": {"keep": [1, 2, 3]},
  "mcpServers": {
    "b": {"command": "bee", "x-team": "infra", "type": "stdio", "args": ["-p", "a", "-p", "a"]},
    "a": {"type": "sse", "url": "http://h/sse", "x-note": {"deep": true}}
  },
  "aLast": "tail"
}"#;
    fs::write(env.store(), original).unwrap_or_default();
    fs::create_dir_all(env.root().join(".toolport")).unwrap_or_default();
    fs::write(env.workspace_file(), r#"{"x-ws":1,"enabledMcpServers":["a","c"],"toolShape":"openai"}"#)
        .unwrap_or_default();

    run_status(&env, &["mcp", "add", "c", "--", "sea"], 0);
    let v = read_json(&env.store());
    assert_eq!(keys(&v), ["zFirst", "mcpServers", "aLast"]);
    assert_eq!(keys(&v["mcpServers"]), ["b", "a", "c"]);
    assert_eq!(keys(&v["mcpServers"]["b"]), ["command", "x-team", "type", "args"]);
    assert_eq!(v["mcpServers"]["b"]["args"], json!(["-p", "a", "-p", "a"]));
    assert_eq!(v["mcpServers"]["a"]["x-note"], json!({"deep": true}));
    assert_eq!(v["zFirst"], json!({"keep": [1, 2, 3]}));

    run_status(&env, &["mcp", "remove", "a"], 0);
    let v = read_json(&env.store());
    assert_eq!(keys(&v), ["zFirst", "mcpServers", "aLast"]);
    assert_eq!(keys(&v["mcpServers"]), ["b", "c"]);
    assert_eq!(keys(&v["mcpServers"]["b"]), ["command", "x-team", "type", "args"]);
    let ws = read_json(&env.workspace_file());
    assert_eq!(keys(&ws), ["x-ws", "enabledMcpServers", "toolShape"]);
    assert_eq!(ws["enabledMcpServers"], json!(["c"]));
}

#[test]
fn args_with_duplicates_and_cwd_are_kept_exactly() {
    let env = Env::new();
    run_status(
        &env,
        &[
            "mcp", "add", "--cwd", "/srv/app", "--env", "A=1", "s", "--", "srv", "-p", "a", "-p", "a",
            "--flag", "--",
        ],
        0,
    );
    assert_eq!(
        read_json(&env.store())["mcpServers"]["s"],
        json!({"type":"stdio","command":"srv","args":["-p","a","-p","a","--flag","--"],"env":{"A":"1"},"cwd":"/srv/app"})
    );
    let o = run_status(&env, &["mcp", "get", "s"], 0);
    assert!(stdout(&o).contains("  args: -p a -p a --flag --\n"), "{}", stdout(&o));
    assert!(stdout(&o).contains("  cwd: /srv/app\n"), "{}", stdout(&o));
}

#[test]
fn twenty_concurrent_adds_all_land() {
    let env = Env::new();
    let children: Vec<_> = (0..20)
        .map(|i| {
            std::process::Command::new(toolport_path())
                .arg("--home")
                .arg(env.home())
                .arg("--workspace")
                .arg(env.root())
                .args(["mcp", "add", &format!("s{i:02}"), "--", "cmd", &i.to_string()])
                .env_remove("RUST_LOG")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("spawn {i}: {e}"))
        })
        .collect();
    for (i, c) in children.into_iter().enumerate() {
        let o = c.wait_with_output().unwrap_or_else(|e| panic!("wait {i}: {e}"));
        assert!(o.status.success(), "add s{i:02}: {}", String::from_utf8_lossy(&o.stderr));
    }
    let v = read_json(&env.store());
    let mut names = keys(&v["mcpServers"]);
    names.sort();
    let want: Vec<String> = (0..20).map(|i| format!("s{i:02}")).collect();
    assert_eq!(names, want);
    for i in 0..20 {
        assert_eq!(v["mcpServers"][format!("s{i:02}")]["args"], json!([i.to_string()]));
    }
    // No temporary files left behind next to the store.
    let leftovers: Vec<_> = fs::read_dir(env.home())
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    let mut leftovers: Vec<String> = leftovers;
    leftovers.sort();
    assert_eq!(leftovers, ["mcp.json", "mcp.json.lock"]);
}

#[test]
fn malformed_store_exits_2_naming_line_and_column_and_is_untouched() {
    let env = Env::new();
    let broken = "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}\n";
    fs::write(env.store(), broken).unwrap_or_default();
    let o = run_status(&env, &["mcp", "list"], 2);
    let want = format!("{}:3:26: trailing comma", env.store().display());
    assert!(stderr(&o).contains(&want), "want {want}\ngot {}", stderr(&o));
    for args in [
        &["mcp", "add", "b", "--", "y"][..],
        &["mcp", "add-json", "b", r#"{"command":"y"}"#],
        &["mcp", "remove", "a"],
        &["mcp", "enable", "a"],
        &["mcp", "get", "a"],
    ] {
        let o = run_status(&env, args, 2);
        assert!(stderr(&o).contains(&want), "{args:?}: {}", stderr(&o));
    }
    assert_eq!(fs::read_to_string(env.store()).unwrap_or_default(), broken);
}

#[test]
fn malformed_workspace_file_exits_2_and_is_untouched() {
    let env = Env::new();
    run_status(&env, &["mcp", "add", "a", "--", "x"], 0);
    fs::create_dir_all(env.root().join(".toolport")).unwrap_or_default();
    fs::write(env.workspace_file(), "{\"enabledMcpServers\": [\"a\"\n").unwrap_or_default();
    for args in [&["mcp", "list"][..], &["mcp", "enable", "a"], &["mcp", "disable", "a"]] {
        let o = run_status(&env, args, 2);
        assert!(stderr(&o).contains(&format!("{}:2:0:", env.workspace_file().display())), "{}", stderr(&o));
    }
    assert_eq!(
        fs::read_to_string(env.workspace_file()).unwrap_or_default(),
        "{\"enabledMcpServers\": [\"a\"\n"
    );
}

#[test]
fn wrong_typed_field_names_server_and_field() {
    let env = Env::new();
    fs::write(env.store(), r#"{"mcpServers":{"x":{"command":"c","env":{"A":1}}}}"#).unwrap_or_default();
    let o = run_status(&env, &["mcp", "list"], 2);
    assert!(
        stderr(&o).contains(&format!(
            "{}: server \"x\": \"env\" must be an object of strings",
            env.store().display()
        )),
        "{}",
        stderr(&o)
    );
}

#[cfg(unix)]
#[test]
fn toolport_symlink_leading_outside_the_root_is_refused() {
    let env = Env::new();
    let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(outside.path(), env.root().join(".toolport"))
        .unwrap_or_else(|e| panic!("{e}"));
    run_status(&env, &["mcp", "add", "a", "--", "x"], 0);
    let want = format!("refusing to follow {}/.toolport", env.root().display());
    for args in
        [&["mcp", "enable", "a"][..], &["mcp", "list"], &["mcp", "disable", "a"], &["mcp", "remove", "a"]]
    {
        let o = run_status(&env, args, 2);
        assert!(stderr(&o).contains(&want), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("it leads outside the workspace root"), "{}", stderr(&o));
    }
    let written: Vec<_> = fs::read_dir(outside.path()).map(|d| d.count()).into_iter().collect();
    assert_eq!(written, [0], "nothing may be written outside the root");
}
