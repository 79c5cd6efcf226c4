//! `tools` and `call` against the binary's own `demo-server`: the surface, the executor's
//! messages, every collision kind, pagination, and determinism under slow starts.

use serde_json::{Value, json};

use crate::support::common::Env;
use crate::support::runtime::{DEMO_TOOLS, clash, demo, names, reserved_one, write_config};

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(env: &Env, args: &[&str]) -> Run {
    let out = env.cmd(args).output().unwrap_or_else(|e| panic!("run toolport: {e}"));
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn tools_json(env: &Env) -> (Vec<Value>, String) {
    let r = run(env, &["tools", "--json"]);
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let tools: Vec<Value> =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("json: {e}: {}", r.stdout));
    (tools, r.stderr)
}

#[test]
fn tools_prints_the_openai_shape_with_the_schema_intact() {
    let env = Env::new();
    write_config(&env, json!({ "demo": demo(&[]) }), &["demo"], json!({}));
    let (tools, stderr) = tools_json(&env);
    assert_eq!(stderr, "");
    assert_eq!(names(&tools), ["echo", "add", "sleep", "fail", "big", "pid"]);
    assert_eq!(
        tools[1],
        json!({"type": "function", "function": {
            "name": "add",
            "description": "Adds two numbers",
            "parameters": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}
        }})
    );
    let text = run(&env, &["tools"]);
    assert!(
        text.stdout.starts_with("echo — Returns its message\nadd — Adds two numbers\n"),
        "{}",
        text.stdout
    );
}

#[test]
fn tools_converts_to_another_shape_on_request() {
    let env = Env::new();
    write_config(&env, json!({ "demo": demo(&[]) }), &["demo"], json!({}));
    let r = run(&env, &["tools", "--shape", "anthropic", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let tools: Vec<Value> = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("json: {e}"));
    assert_eq!(tools.len(), 6);
    assert_eq!(tools[0]["name"], json!("echo"));
    assert_eq!(
        tools[0]["input_schema"],
        json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]})
    );
}

#[test]
fn call_prints_results_and_fails_on_is_error() {
    let env = Env::new();
    write_config(&env, json!({ "demo": demo(&[]) }), &["demo"], json!({}));
    let add = run(&env, &["call", "add", r#"{"a": 2, "b": 3}"#]);
    assert_eq!((add.code, add.stdout.as_str()), (0, "5\n"), "{}", add.stderr);
    let echo = run(&env, &["call", "echo", r#"{"message":"hi there"}"#]);
    assert_eq!(echo.stdout, "hi there\n");
    let fail = run(&env, &["call", "fail", r#"{"message":"it broke"}"#]);
    assert_eq!((fail.code, fail.stdout.as_str()), (1, "it broke\n"));
}

#[test]
fn executor_messages_match_the_contract() {
    let env = Env::new();
    write_config(&env, json!({ "demo": demo(&[]) }), &["demo"], json!({}));
    let unknown = run(&env, &["call", "nope"]);
    assert_eq!((unknown.code, unknown.stderr.as_str()), (1, "toolport: Unknown MCP tool: nope\n"));
    let blank = run(&env, &["call", " "]);
    assert_eq!(blank.stderr, "toolport: MCP tool call is missing tool name\n");
    // A name is matched exactly, never trimmed: `echo` with anything around it is no tool
    // (issue 44: serve's checks decide on the exact name, so the executor must run that one).
    for (padded, shown) in
        [(" echo", " echo"), ("echo ", "echo "), ("echo\t", "echo\\u{9}"), ("\u{1b}echo", "\\u{1b}echo")]
    {
        let r = run(&env, &["call", padded, r#"{"message":"hi"}"#]);
        assert_eq!((r.code, r.stdout.as_str()), (1, ""), "{padded:?}");
        assert_eq!(r.stderr, format!("toolport: Unknown MCP tool: {shown}\n"), "{padded:?}");
    }
    let array = run(&env, &["call", "echo", "[1]"]);
    assert_eq!(array.stderr, "toolport: Invalid MCP tool arguments: expected a JSON object, got an array\n");
    // Blank arguments are `{}`: `pid` takes none.
    let pid = run(&env, &["call", "pid", "  "]);
    assert_eq!(pid.code, 0, "{}", pid.stderr);
}

/// Runs `tools` on `servers` (all enabled) and returns the warnings it printed.
fn warnings(servers: Value, extra: Value) -> Vec<String> {
    let env = Env::new();
    let enabled: Vec<String> = servers.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
    let enabled: Vec<&str> = enabled.iter().map(String::as_str).collect();
    write_config(&env, servers, &enabled, extra);
    let (_, stderr) = tools_json(&env);
    stderr.lines().map(str::to_string).collect()
}

#[test]
fn blank_tool_name_fails_the_server() {
    assert_eq!(
        warnings(json!({ "a": demo(&["--extra-tool", ""]) }), json!({})),
        ["Warning: MCP unavailable: a (MCP server a returned a tool without a name)"]
    );
}

#[test]
fn reserved_names_fail_the_server_ignoring_case() {
    assert_eq!(
        warnings(json!({ "a": demo(&["--extra-tool", "Read_File"]) }), json!({})),
        [format!("Warning: MCP unavailable: a ({})", reserved_one("a", "Read_File"))]
    );
    // The workspace's reservedToolNames replaces the default four.
    assert_eq!(
        warnings(json!({ "a": demo(&["--extra-tool", "bash"]) }), json!({ "reservedToolNames": ["ADD"] })),
        [format!("Warning: MCP unavailable: a ({})", reserved_one("a", "add"))]
    );
}

#[test]
fn duplicate_within_a_server_fails_it() {
    assert_eq!(
        warnings(json!({ "a": demo(&["--extra-tool", "ECHO"]) }), json!({})),
        ["Warning: MCP unavailable: a (MCP server a returned duplicate tool: ECHO)"]
    );
}

#[test]
fn a_name_claimed_by_an_earlier_server_fails_the_later_one() {
    let env = Env::new();
    write_config(
        &env,
        json!({ "first": demo(&["--prefix", "x_"]), "second": demo(&["--extra-tool", "X_Echo"]) }),
        &["first", "second"],
        json!({}),
    );
    let (tools, stderr) = tools_json(&env);
    assert_eq!(
        stderr,
        format!(
            "Warning: MCP unavailable: second ({})\n",
            clash("second", "X_Echo", "first", &["X_Echo"], true)
        )
    );
    assert_eq!(tools.len(), 6, "only the first server's tools");
}

#[test]
fn the_first_defined_server_keeps_the_name_even_when_slower() {
    let env = Env::new();
    write_config(
        &env,
        json!({ "slow": demo(&["--delay-ms", "800"]), "fast": demo(&[]) }),
        &["slow", "fast"],
        json!({}),
    );
    let (tools, stderr) = tools_json(&env);
    assert_eq!(
        stderr,
        format!("Warning: MCP unavailable: fast ({})\n", clash("fast", "echo", "slow", &DEMO_TOOLS, true))
    );
    assert_eq!(names(&tools).first().map(String::as_str), Some("echo"));
    let who = run(&env, &["call", "pid"]);
    assert_eq!(who.code, 0);
}

#[test]
fn a_name_policy_renames_before_the_collision_rules_and_calls_use_the_original_name() {
    let env = Env::new();
    write_config(
        &env,
        json!({ "a": demo(&[]), "b": demo(&[]) }),
        &["a", "b"],
        json!({ "namePolicy": "namespace" }),
    );
    let (tools, stderr) = tools_json(&env);
    assert_eq!(stderr, "", "no collision once namespaced");
    assert_eq!(names(&tools)[..2], ["a__echo", "a__add"]);
    assert_eq!(names(&tools)[6], "b__echo");
    let r = run(&env, &["call", "b__echo", r#"{"message":"routed"}"#]);
    assert_eq!(r.stdout, "routed\n", "{}", r.stderr);
}

#[test]
fn pagination_is_followed_to_the_last_page() {
    let env = Env::new();
    write_config(
        &env,
        json!({ "paged": demo(&["--tools", "7", "--page-size", "2"]) }),
        &["paged"],
        json!({}),
    );
    let (tools, stderr) = tools_json(&env);
    assert_eq!(stderr, "");
    assert_eq!(tools.len(), 13);
    assert_eq!(names(&tools).last().map(String::as_str), Some("tool_7"));
}

#[test]
fn a_repeated_cursor_fails_the_server_instead_of_looping() {
    assert_eq!(
        warnings(json!({ "loopy": demo(&["--repeat-cursor"]) }), json!({})),
        ["Warning: MCP unavailable: loopy (tools/list repeated cursor loop)"]
    );
}

#[test]
fn unavailable_servers_warn_and_the_rest_still_work() {
    let env = Env::new();
    write_config(
        &env,
        // `ok` last: defined before it, each failing server could have owned `echo`, so the
        // call waits for every one to fail (a server after the owner is not waited for).
        json!({
            "legacy": { "type": "sse", "url": "http://127.0.0.1:9/sse" },
            "broken": { "type": "stdio", "command": "/nonexistent/server" },
            "refused": { "type": "streamable_http", "url": "http://127.0.0.1:9/mcp" },
            "ok": demo(&[]),
        }),
        &["legacy", "broken", "refused", "ok", "ghost"],
        json!({}),
    );
    let r = run(&env, &["call", "echo", r#"{"message":"still here"}"#]);
    assert_eq!(r.stdout, "still here\n");
    let lines: Vec<&str> = r.stderr.lines().filter(|l| l.starts_with("Warning:")).collect();
    assert_eq!(lines.len(), 4, "{}", r.stderr);
    // SSE goes through the transport-sse plugin, which words its own failure.
    assert!(lines[0].starts_with("Warning: MCP unavailable: legacy ("), "{}", lines[0]);
    assert!(lines[0].contains("refused"), "{}", lines[0]);
    assert!(
        lines[1].starts_with("Warning: MCP unavailable: broken (cannot start /nonexistent/server: "),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], "Warning: MCP unavailable: refused (Connection refused (os error 111))");
    assert_eq!(lines[3], "Warning: MCP unavailable: ghost (workspace references undefined MCP server)");
}

#[test]
fn variables_expand_at_connect_time() {
    let env = Env::new();
    write_config(&env, json!({ "demo": demo(&["--prefix", "${TP_TEST_PREFIX}"]) }), &["demo"], json!({}));
    let out = env.cmd(["call", "v_echo", r#"{"message":"expanded"}"#]).env("TP_TEST_PREFIX", "v_").output();
    let out = out.unwrap_or_else(|e| panic!("run: {e}"));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "expanded\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
