//! Per-server tool filters (`tools: { include, exclude }`, issue 17) against the binary's own
//! `demo-server`: what `tools --json` shows, that a filtered tool is not callable from any entry
//! point (`call`, the session, ACP, `serve` over stdio), that the filter sees the server's own
//! names (before the name policy and the collision rules), `mcp add --include/--exclude`, the
//! `listed`/`exposed` counts of `mcp list`, and the exit-2 messages of a bad filter.

use std::io::Write as _;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::acp::Agent;
use crate::support::common::{Env, Piped, toolport_path};
use crate::support::runtime::{demo, write_config};
use crate::support::session::Scripted;

/// `demo(args)` with a `tools` filter.
fn filtered(args: &[&str], tools: Value) -> Value {
    let mut def = demo(args);
    def["tools"] = tools;
    def
}

/// Four servers whose filters include, exclude, exclude over include, and keep one tool of a
/// server that would otherwise clash with the first (the filter runs before the collision rules).
fn four_servers() -> Env {
    let env = Env::new();
    let servers = json!({
        "inc": filtered(&["--tools", "3"], json!({"include": ["tool_*", "echo"]})),
        "exc": filtered(&["--prefix", "b_", "--tools", "2"], json!({"exclude": ["b_tool_?", "b_s*"]})),
        "both": filtered(
            &["--prefix", "c_", "--tools", "12"],
            json!({"include": ["c_tool_1*", "c_add"], "exclude": ["c_tool_1?", "c_add"]}),
        ),
        "clash": filtered(&[], json!({"include": ["pid"]})),
    });
    write_config(&env, servers, &["inc", "exc", "both", "clash"], json!({}));
    env
}

/// What `four_servers` must put on the surface, in surface order.
const FOUR_SURFACE: [&str; 11] =
    ["echo", "tool_1", "tool_2", "tool_3", "b_echo", "b_add", "b_fail", "b_big", "b_pid", "c_tool_1", "pid"];

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(env: &Env, args: &[&str]) -> Run {
    let out = env.cmd(args).timeout(Duration::from_secs(90)).output().unwrap_or_else(|e| panic!("{e}"));
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Run { code: out.status.code().unwrap_or(-1), stdout: text(&out.stdout), stderr: text(&out.stderr) }
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The final names of an OpenAI-shaped `tools --json`.
fn surface(env: &Env) -> Vec<String> {
    let r = run(env, &["tools", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    names_at(&json_of(&r.stdout), "/function/name")
}

fn names_at(tools: &Value, pointer: &str) -> Vec<String> {
    tools
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {tools}"))
        .iter()
        .filter_map(|t| t.pointer(pointer).and_then(Value::as_str).map(String::from))
        .collect()
}

#[test]
fn include_exclude_and_exclude_wins_shape_the_surface_before_the_collision_rules() {
    let env = four_servers();
    assert_eq!(surface(&env), FOUR_SURFACE);
    let kept = run(&env, &["call", "tool_2"]);
    assert_eq!((kept.code, kept.stdout.as_str()), (0, "tool_2 called\n"), "{}", kept.stderr);
    let kept = run(&env, &["call", "pid"]);
    assert_eq!(kept.code, 0, "the clash server's one kept tool is callable: {}", kept.stderr);
}

#[test]
fn a_filtered_tool_is_an_unknown_tool_to_call() {
    let env = four_servers();
    // Dropped by include (inc's add), by exclude (b_sleep, b_tool_1), by exclude over include
    // (c_add, c_tool_10), and a name only the unfiltered clash server would have had (sleep).
    for name in ["add", "b_sleep", "b_tool_1", "c_add", "c_tool_10", "sleep"] {
        let r = run(&env, &["call", name, "{}"]);
        assert_eq!(
            (r.code, r.stdout.as_str(), r.stderr.as_str()),
            (1, "", format!("toolport: Unknown MCP tool: {name}\n").as_str()),
            "exit status and message as for any unknown tool"
        );
    }
}

#[test]
fn mcp_list_counts_listed_and_exposed_tools() {
    let env = four_servers();
    let r = run(&env, &["mcp", "list", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = json_of(&r.stdout);
    let counts: Vec<(String, Value, Value, Value, Value)> = v["servers"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|s| {
            let name = s["name"].as_str().unwrap_or_default().to_string();
            (name, s["state"].clone(), s["listed"].clone(), s["exposed"].clone(), s["tools"].clone())
        })
        .collect();
    let row = |name: &str, listed: u64, exposed: u64| {
        (name.to_string(), json!("connected"), json!(listed), json!(exposed), json!(exposed))
    };
    // demo-server lists six tools of its own, plus the generated ones.
    assert_eq!(counts, [row("inc", 9, 4), row("exc", 8, 5), row("both", 18, 1), row("clash", 6, 1)]);
    let text = run(&env, &["mcp", "list"]);
    let lines: Vec<&str> = text.stdout.lines().collect();
    assert_eq!(lines[1], "- inc | type=stdio | state=connected | workspace=enabled | paused=no | tools=4");
    assert_eq!(lines[3], "- both | type=stdio | state=connected | workspace=enabled | paused=no | tools=1");

    // After the policy and the collision rules too: a server whose kept tools clash is
    // `error` with nothing exposed, but still says what it listed.
    let clash = Env::new();
    let servers = json!({
        "first": demo(&[]),
        "second": filtered(&["--tools", "1"], json!({"exclude": ["tool_1"]})),
        "off": filtered(&[], json!({"include": ["echo"]})),
    });
    write_config(&clash, servers, &["first", "second"], json!({}));
    let v = json_of(&run(&clash, &["mcp", "list", "--json"]).stdout);
    let second = &v["servers"][1];
    assert_eq!(
        (&second["state"], &second["listed"], &second["exposed"]),
        (&json!("error"), &json!(7), &json!(0))
    );
    let off = &v["servers"][2];
    assert_eq!((&off["state"], &off["listed"], &off["exposed"]), (&json!("disabled"), &json!(0), &json!(0)));
}

#[test]
fn the_filter_matches_the_servers_own_names_before_the_name_policy() {
    let env = Env::new();
    let servers = json!({
        "own": filtered(&[], json!({"include": ["echo", "add"]})),
        "fin": filtered(&["--prefix", "f_"], json!({"include": ["fin__*"]})),
    });
    write_config(&env, servers, &["own", "fin"], json!({"namePolicy": "namespace"}));
    assert_eq!(surface(&env), ["own__echo", "own__add"]);
    let r = run(&env, &["call", "own__add", r#"{"a": 2, "b": 3}"#]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "5\n"), "{}", r.stderr);
    let r = run(&env, &["call", "own__sleep", r#"{"ms": 1}"#]);
    assert_eq!((r.code, r.stderr.as_str()), (1, "toolport: Unknown MCP tool: own__sleep\n"));
    let v = json_of(&run(&env, &["mcp", "list", "--json"]).stdout);
    // A glob on the final (policy) names matches none of the server's own names.
    assert_eq!((&v["servers"][1]["listed"], &v["servers"][1]["exposed"]), (&json!(6), &json!(0)));
}

#[test]
fn the_session_neither_lists_nor_calls_a_filtered_tool() {
    let env = four_servers();
    let mut s = Scripted::start(&env);
    let tools = json_of(&s.run("/tools"));
    assert_eq!(names_at(&tools, "/function/name"), FOUR_SURFACE);
    assert_eq!(s.run("/call b_sleep {\"ms\": 1}"), "Unknown MCP tool: b_sleep\n");
    assert_eq!(s.run("/call c_add {\"a\": 1, \"b\": 2}"), "Unknown MCP tool: c_add\n");
    assert_eq!(s.run("/call b_echo {\"message\": \"kept\"}"), "kept\n");
    assert!(s.quit().success());
}

#[test]
fn acp_neither_lists_nor_calls_a_filtered_tool() {
    let env = four_servers();
    let mut agent = Agent::start(&env);
    // No servers from the client: the local stores, with the filters, and cwd as the workspace.
    let new = agent.call(1, "session/new", json!({"cwd": env.root(), "mcpServers": []}));
    let session = new["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("{new}")).to_string();
    let listed = agent.call(2, "_toolport/tools/list", json!({"sessionId": session}));
    assert_eq!(names_at(&listed["result"]["tools"], "/function/name"), FOUR_SURFACE);
    let call = agent.call(3, "_toolport/tools/call", json!({"sessionId": session, "name": "b_sleep"}));
    assert_eq!(call["error"]["message"], "Unknown MCP tool: b_sleep", "{call}");
    assert_eq!(agent.prompt(4, &session, "/call c_tool_11").1, "Unknown MCP tool: c_tool_11");
    // demo-server answers with the base name, without its prefix.
    assert_eq!(agent.prompt(5, &session, "/call c_tool_1").1, "tool_1 called");
    let (_, text) = agent.prompt(6, &session, "/mcp");
    assert!(
        text.contains("- both | type=stdio | state=connected | workspace=enabled | paused=no | tools=1"),
        "{text}"
    );
    agent.finish();
}

#[test]
fn serve_over_stdio_neither_lists_nor_calls_a_filtered_tool() {
    let env = four_servers();
    let mut serve = env.spawn_piped(true, &["serve"]);
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}});
    let init = rpc(&mut serve, 1, "initialize", init);
    assert!(init.get("result").is_some(), "{init}");
    send(&mut serve, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut answer = |id: u64, method: &str, params: Value| rpc(&mut serve, id, method, params);
    let listed = answer(2, "tools/list", json!({}));
    assert_eq!(names_at(&listed["result"]["tools"], "/name"), FOUR_SURFACE, "{listed}");
    for (id, name) in [(3, "b_sleep"), (4, "c_tool_10"), (5, "add")] {
        let call = answer(id, "tools/call", json!({"name": name, "arguments": {}}));
        assert_eq!(call["result"]["isError"], true, "{call}");
        assert_eq!(call["result"]["content"][0]["text"], format!("Unknown MCP tool: {name}"), "{call}");
    }
    let kept = answer(6, "tools/call", json!({"name": "b_echo", "arguments": {"message": "through serve"}}));
    assert_eq!(kept["result"]["content"][0]["text"], "through serve", "{kept}");
    drop(serve.stdin);
    let status = serve.child.wait().unwrap_or_else(|e| panic!("wait serve: {e}"));
    assert!(status.success(), "serve exited with {status}");
}

/// Writes one JSON-RPC message to a piped `toolport serve`.
fn send(serve: &mut Piped, message: &Value) {
    writeln!(serve.stdin, "{message}").unwrap_or_else(|e| panic!("write {message}: {e}"));
    serve.stdin.flush().unwrap_or_else(|e| panic!("flush: {e}"));
}

/// One request, and its response (whatever serve sends before it is skipped).
fn rpc(serve: &mut Piped, id: u64, method: &str, params: Value) -> Value {
    send(serve, &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    loop {
        let line =
            serve.lines.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|e| panic!("{method}: {e}"));
        let msg = json_of(&line);
        if msg["id"] == json!(id) && msg.get("method").is_none() {
            return msg;
        }
    }
}

#[test]
fn mcp_add_include_exclude_writes_the_filter_and_get_shows_it() {
    let env = Env::new();
    let exe = toolport_path().display().to_string();
    let add = [
        "mcp",
        "add",
        "--include",
        "tool_*",
        "--include",
        "echo",
        "--exclude",
        "tool_2",
        "f",
        "--",
        &exe,
        "demo-server",
        "--tools",
        "3",
    ];
    let r = run(&env, &add);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = run(&env, &["mcp", "get", "f", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let def = &json_of(&r.stdout)["definition"];
    assert_eq!(def["tools"], json!({"include": ["tool_*", "echo"], "exclude": ["tool_2"]}), "{def}");
    assert_eq!(def["args"], json!(["demo-server", "--tools", "3"]));
    let text = run(&env, &["mcp", "get", "f"]).stdout;
    assert!(text.contains("\n  tools: include [\"tool_*\",\"echo\"] exclude [\"tool_2\"]\n"), "{text}");

    assert_eq!(run(&env, &["mcp", "enable", "f"]).code, 0);
    assert_eq!(surface(&env), ["echo", "tool_1", "tool_3"]);
    let v = json_of(&run(&env, &["mcp", "list", "--json"]).stdout);
    assert_eq!((&v["servers"][0]["listed"], &v["servers"][0]["exposed"]), (&json!(9), &json!(3)));

    // add-json takes the same field, and keeps the user's own keys inside it.
    let given =
        json!({"command": exe, "args": ["demo-server"], "tools": {"x-why": "audit", "exclude": [" sleep "]}});
    let r = run(&env, &["mcp", "add-json", "g", &given.to_string()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let store = json_of(&std::fs::read_to_string(env.store()).unwrap_or_default());
    assert_eq!(store["mcpServers"]["g"]["tools"], json!({"x-why": "audit", "exclude": ["sleep"]}));
}

#[test]
fn a_bad_filter_is_a_configuration_error_naming_the_file_and_the_server() {
    let env = Env::new();
    let cases = [
        (
            json!({"exclude": ["ok", "[a"]}),
            r#""tools.exclude" has a bad glob "[a": unclosed character class; missing ']'"#,
        ),
        (json!({"include": "read_*"}), r#""tools.include" must be an array of strings"#),
        (json!(["read_*"]), r#""tools" must be an object"#),
    ];
    for (tools, message) in cases {
        write_config(&env, json!({ "x": filtered(&[], tools) }), &["x"], json!({}));
        for args in [&["mcp", "list"][..], &["tools"][..], &["call", "echo"][..]] {
            let r = run(&env, args);
            let expected = format!("toolport: {}: server \"x\": {message}\n", env.store().display());
            assert_eq!((r.code, r.stderr.as_str()), (2, expected.as_str()), "{args:?}");
        }
    }
    let fresh = Env::new();
    let r = run(&fresh, &["mcp", "add", "--exclude", "{a,b", "y", "--", "cmd"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.starts_with("toolport: --exclude has a bad glob \"{a,b\": "), "{}", r.stderr);
    let r = run(&fresh, &["mcp", "add-json", "z", r#"{"command": "cmd", "tools": {"include": ["[z"]}}"#]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.starts_with(r#"toolport: server "z": "tools.include" has a bad glob "[z": "#),
        "{}",
        r.stderr
    );
    assert!(!fresh.store().exists(), "a refused add writes nothing");
}
