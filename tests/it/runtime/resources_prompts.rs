//! Resources and prompts (issue 12, item 5) against the real `server-everything` and the
//! binary's own `demo-server`: every page listed, text and binary reads, a prompt with
//! arguments, `--json`, the first-defined server keeping a shared prompt name or URI (with the
//! warnings), `list_changed` for resources, a broken `resources/list` that only warns, and the
//! session's `/resources`, `/read`, `/prompts`, `/prompt`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use toolport::{CatalogError, RuntimeOptions, ServerState};

use crate::support::common::Env;
use crate::support::peers::{everything_entry, everything_stdio, node};
use crate::support::runtime::{demo, eventually, start, write_config};

/// How long one command may take (Node starts slowly on a loaded machine).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

fn run(env: &Env, args: &[&str]) -> Output {
    env.cmd(args).timeout(COMMAND_TIMEOUT).output().unwrap_or_else(|e| panic!("run {args:?}: {e}"))
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `args` and expects exit status `code`.
fn expect(env: &Env, args: &[&str], code: i32) -> Output {
    let o = run(env, args);
    assert_eq!(o.status.code(), Some(code), "{args:?}\nstdout: {}\nstderr: {}", stdout(&o), stderr(&o));
    o
}

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(o)))
}

/// server-everything's own `method` list (every page), read with a bare JSON-RPC exchange over
/// stdio: what toolport must show, found without toolport.
fn raw_list(method: &str, key: &str) -> Vec<Value> {
    let mut child = Command::new(node())
        .arg(everything_entry())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn node: {e}"));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("stdin"));
    let mut out = BufReader::new(child.stdout.take().unwrap_or_else(|| panic!("stdout")));
    let mut send = |msg: Value| writeln!(stdin, "{msg}").unwrap_or_else(|e| panic!("write: {e}"));
    let mut response = |id: u64| loop {
        let mut line = String::new();
        if out.read_line(&mut line).unwrap_or(0) == 0 {
            panic!("server closed stdout");
        }
        let msg: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        if msg.get("id") == Some(&json!(id)) {
            return msg;
        }
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}));
    response(1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut items = Vec::new();
    let mut cursor: Option<Value> = None;
    for id in 2.. {
        let params = cursor.take().map(|c| json!({ "cursor": c })).unwrap_or(json!({}));
        send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let result = response(id)["result"].clone();
        items.extend(result[key].as_array().cloned().unwrap_or_default());
        match result.get("nextCursor") {
            Some(c) if !c.is_null() => cursor = Some(c.clone()),
            _ => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    items
}

fn uris(items: &Value, server: &str, key: &str) -> Vec<String> {
    items
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|i| i["server"] == server)
                .filter_map(|i| i[key].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn resources_are_listed_every_page_and_read_as_text_and_bytes() {
    let env = Env::new();
    write_config(
        &env,
        json!({
            "everything": everything_stdio(),
            "paged": demo(&["--prefix", "p_", "--resources", "25", "--page-size", "4"]),
        }),
        &["everything", "paged"],
        json!({}),
    );

    // --json: every resource of both servers, the demo server's 25 over 7 pages, in order.
    let listed = json_of(&expect(&env, &["resources", "--json"], 0));
    let raw: Vec<String> = raw_list("resources/list", "resources")
        .iter()
        .filter_map(|r| r["uri"].as_str().map(str::to_string))
        .collect();
    assert!(!raw.is_empty(), "server-everything lists resources");
    assert_eq!(uris(&listed["resources"], "everything", "uri"), raw);
    let paged: Vec<String> = (1..=25).map(|i| format!("demo://item/{i}")).collect();
    assert_eq!(uris(&listed["resources"], "paged", "uri"), paged);
    let raw_templates: Vec<String> = raw_list("resources/templates/list", "resourceTemplates")
        .iter()
        .filter_map(|t| t["uriTemplate"].as_str().map(str::to_string))
        .collect();
    assert_eq!(uris(&listed["resourceTemplates"], "everything", "uriTemplate"), raw_templates);

    // The text view: one row per resource, the server first.
    let text = stdout(&expect(&env, &["resources"], 0));
    assert!(text.starts_with("resources:\n- everything | demo://"), "{text}");
    assert!(text.contains("- paged | demo://item/25 | item-25 | text/plain\n"), "{text}");
    assert!(
        text.contains("templates:\n- everything | demo://resource/dynamic/text/{resourceId} | "),
        "{text}"
    );

    // A text resource: exactly the document the server serves from its folder.
    let first = listed["resources"][0]["uri"].as_str().unwrap_or_default().to_string();
    let file = first.rsplit('/').next().unwrap_or_default();
    let docs = everything_entry().parent().map(|d| d.join("docs").join(file)).unwrap_or_default();
    let expected = std::fs::read_to_string(&docs).unwrap_or_else(|e| panic!("read {}: {e}", docs.display()));
    assert_eq!(stdout(&expect(&env, &["read", "everything", &first], 0)), format!("{expected}\n"));
    assert_eq!(stdout(&expect(&env, &["read", "paged", "demo://item/7"], 0)), "item 7\n");

    // A binary resource: described on a terminal, raw bytes with --output (a file, or `-`).
    let blob = "demo://resource/dynamic/blob/7";
    let o = expect(&env, &["read", "everything", blob], 0);
    let line = stdout(&o);
    assert!(line.starts_with(&format!("(binary resource {blob}: text/plain, ")), "{line}");
    assert!(stderr(&o).contains("use --output FILE"), "{}", stderr(&o));
    let saved = env.root().join("blob.bin");
    expect(&env, &["read", "everything", blob, "--output", &saved.display().to_string()], 0);
    let bytes = std::fs::read(&saved).unwrap_or_else(|e| panic!("read {}: {e}", saved.display()));
    assert!(bytes.starts_with(b"Resource 7: This is a base64 blob"), "{bytes:?}");
    assert!(line.contains(&format!(", {} bytes)", bytes.len())), "{line}");
    let piped = expect(&env, &["read", "everything", blob, "-o", "-"], 0);
    assert!(piped.stdout.starts_with(b"Resource 7: This is a base64 blob"));
    let raw = json_of(&expect(&env, &["read", "everything", blob, "--json"], 0));
    assert_eq!(raw["contents"][0]["uri"], blob);
    assert!(raw["contents"][0]["blob"].is_string(), "{raw}");

    // Refusals name what is wrong and exit 1.
    let o = expect(&env, &["read", "nope", blob], 1);
    assert_eq!(stderr(&o).trim_end(), "toolport: Unknown MCP server: nope");
    let o = expect(&env, &["read", "paged", "demo://item/99"], 1);
    assert!(
        stderr(&o).contains("toolport: MCP resource demo://item/99 on server paged failed: no resource"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_prompt_with_arguments_and_its_json() {
    let env = Env::new();
    write_config(&env, json!({ "everything": everything_stdio() }), &["everything"], json!({}));

    let listed = json_of(&expect(&env, &["prompts", "--json"], 0));
    let raw = raw_list("prompts/list", "prompts");
    let names: Vec<&str> =
        listed.as_array().map(|a| a.iter().filter_map(|p| p["name"].as_str()).collect()).unwrap_or_default();
    let raw_names: Vec<&str> = raw.iter().filter_map(|p| p["name"].as_str()).collect();
    assert_eq!(names, raw_names);
    let args = listed.as_array().and_then(|a| a.iter().find(|p| p["name"] == "args-prompt")).cloned();
    let args = args.unwrap_or_else(|| panic!("args-prompt missing: {listed}"));
    assert_eq!(args["server"], "everything");
    assert_eq!(args["arguments"][0]["name"], "city");
    assert_eq!(args["arguments"][0]["required"], true);

    let text = stdout(&expect(&env, &["prompts"], 0));
    assert!(
        text.contains("- everything | args-prompt | city, state? | A prompt with two arguments"),
        "{text}"
    );

    let o = expect(&env, &["prompt", "args-prompt", r#"{"city": "Paris", "state": "Texas"}"#], 0);
    assert_eq!(stdout(&o), "user: What's weather in Paris, Texas?\n");
    let got = json_of(&expect(&env, &["prompt", "args-prompt", r#"{"city": "Oslo"}"#, "--json"], 0));
    assert_eq!(got["messages"][0]["role"], "user");
    assert_eq!(got["messages"][0]["content"]["text"], "What's weather in Oslo?");

    let o = expect(&env, &["prompt", "nope"], 1);
    assert_eq!(stderr(&o).trim_end(), "toolport: Unknown MCP prompt: nope");
    let o = expect(&env, &["prompt", "args-prompt", r#"{"city": 3}"#], 1);
    assert_eq!(stderr(&o).trim_end(), "toolport: Invalid MCP prompt arguments: city must be a string");
    // A required argument left out: the server's own refusal, named.
    let o = expect(&env, &["prompt", "args-prompt"], 1);
    assert!(
        stderr(&o).starts_with("toolport: MCP prompt args-prompt on server everything failed: "),
        "{}",
        stderr(&o)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_first_defined_server_keeps_a_shared_prompt_name_and_uri() {
    let env = Env::new();
    // Two copies of server-everything; the namespace policy keeps their tools apart, so both
    // connect and share every prompt name and every URI.
    write_config(
        &env,
        json!({ "first": everything_stdio(), "second": everything_stdio() }),
        &["first", "second"],
        json!({ "namePolicy": "namespace" }),
    );

    let o = expect(&env, &["prompts"], 0);
    assert!(
        stderr(&o).contains(
            "Warning: MCP prompt name conflict: args-prompt already provided by first; left out of second\n"
        ),
        "{}",
        stderr(&o)
    );
    let rows: Vec<String> = stdout(&o).lines().skip(1).map(str::to_string).collect();
    assert!(!rows.is_empty() && rows.iter().all(|r| r.starts_with("- first | ")), "{rows:?}");

    let o = expect(&env, &["resources", "--json"], 0);
    let listed = json_of(&o);
    let first = uris(&listed["resources"], "first", "uri");
    assert!(!first.is_empty());
    assert!(uris(&listed["resources"], "second", "uri").is_empty(), "{listed}");
    let warning = format!(
        "Warning: MCP resource URI conflict: {} already provided by first; left out of second\n",
        first[0]
    );
    assert!(stderr(&o).contains(&warning), "{}", stderr(&o));
    assert!(!stderr(&o).contains("prompt name conflict"), "each list warns about its own: {}", stderr(&o));

    // The library says who answers: the first-defined server; an explicit read still reaches
    // the server it names.
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    let outcome = runtime.prompt("args-prompt", r#"{"city": "Rome"}"#).await;
    assert_eq!(outcome.map(|o| o.server), Ok("first".to_string()));
    let read = runtime.read("second", &first[0]).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(read.server, "second");
    assert!(!read.render_text().is_empty());
    runtime.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn list_changed_relists_resources_and_a_broken_list_only_warns() {
    let env = Env::new();
    write_config(
        &env,
        json!({ "everything": everything_stdio(), "broken": demo(&["--prefix", "b_", "--broken-resources"]) }),
        &["everything", "broken"],
        json!({}),
    );
    let runtime = start(&env, &[], RuntimeOptions::default()).await;
    // `resources/list` failing leaves the server connected with its tools, and no resources.
    let rows = runtime.status();
    assert_eq!((rows[1].state, rows[1].tools), (ServerState::Connected, 6), "{rows:?}");
    assert!(runtime.catalog().resources.iter().all(|r| r.server == "everything"));

    // The gzip tool adds a session resource and sends `notifications/resources/list_changed`.
    let uri = "demo://resource/session/hello.txt.gz";
    let before = runtime.catalog().resources.len();
    assert!(runtime.catalog().resources.iter().all(|r| r.item.uri != uri));
    let args = json!({ "name": "hello.txt.gz", "data": "data:text/plain;base64,aGVsbG8gd29ybGQ=" });
    let called = runtime.call("gzip-file-as-resource", &args.to_string()).await;
    assert!(called.as_ref().is_ok_and(|o| !o.is_error), "{called:?}");
    let listed = eventually(Duration::from_secs(10), || {
        runtime.catalog().resources.iter().any(|r| r.item.uri == uri && r.server == "everything")
    })
    .await;
    assert!(listed, "{:?}", runtime.catalog().resources);
    assert_eq!(runtime.catalog().resources.len(), before + 1);

    // Its contents are gzip bytes: binary, described rather than printed.
    let read = runtime.read("everything", uri).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(read.has_binary());
    let bytes = read.bytes().unwrap_or_default();
    assert_eq!(bytes.get(..2), Some(&[0x1f, 0x8b][..]), "gzip magic");
    assert_eq!(
        read.render_text(),
        format!("(binary resource {uri}: application/gzip, {} bytes)", bytes.len())
    );

    assert_eq!(
        runtime.read("broken", "demo://item/1").await.err(),
        Some(CatalogError::Protocol {
            subject: "resource demo://item/1".into(),
            server: "broken".into(),
            message: "no resource demo://item/1".into(),
        })
    );
    runtime.shutdown().await;
}

#[test]
fn the_session_reads_resources_and_gets_prompts() {
    let env = Env::new();
    write_config(&env, json!({ "everything": everything_stdio() }), &["everything"], json!({}));
    let script = [
        "/prompts",
        r#"/prompt args-prompt {"city": "New  York"}"#,
        "/prompt",
        "/read everything demo://resource/dynamic/text/3",
        "/read everything demo://resource/dynamic/blob/3",
        "/read everything",
        "/resources",
        "/help",
    ];
    let out = env
        .cmd(["session"])
        .write_stdin(script.join("\n") + "\n")
        .timeout(COMMAND_TIMEOUT)
        .output()
        .unwrap_or_else(|e| panic!("run session: {e}"));
    assert!(out.status.success());
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.first(), Some(&"prompts:"), "{text}");
    assert!(lines.contains(&"- everything | args-prompt | city, state? | A prompt with two arguments, one required and one optional"), "{text}");
    assert!(lines.contains(&"user: What's weather in New  York?"), "{text}");
    assert!(lines.contains(&"Usage: /prompt <name> [json]"), "{text}");
    assert!(
        lines.iter().any(|l| l.starts_with("Resource 3: This is a plaintext resource created at")),
        "{text}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("(binary resource demo://resource/dynamic/blob/3: text/plain, ")),
        "{text}"
    );
    assert!(lines.contains(&"Usage: /read <server> <uri>"), "{text}");
    assert!(lines.contains(&"resources:"), "{text}");
    assert!(lines.contains(&"- everything | demo://resource/dynamic/blob/{resourceId} | Dynamic Blob Resource | application/octet-stream"), "{text}");
    for help in [
        "/resources  Show the servers' resources and resource templates",
        "/read <server> <uri>  Read one resource",
        "/prompts  Show the servers' prompts",
        "/prompt <name> [json]  Get one prompt with JSON string arguments",
    ] {
        assert!(lines.contains(&help), "{help:?} missing from /help:\n{text}");
    }
}
