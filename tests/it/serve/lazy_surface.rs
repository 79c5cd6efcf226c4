//! The lazy surface of `toolport serve`, seen by a client over stdio: exactly three tools
//! (`search_tools`, `describe_tool`, `call_tool`), with `serve --lazy` and with the workspace's
//! `"surface": "lazy"`; a search that finds tools, follows the servers' `list_changed`, and
//! finds the right tool for plain-word tasks over real servers (server-everything,
//! server-memory and eight demo-servers of 40 generated tools); calls through the executor with
//! progress relayed; the CLI that sets and shows it.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::common::Env;
use crate::support::peers::{everything_stdio, install, node, peers};
use crate::support::runtime::{demo, write_config};
use crate::support::serve::StdioClient;

/// What the lazy tests ask of serve, on the shared stdio client.
trait Lazy {
    fn call(&mut self, name: &str, arguments: Value) -> Value;
    fn search(&mut self, query: &str, limit: u64) -> Vec<String>;
}

impl Lazy for StdioClient {
    /// `tools/call` of `name`; the `result` (or panics with the error).
    fn call(&mut self, name: &str, arguments: Value) -> Value {
        let answer = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        answer.get("result").cloned().unwrap_or_else(|| panic!("{name} failed: {answer}"))
    }

    /// `search_tools` names, best first.
    fn search(&mut self, query: &str, limit: u64) -> Vec<String> {
        let result = self.call("search_tools", json!({"query": query, "limit": limit}));
        let hits = result["structuredContent"]["tools"].as_array().cloned().unwrap_or_default();
        hits.iter().filter_map(|h| h["name"].as_str().map(String::from)).collect()
    }
}

/// The text of a tool result's first content block.
fn text(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_string()
}

fn run(env: &Env, args: &[&str]) -> (i32, String, String) {
    env.run(args, Duration::from_secs(60))
}

/// A demo-server, and a second one (`b_` names) whose extra tool is called `search_tools`.
fn two_demos(workspace: Value) -> Env {
    let env = Env::new();
    let servers = json!({
        "demo": demo(&[]),
        "other": demo(&["--prefix", "b_", "--extra-tool", "search_tools"]),
    });
    write_config(&env, servers, &["demo", "other"], workspace);
    env
}

const THE_THREE: [&str; 3] = ["search_tools", "describe_tool", "call_tool"];

#[test]
fn serve_lazy_lists_three_tools_that_search_describe_and_call_the_rest() {
    let env = two_demos(json!({}));
    // What the full surface shapes `add` as: describe_tool returns exactly that.
    let (code, stdout, stderr) = run(&env, &["tools", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let full: Vec<Value> = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let shaped_add = full.iter().find(|t| t["function"]["name"] == "add").cloned();
    let shaped_add = shaped_add.unwrap_or_else(|| panic!("no add in {stdout}"));

    let mut client = StdioClient::start(&env, &["--lazy"]);
    assert_eq!(client.tool_names(), THE_THREE);

    let hits = client.search("add two numbers together", 3);
    assert!(hits.first().is_some_and(|h| h == "add" || h == "b_add"), "{hits:?}");
    let result = client.call("search_tools", json!({"query": "process id"}));
    let first = &result["structuredContent"]["tools"][0];
    assert_eq!(first["name"], "pid", "{result}");
    assert_eq!(first["server"], "demo");
    assert_eq!(first["description"], "Returns this server's process id");
    assert!(first["score"].as_f64().is_some_and(|s| s > 0.0), "{result}");
    assert!(text(&result).contains("\"pid\""), "a model reads the hits as text: {result}");

    let described = client.call("describe_tool", json!({"name": "add"}));
    assert_eq!(described["structuredContent"], shaped_add);
    let unknown = client.call("describe_tool", json!({"name": "nope"}));
    assert_eq!(
        (unknown["isError"].as_bool(), text(&unknown).as_str()),
        (Some(true), "Unknown MCP tool: nope")
    );

    let sum = client.call("call_tool", json!({"name": "b_add", "arguments": {"a": 2, "b": 3}}));
    assert_eq!(text(&sum), "5", "{sum}");
    assert_eq!(sum["structuredContent"], json!({"sum": 5.0}));
    let unknown = client.call("call_tool", json!({"name": "nope", "arguments": {}}));
    assert_eq!(
        (unknown["isError"].as_bool(), text(&unknown).as_str()),
        (Some(true), "Unknown MCP tool: nope")
    );

    // A real tool named like one of the three is reached through call_tool: the demo-server
    // itself answers (it has no handler for its extra tools), not the lazy surface.
    let answer =
        client.request("tools/call", json!({"name": "call_tool", "arguments": {"name": "search_tools"}}));
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("unknown tool: search_tools"), "{answer}");

    // Progress of the called tool reaches the client under its own token.
    let slept = client.request(
        "tools/call",
        json!({"name": "call_tool", "arguments": {"name": "sleep", "arguments": {"ms": 300}},
               "_meta": {"progressToken": "lazy-1"}}),
    );
    assert_eq!(text(&slept["result"]), "slept 300 ms", "{slept}");
    let progress: Vec<&Value> = client
        .notifications
        .iter()
        .filter(|n| n["method"] == "notifications/progress" && n["params"]["progressToken"] == "lazy-1")
        .collect();
    assert!(!progress.is_empty(), "no progress relayed: {:?}", client.notifications);

    let missing = client.request("tools/call", json!({"name": "search_tools", "arguments": {}}));
    assert!(missing["error"]["message"].as_str().is_some_and(|m| m.contains("\"query\"")), "{missing}");
}

#[test]
fn the_workspace_surface_makes_serve_lazy_and_search_follows_list_changed() {
    let env = Env::new();
    let servers = json!({ "demo": demo(&["--notify-after-ms", "300"]) });
    write_config(&env, servers, &["demo"], json!({}));
    let (code, stdout, stderr) = run(&env, &["workspace", "set", "surface", "lazy"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("workspace surface: lazy (was full) -> "), "{stdout}");
    let (code, _, stderr) = run(&env, &["workspace", "set", "surface", "lean"]);
    assert_eq!((code, stderr.trim()), (2, "toolport: surface \"lean\": must be \"full\" or \"lazy\""));

    // `toolport tools` shows what the model sees: the three, in the workspace's shape.
    let (code, stdout, stderr) = run(&env, &["tools", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let shown: Vec<Value> = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let names: Vec<&str> = shown.iter().filter_map(|t| t["function"]["name"].as_str()).collect();
    assert_eq!(names, THE_THREE);

    let mut client = StdioClient::start(&env, &[]);
    assert_eq!(client.tool_names(), THE_THREE);
    // The demo-server adds `late` ("Appeared after list_changed") 300 ms after it started.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let hits = client.search("appeared after the list changed", 3);
        if hits.first().map(String::as_str) == Some("late") {
            break;
        }
        assert!(Instant::now() < deadline, "search never saw the new tool: {hits:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let late = client.call("call_tool", json!({"name": "late"}));
    assert_eq!(text(&late), "late");
    drop(client);

    let (code, stdout, stderr) = run(&env, &["workspace", "unset", "surface"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("workspace surface: unset, now the default full (was lazy) -> "), "{stdout}");
    let mut client = StdioClient::start(&env, &[]);
    let names = client.tool_names();
    assert!(names.contains(&"echo".to_string()) && !names.contains(&"search_tools".to_string()), "{names:?}");

    std::fs::write(env.workspace_file(), r#"{"enabledMcpServers":["demo"],"surface":"some"}"#)
        .unwrap_or_else(|e| panic!("{e}"));
    let (code, _, stderr) = run(&env, &["tools"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("workspace.json: \"surface\" must be \"full\" or \"lazy\", not \"some\""),
        "{stderr}"
    );
}

/// The fixture the search quality and the bench use: server-everything, server-memory and
/// eight demo-servers of 40 generated tools each (names `d1_` … `d8_`).
fn fixture(env: &Env) {
    static MEMORY: OnceLock<String> = OnceLock::new();
    install("peers/install_memory.sh", &MEMORY);
    let memory_entry = peers().join("node_modules/@modelcontextprotocol/server-memory/dist/index.js");
    let memory_file = env.home().join("memory.jsonl");
    let mut servers = json!({
        "everything": everything_stdio(),
        "memory": {"type": "stdio", "command": node(), "args": [memory_entry],
                   "env": {"MEMORY_FILE_PATH": memory_file}},
    });
    let mut enabled = vec!["everything".to_string(), "memory".to_string()];
    for i in 1..=8 {
        let prefix = format!("d{i}_");
        servers[format!("demo{i}")] = demo(&["--tools", "40", "--prefix", &prefix]);
        enabled.push(format!("demo{i}"));
    }
    let enabled: Vec<&str> = enabled.iter().map(String::as_str).collect();
    write_config(env, servers, &enabled, json!({}));
}

/// Tasks in plain words, each with the tool that does it: a name, or `*_base` for any of the
/// eight demo-servers' copies of `base`. Written from the fixture servers' descriptions.
const TASKS: &[(&str, &str)] = &[
    // server-everything
    ("echo back the text I send", "echo"),
    ("show the server's environment variables", "get-env"),
    ("give me links to several resources", "get-resource-links"),
    ("get a reference to one resource by its id", "get-resource-reference"),
    ("structured content with an output schema for a location", "get-structured-content"),
    ("what is the sum of two numbers", "get-sum"),
    ("show a tiny logo image", "get-tiny-image"),
    ("compress a file with gzip", "gzip-file-as-resource"),
    ("turn the simulated logging on or off", "toggle-simulated-logging"),
    ("switch resource subscription updates on", "toggle-subscriber-updates"),
    ("start a long running operation that reports progress", "trigger-long-running-operation"),
    ("list the roots the client provided", "get-roots-list"),
    ("ask the user for details through elicitation", "trigger-elicitation-request"),
    ("send the user to a browser url", "trigger-url-elicitation"),
    ("ask the LLM to sample a completion for a prompt", "trigger-sampling-request"),
    ("do deep research on a topic", "simulate-research-query"),
    ("a message with annotations and metadata", "get-annotated-message"),
    // server-memory
    ("create new entities in the knowledge graph", "create_entities"),
    ("link two entities with a relation", "create_relations"),
    ("add new observations to an existing entity", "add_observations"),
    ("delete entities and their relations", "delete_entities"),
    ("remove some observations from an entity", "delete_observations"),
    ("delete relations from the graph", "delete_relations"),
    ("read the entire knowledge graph", "read_graph"),
    ("search the graph for nodes matching a query", "search_nodes"),
    ("open nodes by their names", "open_nodes"),
    // the demo-servers (eight alike copies: any of them will do)
    ("wait some milliseconds before answering", "*_sleep"),
    ("which process id does the server have", "*_pid"),
    ("return a large text of a given size", "*_big"),
    ("always return an error result", "*_fail"),
    ("add two numbers together", "*_add"),
    ("generated tool number 17", "*_tool_17"),
];

/// Whether `name` is the tool `expected` names.
fn is_expected(name: &str, expected: &str) -> bool {
    match expected.strip_prefix('*') {
        Some(base) => {
            name.starts_with('d') && name.ends_with(base) && name[1..].starts_with(char::is_numeric)
        }
        None => name == expected,
    }
}

/// Switching the workspace's surface while `serve` runs is a change of its tool list: the
/// client hears `list_changed` and lists the other surface, with no server changed.
#[test]
fn switching_the_surface_under_a_running_serve_notifies_list_changed() {
    let env = two_demos(json!({}));
    let mut client = StdioClient::start(&env, &[]);
    let full = client.tool_names();
    assert!(full.len() > 3 && !full.contains(&"describe_tool".to_string()), "{full:?}");
    let (code, _, stderr) = run(&env, &["workspace", "set", "surface", "lazy"]);
    assert_eq!(code, 0, "{stderr}");
    let heard = |client: &StdioClient| {
        client.notifications.iter().filter(|n| n["method"] == "notifications/tools/list_changed").count()
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while heard(&client) == 0 {
        assert!(Instant::now() < deadline, "no list_changed after the switch: {:?}", client.notifications);
        client.request("ping", json!({}));
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(client.tool_names(), THE_THREE);
    let (code, _, stderr) = run(&env, &["workspace", "unset", "surface"]);
    assert_eq!(code, 0, "{stderr}");
    let deadline = Instant::now() + Duration::from_secs(20);
    while heard(&client) < 2 {
        assert!(
            Instant::now() < deadline,
            "no list_changed after the switch back: {:?}",
            client.notifications
        );
        client.request("ping", json!({}));
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(client.tool_names(), full);
}

#[test]
fn search_finds_the_tool_for_nine_in_ten_plain_tasks() {
    let env = Env::new();
    fixture(&env);
    let mut client = StdioClient::start(&env, &["--lazy"]);
    assert_eq!(client.tool_names(), THE_THREE);
    // Every fixture server connected: the index has all their tools.
    let everything = client.search("echo back the input string", 1);
    assert_eq!(everything, ["echo"], "server-everything is not behind serve");
    let memory = client.search("knowledge graph", 1);
    assert!(
        memory.first().is_some_and(|n| !n.starts_with('d')),
        "server-memory is not behind serve: {memory:?}"
    );
    let generated = client.search("generated tool number 40", 8);
    assert_eq!(generated.len(), 8, "not all eight demo-servers are behind serve: {generated:?}");

    let mut found = 0;
    let mut first = 0;
    let mut missed = Vec::new();
    for (task, expected) in TASKS {
        let hits = client.search(task, 3);
        if hits.first().is_some_and(|h| is_expected(h, expected)) {
            first += 1;
        }
        if hits.iter().any(|h| is_expected(h, expected)) {
            found += 1;
        } else {
            missed.push(format!("{task:?} → {hits:?} (wanted {expected})"));
        }
    }
    let share = found as f64 / TASKS.len() as f64;
    eprintln!(
        "lazy surface search quality: {found}/{} tasks ({:.0}%) have the expected tool in the top 3, \
         {first} first",
        TASKS.len(),
        share * 100.0
    );
    for miss in &missed {
        eprintln!("  missed: {miss}");
    }
    assert!(TASKS.len() >= 30);
    assert!(share >= 0.9, "only {found}/{} found: {missed:#?}", TASKS.len());
}
