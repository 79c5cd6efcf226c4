//! Real MCP clients through `toolport serve`: the official Python SDK (`tests/serve/client.py`,
//! a `ClientSession` per scenario, or `mcp.Client` in its default mode, which speaks
//! 2026-07-28) and the MCP Inspector's CLI, over stdio (the client spawns
//! `toolport serve`) and over streamable HTTP (`serve --http 127.0.0.1:0`). The downstream
//! servers are real: server-everything and the binary's own demo-server. Both clients come from
//! `tests/peers/install_clients.sh`; a failed install fails these tests, never skips them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::common::Env;
use crate::support::peers::{everything_stdio, install, node};
use crate::support::runtime::{demo, write_config};
use crate::support::serve::{ServeHttp, StdioClient, serve_command};

/// Tools server-everything lists only to clients with a capability toolport's own downstream
/// connection may or may not advertise (roots, sampling): allowed through serve, not required.
const CAPABILITY_TOOLS: &[&str] = &[
    "get-roots-list",
    "trigger-sampling-request",
    "trigger-sampling-request-async",
    "trigger-elicitation-request-async",
];
/// What the elicitation test answers, and what server-everything's tool must then report.
const ELICIT_ANSWER: &str = r#"{"name": "Ada Lovelace", "check": true}"#;

/// The folder `tests/peers/install_clients.sh` fills: `venv/` and `inspector/`.
fn clients() -> PathBuf {
    static CLIENTS: OnceLock<String> = OnceLock::new();
    PathBuf::from(install("peers/install_clients.sh", &CLIENTS))
}

pub fn python() -> PathBuf {
    clients().join("venv/bin/python")
}

fn inspector() -> PathBuf {
    clients().join("inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js")
}

/// How a client reaches serve.
pub enum Via<'a> {
    Stdio(&'a Env),
    /// Over stdio, with these arguments after `serve`.
    StdioWith(&'a Env, &'a [&'a str]),
    Http(&'a str),
}

/// `client.py SCENARIO [extra…]`, before saying how it reaches serve.
pub fn py_command(scenario: &str, extra: &[&str]) -> Command {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("serve/client.py");
    let mut cmd = Command::new(python());
    cmd.arg(&script).arg(scenario).args(extra).env_remove("RUST_LOG").env_remove("TOOLPORT_HOME");
    cmd
}

/// The JSON a finished `client.py` printed; one that reports an error fails the test with it
/// (and with `more`, e.g. serve's stderr).
pub fn py_output(scenario: &str, out: &std::process::Output, more: &str) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let value: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|_| {
        panic!(
            "client.py {scenario} printed no JSON:\n{stdout}\n{}\n{more}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(
        value.get("error").is_none() && out.status.success(),
        "client.py {scenario} failed: {value}\n{more}"
    );
    value
}

/// Runs one `client.py` scenario and returns the JSON it printed; a scenario that reports an
/// error fails the test with it.
pub fn py(scenario: &str, via: &Via, extra: &[&str]) -> Value {
    let mut cmd = py_command(scenario, extra);
    // serve's stderr when the client spawns it: what a failure report needs next to the client's.
    let errlog = match via {
        Via::Http(url) => {
            cmd.arg("--url").arg(url);
            None
        }
        Via::Stdio(env) | Via::StdioWith(env, _) => {
            let serve_args: &[&str] = match via {
                Via::StdioWith(_, args) => args,
                _ => &[],
            };
            let errlog = env.root().join(format!("serve-{scenario}.stderr"));
            cmd.arg("--errlog").arg(&errlog).arg("--").args(serve_command(env)).args(serve_args);
            Some(errlog)
        }
    };
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run client.py: {e}"));
    let serve_stderr = errlog.and_then(|f| std::fs::read_to_string(f).ok()).unwrap_or_default();
    py_output(scenario, &out, &format!("serve's stderr:\n{serve_stderr}"))
}

fn names(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect())
        .unwrap_or_default()
}

fn everything_env() -> Env {
    let env = Env::new();
    write_config(&env, json!({ "everything": everything_stdio() }), &["everything"], json!({}));
    env
}

/// What the same Python client sees talking to server-everything itself.
fn everything_direct_tools() -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("serve/client.py");
    let entry = crate::support::peers::everything_entry();
    let out = Command::new(python())
        .arg(&script)
        .args(["basics", "--"])
        .arg(node())
        .arg(entry)
        .output()
        .unwrap_or_else(|e| panic!("cannot run client.py directly: {e}"));
    let value: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("direct run: {e}"));
    names(&value["tools"])
}

/// `mcp list` counts the tools serve serves: server-everything lists some only to a client
/// that advertises elicitation, and `mcp list` now advertises what serve does (issue 25 item 5:
/// 15 shown, 17 served before).
#[test]
fn mcp_list_counts_the_tools_serve_serves_for_server_everything() {
    let env = everything_env();
    let out = env.cmd(["mcp", "list", "--json"]).output().unwrap_or_else(|e| panic!("mcp list: {e}"));
    assert!(out.status.success(), "mcp list: {}", String::from_utf8_lossy(&out.stderr));
    let list: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("mcp list --json: {e}"));
    let row = &list["servers"][0];
    assert_eq!(row["state"], "connected", "{list}");
    let served = StdioClient::start(&env, &[]).tool_names();
    assert!(served.iter().any(|t| t.starts_with("trigger-elicitation")), "{served:?}");
    assert_eq!(row["tools"], json!(served.len()), "mcp list and serve disagree: {list}\nserved: {served:?}");
}

/// The SDK's low-level session, which negotiates 2025-11-25 with `initialize`.
const SESSION: &[&str] = &["--client", "session"];
/// `mcp.Client` in its default mode (what the SDK recommends): `server/discover`, 2026-07-28.
const DEFAULT_CLIENT: &[&str] = &["--client", "default"];

fn check_basics(seen: &Value, direct: &[String], protocol: &str) {
    assert_eq!(seen["protocol"], protocol, "the client negotiated another revision: {seen}");
    let tools = names(&seen["tools"]);
    for tool in direct {
        assert!(tools.contains(tool), "{tool} (listed directly) is missing through serve: {tools:?}");
    }
    for tool in &tools {
        assert!(
            direct.contains(tool) || CAPABILITY_TOOLS.contains(&tool.as_str()),
            "{tool} through serve is not a tool server-everything lists: {tools:?}"
        );
    }
    let mut unique = tools.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), tools.len(), "a tool is listed twice: {tools:?}");
    assert_eq!(seen["echo"], json!({"is_error": false, "texts": ["Echo: hello through serve"]}));
    assert!(
        names(&seen["resources"]).contains(&"demo://resource/static/document/architecture.md".to_string()),
        "{}",
        seen["resources"]
    );
    let read = &seen["read"][0];
    assert_eq!(read["uri"], "demo://resource/static/document/architecture.md");
    assert!(read["text"].as_str().unwrap_or_default().starts_with("# Everything Server"), "{read}");
    assert!(names(&seen["prompts"]).contains(&"simple-prompt".to_string()), "{}", seen["prompts"]);
    assert_eq!(
        seen["prompt"],
        json!([{"role": "user", "text": "This is a simple prompt without arguments."}])
    );
}

#[test]
fn serve_python_sdk_session_lists_calls_reads_and_prompts_on_2025_11_25_over_stdio() {
    let env = everything_env();
    let direct = everything_direct_tools();
    check_basics(&py("basics", &Via::Stdio(&env), SESSION), &direct, "2025-11-25");
}

#[test]
fn serve_python_sdk_session_lists_calls_reads_and_prompts_on_2025_11_25_over_http() {
    let env = everything_env();
    let direct = everything_direct_tools();
    let serve = ServeHttp::start(&env);
    check_basics(&py("basics", &Via::Http(&serve.url), SESSION), &direct, "2025-11-25");
}

/// Every result says `resultType` (the default client rejects one that does not), though
/// server-everything, speaking 2025-11-25 to serve, sends none.
#[test]
fn serve_python_sdk_default_client_lists_calls_reads_and_prompts_on_2026_07_28_over_stdio() {
    let env = everything_env();
    let direct = everything_direct_tools();
    check_basics(&py("basics", &Via::Stdio(&env), DEFAULT_CLIENT), &direct, "2026-07-28");
}

#[test]
fn serve_python_sdk_default_client_lists_calls_reads_and_prompts_on_2026_07_28_over_http() {
    let env = everything_env();
    let direct = everything_direct_tools();
    let serve = ServeHttp::start(&env);
    check_basics(&py("basics", &Via::Http(&serve.url), DEFAULT_CLIENT), &direct, "2026-07-28");
}

/// A server's `_meta` on a call result reaches the client as the server sent it, on both
/// revisions.
#[test]
fn serve_passes_a_call_results_meta_to_the_python_sdk() {
    let env = Env::new();
    let meta = json!({"example.com/trace": "t-1", "example.com/cost": {"units": 3}});
    let demo_server = demo(&["--result-meta", &meta.to_string()]);
    write_config(&env, json!({ "demo": demo_server }), &["demo"], json!({}));
    let serve = ServeHttp::start(&env);
    let args = ["--tool", "echo", "--args", r#"{"message": "with meta"}"#];
    for (client, protocol) in [(SESSION, "2025-11-25"), (DEFAULT_CLIENT, "2026-07-28")] {
        let seen = py("call", &Via::Http(&serve.url), &[client, &args].concat());
        assert_eq!(
            seen,
            json!({"protocol": protocol, "is_error": false, "texts": ["with meta"], "meta": meta}),
            "{client:?}"
        );
    }
}

/// A demo-server that adds `late` 3 s after it starts: long enough for serve to start and the
/// client to list first, so the first listing must lack it.
fn late_env() -> Env {
    let env = Env::new();
    write_config(&env, json!({ "demo": demo(&["--notify-after-ms", "3000"]) }), &["demo"], json!({}));
    env
}

fn check_list_changed(seen: &Value) {
    let before = names(&seen["before"]);
    assert_eq!(before, ["echo", "add", "sleep", "fail", "big", "pid"], "{seen}");
    assert_eq!(seen["notified"], true, "no notifications/tools/list_changed reached the client: {seen}");
    assert_eq!(names(&seen["after"]), ["echo", "add", "sleep", "fail", "big", "pid", "late"], "{seen}");
}

#[test]
fn serve_python_sdk_sees_list_changed_and_late_over_stdio() {
    let env = late_env();
    check_list_changed(&py("list-changed", &Via::Stdio(&env), &["--wait", "20", "--expect", "late"]));
}

/// Over HTTP serve runs before the client comes, so the change is made after the client's
/// first listing: the workspace file is edited to enable a second server, which serve follows.
#[test]
fn serve_python_sdk_sees_a_config_edit_as_list_changed_over_http() {
    let env = Env::new();
    let servers = json!({ "demo": demo(&[]), "more": demo(&["--prefix", "z_"]) });
    write_config(&env, servers, &["demo"], json!({}));
    let serve = ServeHttp::start(&env);
    // One server is "1 server" (issue 45 item 5: it said "from 1 servers").
    let first =
        "toolport serve: the agent now sees 6 tools from 1 server; added echo, add, sleep, fail, big, pid";
    let printed = serve.wait_for_line(first, Duration::from_secs(30));
    assert!(printed.contains(first), "the operator's line for the first connect is missing:\n{printed}");
    let workspace = env.workspace_file();
    let edited = json!({ "enabledMcpServers": ["demo", "more"] }).to_string();
    let args =
        ["--wait", "20", "--expect", "z_echo", "--write", workspace.to_str().unwrap_or_default(), &edited];
    let seen = py("list-changed", &Via::Http(&serve.url), &args);
    assert_eq!(names(&seen["before"]), ["echo", "add", "sleep", "fail", "big", "pid"], "{seen}");
    assert_eq!(seen["notified"], true, "no notifications/tools/list_changed reached the client: {seen}");
    let line = "toolport serve: the agent now sees 12 tools from 2 servers; added z_echo, z_add";
    let printed = serve.wait_for_line(line, Duration::from_secs(5));
    assert!(printed.contains(line), "the operator's line for the change is missing:\n{printed}");
    let after = names(&seen["after"]);
    assert_eq!(
        after,
        [
            "echo", "add", "sleep", "fail", "big", "pid", "z_echo", "z_add", "z_sleep", "z_fail", "z_big",
            "z_pid"
        ],
        "{seen}"
    );
}

fn check_elicitation(seen: &Value) {
    let asked = seen["asked"].as_array().cloned().unwrap_or_default();
    assert_eq!(asked.len(), 1, "the client was asked {} times: {seen}", asked.len());
    assert_eq!(asked[0]["message"], "Please provide inputs for the following fields:");
    assert!(names(&asked[0]["fields"]).contains(&"name".to_string()), "{seen}");
    let texts = names(&seen["texts"]);
    assert_eq!(seen["is_error"], false, "{seen}");
    assert!(
        texts.iter().any(|t| t.contains("- Name: Ada Lovelace")),
        "the answer did not reach the tool: {seen}"
    );
    assert!(texts.iter().any(|t| t.contains("- Agreed to terms: true")), "{seen}");
}

fn elicit_args() -> Vec<&'static str> {
    vec!["--tool", "trigger-elicitation-request", "--answer", ELICIT_ANSWER]
}

#[test]
fn serve_forwards_elicitation_to_the_python_sdk_over_stdio() {
    let env = everything_env();
    check_elicitation(&py("elicit", &Via::Stdio(&env), &elicit_args()));
}

#[test]
fn serve_forwards_elicitation_to_the_python_sdk_over_http() {
    let env = everything_env();
    let serve = ServeHttp::start(&env);
    check_elicitation(&py("elicit", &Via::Http(&serve.url), &elicit_args()));
}

/// A demo-server logging its sleeps; returns the env and the log's path.
fn sleepy_env() -> (Env, PathBuf) {
    let env = Env::new();
    let log = env.root().join("calls.log");
    let log_arg = log.to_string_lossy().to_string();
    write_config(&env, json!({ "demo": demo(&["--call-log", &log_arg]) }), &["demo"], json!({}));
    (env, log)
}

fn check_cancelled(seen: &Value, log: &Path) {
    assert_eq!(seen["finished"], Value::Null, "the 20 s sleep finished instead of being abandoned: {seen}");
    assert_eq!(seen["echo_after"], json!(["after the cancel"]), "{seen}");
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut text = String::new();
    while Instant::now() < deadline {
        text = std::fs::read_to_string(log).unwrap_or_default();
        if text.contains("cancelled sleep 20000") {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        text.lines().collect::<Vec<_>>(),
        ["started sleep 20000", "cancelled sleep 20000"],
        "the downstream server did not see the client's cancellation"
    );
}

const CANCEL_ARGS: &[&str] =
    &["--tool", "sleep", "--args", r#"{"ms": 20000}"#, "--cancel-after", "1", "--linger", "2"];

#[test]
fn serve_forwards_the_python_sdks_cancellation_over_stdio() {
    let (env, log) = sleepy_env();
    check_cancelled(&py("cancel", &Via::Stdio(&env), CANCEL_ARGS), &log);
}

#[test]
fn serve_forwards_the_python_sdks_cancellation_over_http() {
    let (env, log) = sleepy_env();
    let serve = ServeHttp::start(&env);
    check_cancelled(&py("cancel", &Via::Http(&serve.url), CANCEL_ARGS), &log);
}

/// One Inspector CLI call (`--cli … --method …`) through serve; its stdout parsed as JSON.
fn inspector_call(via: &Via, method_args: &[&str], scratch: &Path) -> Value {
    let mut cmd = Command::new(node());
    // The target first: `--tool-arg` takes every `key=value` word after it.
    cmd.arg(inspector()).arg("--cli");
    match via {
        Via::Http(url) => cmd.arg(url).args(method_args),
        Via::Stdio(env) => cmd.args(method_args).arg("--").args(serve_command(env)),
        Via::StdioWith(env, serve_args) => {
            cmd.args(method_args).arg("--").args(serve_command(env)).args(*serve_args)
        }
    };
    // The Inspector keeps a catalog under $HOME: a scratch one keeps the tests apart.
    let out = cmd
        .env("HOME", scratch)
        .env_remove("RUST_LOG")
        .env_remove("TOOLPORT_HOME")
        .output()
        .unwrap_or_else(|e| panic!("cannot run the Inspector: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "inspector {method_args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("inspector {method_args:?}: {e}:\n{stdout}"))
}

fn check_inspector(via: &Via, scratch: &Path) {
    let listed = inspector_call(via, &["--method", "tools/list"], scratch);
    let tools: Vec<&str> = listed["tools"]
        .as_array()
        .map(|a| a.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    for tool in ["echo", "get-sum", "get-tiny-image", "trigger-long-running-operation"] {
        assert!(tools.contains(&tool), "{tool} missing from the Inspector's tools/list: {tools:?}");
    }
    let sum = inspector_call(
        via,
        &["--method", "tools/call", "--tool-name", "get-sum", "--tool-arg", "a=2", "b=40"],
        scratch,
    );
    assert_eq!(sum["content"][0]["text"], "The sum of 2 and 40 is 42.", "{sum}");
    let uri = "demo://resource/static/document/architecture.md";
    let read = inspector_call(via, &["--method", "resources/read", "--uri", uri], scratch);
    assert_eq!(read["contents"][0]["uri"], uri, "{read}");
    assert!(
        read["contents"][0]["text"].as_str().unwrap_or_default().starts_with("# Everything Server"),
        "{read}"
    );
    let prompt = inspector_call(via, &["--method", "prompts/get", "--prompt-name", "simple-prompt"], scratch);
    assert_eq!(
        prompt["messages"][0]["content"]["text"], "This is a simple prompt without arguments.",
        "{prompt}"
    );
}

#[test]
fn serve_answers_the_inspector_cli_over_stdio() {
    let env = everything_env();
    check_inspector(&Via::Stdio(&env), env.home());
}

#[test]
fn serve_answers_the_inspector_cli_over_http() {
    let env = everything_env();
    let serve = ServeHttp::start(&env);
    check_inspector(&Via::Http(&serve.url), env.home());
}

/// demo-server's `sleep` reports progress in tenths to a caller that sent a progress token.
fn check_progress(seen: &Value) {
    let expected: Vec<Value> = (1..=10)
        .map(|n| json!({"progress": f64::from(n), "total": 10.0, "message": format!("{n}/10")}))
        .collect();
    assert_eq!(seen["progress"], json!(expected), "progress did not reach the calling client: {seen}");
    assert_eq!(seen["texts"], json!(["slept 500 ms"]), "{seen}");
}

const PROGRESS_ARGS: &[&str] = &["--tool", "sleep", "--args", r#"{"ms": 500}"#];

#[test]
fn serve_forwards_progress_to_the_python_sdk_over_stdio() {
    let (env, _log) = sleepy_env();
    check_progress(&py("progress", &Via::Stdio(&env), PROGRESS_ARGS));
}

#[test]
fn serve_forwards_progress_to_the_python_sdk_over_http() {
    let (env, _log) = sleepy_env();
    let serve = ServeHttp::start(&env);
    check_progress(&py("progress", &Via::Http(&serve.url), PROGRESS_ARGS));
}

/// Calls whose server answers right after its last report: each report is written to the
/// client before the result (a client drops a report that comes after it).
#[test]
fn serve_writes_every_report_before_the_result() {
    let (env, _log) = sleepy_env();
    let seen =
        py("progress", &Via::Stdio(&env), &["--tool", "sleep", "--args", r#"{"ms": 0}"#, "--rounds", "40"]);
    assert_eq!(seen["counts"], json!(vec![10; 40]), "reports came after their results: {seen}");
}

/// A downstream `sampling/createMessage` reaches the Python client's sampling callback, and
/// the model's answer reaches the tool's result.
#[test]
fn serve_forwards_sampling_to_the_python_sdk() {
    let env = everything_env();
    let answer = json!({"text": "hi from the client's model"}).to_string();
    let seen = py("sample", &Via::Stdio(&env), &["--answer", &answer]);
    assert_eq!(seen["asked"], json!([["Resource trigger-sampling-request context: Say hi"]]), "{seen}");
    assert_eq!(seen["is_error"], false, "{seen}");
    let texts = names(&seen["texts"]);
    assert!(texts.iter().any(|t| t.contains("hi from the client's model")), "{seen}");
}

/// The client's roots replace the workspace root for a server set to `roots: "client"`.
#[test]
fn serve_passes_the_python_clients_roots_on() {
    let env = Env::new();
    let mut everything = everything_stdio();
    everything["roots"] = json!("client");
    write_config(&env, json!({ "everything": everything }), &["everything"], json!({}));
    let seen = py("roots", &Via::Stdio(&env), &["--uri", "file:///client/project/", "--wait", "15"]);
    let texts = names(&seen["texts"]);
    assert!(texts.iter().any(|t| t.contains("file:///client/project/")), "{seen}");
}

/// Log messages of a server, sent outside any call, reach the client that set a log level.
#[test]
fn serve_forwards_log_messages_to_a_client_that_set_a_level() {
    let env = everything_env();
    let seen = py("logging", &Via::Stdio(&env), &["--wait", "15"]);
    let logs = seen["logs"].as_array().cloned().unwrap_or_default();
    assert!(!logs.is_empty(), "no notifications/message reached the client: {seen}");
}

/// `completion/complete` of a prompt's argument goes to the server that offers the prompt.
#[test]
fn serve_forwards_completion_to_the_prompts_server() {
    let env = everything_env();
    let args = ["--prompt", "completable-prompt", "--argument", "department", "--value", "S"];
    let seen = py("complete", &Via::Stdio(&env), &args);
    assert_eq!(seen["values"], json!(["Sales", "Support"]), "{seen}");
}

/// The same through the default `mcp.Client` (2026-07-28), which needs the server's
/// completion marked `resultType: "complete"`.
#[test]
fn serve_forwards_completion_to_the_python_sdks_default_client() {
    let env = everything_env();
    let args = ["--prompt", "completable-prompt", "--argument", "department", "--value", "S"];
    let seen = py("complete", &Via::Stdio(&env), &[DEFAULT_CLIENT, &args].concat());
    assert_eq!(seen["values"], json!(["Sales", "Support"]), "{seen}");
}
