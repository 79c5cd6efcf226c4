//! A result over the workspace's `maxResultTokens` (`docs/src/configure/calls.md` "Large results"):
//! the caller gets its beginning and a note, the whole of it is stored byte for byte under
//! `<home>/results/`, and `serve` adds a resource link that `resources/read` answers with the whole
//! text. The server is the real demo-server, sending 30 MB.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::common::Env;
use crate::support::runtime::{demo, write_config};
use crate::support::serve::StdioClient;

/// What the demo-server's `big` sends with `--big-lines` (its documented generator): line i
/// is `{i:08} the quick brown fox jumps over the lazy dog\n`, cut at `size` bytes.
fn big_lines(size: usize) -> String {
    let mut text = String::with_capacity(size + 64);
    let mut i = 0usize;
    while text.len() < size {
        text.push_str(&format!("{i:08} the quick brown fox jumps over the lazy dog\n"));
        i += 1;
    }
    text.truncate(size);
    text
}

const THIRTY_MB: usize = 30 * 1024 * 1024;

/// A home whose one server `demo` runs `demo-server --big-lines`, with `workspace` keys.
fn big_env(workspace: Value) -> Env {
    let env = Env::new();
    write_config(&env, json!({ "demo": demo(&["--big-lines"]) }), &["demo"], workspace);
    env
}

fn run(env: &Env, args: &[&str]) -> (i32, String, String) {
    env.run(args, Duration::from_secs(300))
}

/// The stored file and URI a note names: `… is stored at <home>/results/<file>
/// (toolport://results/<id>)]`, the file as a path in `env`'s home.
fn stored_place(env: &Env, note: &str) -> (PathBuf, String) {
    let rest = note.split(" is stored at ").nth(1).unwrap_or_else(|| panic!("no place in {note:?}"));
    let (path, uri) = rest.rsplit_once(" (").unwrap_or_else(|| panic!("no uri in {note:?}"));
    let file = path.strip_prefix("<home>/results/").unwrap_or_else(|| panic!("not under <home>: {note:?}"));
    (env.home().join("results").join(file), uri.trim_end_matches(")]").to_string())
}

/// The files in `<home>/results/`, sorted.
fn stored_files(env: &Env) -> Vec<String> {
    let mut names: Vec<String> = match std::fs::read_dir(env.home().join("results")) {
        Ok(entries) => entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    names
}

#[test]
fn a_30_mb_result_through_call_is_previewed_and_stored_byte_identical() {
    let env = big_env(json!({}));
    let expected = big_lines(THIRTY_MB);
    let (code, stdout, stderr) = run(&env, &["call", "big", &format!(r#"{{"size": {THIRTY_MB}}}"#)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.len() < 1024 * 1024, "the preview is bounded: {} bytes printed", stdout.len());
    let (preview, note) = stdout.trim_end().rsplit_once('\n').unwrap_or_else(|| panic!("{stdout:.2000}"));
    assert!(preview.len() > 10_000 && expected.starts_with(preview), "the preview is the beginning");
    assert!(note.starts_with("[result truncated: 31457280 bytes, ~"), "{note}");
    assert!(note.contains(" tokens; the whole result is stored at "), "{note}");
    let (path, uri) = stored_place(&env, note);
    let id = uri.strip_prefix("toolport://results/").unwrap_or_else(|| panic!("{uri}"));
    assert!(id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
    assert_eq!(path, env.home().join("results").join(format!("{id}.txt")));
    let stored = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(stored == expected.as_bytes(), "the stored file is byte-identical to what the server sent");
}

#[test]
fn a_small_result_is_unchanged_and_nothing_is_stored() {
    let env = big_env(json!({}));
    let (code, stdout, stderr) = run(&env, &["call", "echo", r#"{"message": "hi"}"#]);
    assert_eq!((code, stdout.as_str()), (0, "hi\n"), "{stderr}");
    let (code, stdout, stderr) = run(&env, &["call", "--json", "big", r#"{"size": 60000}"#]);
    assert_eq!(code, 0, "{stderr}");
    let result: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout:.500}"));
    assert_eq!(
        result,
        json!({ "content": [{ "type": "text", "text": big_lines(60000) }], "isError": false })
    );
    assert!(stored_files(&env).is_empty(), "{:?}", stored_files(&env));
}

#[test]
fn call_json_keeps_its_shape_and_the_folder_bound_removes_the_oldest_first() {
    // 50 tokens at most; the folder holds 25 000 bytes: two of the 10 000-byte results.
    let env = big_env(json!({ "maxResultTokens": 50, "maxResultsFolderBytes": 25000 }));
    let mut stored = Vec::new();
    for _ in 0..3 {
        let (code, stdout, stderr) = run(&env, &["call", "--json", "big", r#"{"size": 10000}"#]);
        assert_eq!(code, 0, "{stderr}");
        let result: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout:.500}"));
        let content = result["content"].as_array().cloned().unwrap_or_default();
        assert_eq!(content.len(), 2, "the preview block and the note block: {result}");
        // A bound too small for a note: half of it is the preview.
        assert_eq!(content[0]["type"], "text");
        let preview = content[0]["text"].as_str().unwrap_or_default();
        assert!(!preview.is_empty() && big_lines(10000).starts_with(preview), "{result}");
        let note = content[1]["text"].as_str().unwrap_or_default();
        assert!(note.starts_with("[result truncated: 10000 bytes, ~"), "{note}");
        let (path, uri) = stored_place(&env, note);
        let meta = &content[1]["_meta"]["toolport/storedResult"];
        assert_eq!(meta["uri"], uri.as_str(), "{result}");
        let file = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        assert_eq!(meta["path"], format!("<home>/results/{file}"), "{result}");
        assert_eq!((meta["bytes"].as_u64(), meta["mimeType"].as_str()), (Some(10000), Some("text/plain")));
        assert_eq!(result["isError"], false);
        stored.push(path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default());
        // Modification times a filesystem with coarse clocks still tells apart.
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut expected = stored[1..].to_vec();
    expected.sort();
    assert_eq!(stored_files(&env), expected, "the oldest result went first");
}

#[test]
fn a_max_result_tokens_that_is_not_a_positive_integer_is_a_configuration_error() {
    for bad in [json!(0), json!("25000")] {
        let env = big_env(json!({ "maxResultTokens": bad }));
        let (code, _, stderr) = run(&env, &["call", "echo", r#"{"message": "hi"}"#]);
        let file = env.workspace_file();
        let expected = format!("{}: \"maxResultTokens\" must be a positive integer (tokens)", file.display());
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains(&expected), "{stderr}");
    }
}

#[test]
fn serve_returns_the_preview_the_note_and_a_link_that_reads_the_whole_text() {
    let env = big_env(json!({}));
    let expected = big_lines(THIRTY_MB);
    let mut client = StdioClient::start(&env, &[]);
    let answer = client.request("tools/call", json!({ "name": "big", "arguments": { "size": THIRTY_MB } }));
    let result = &answer["result"];
    let content = result["content"].as_array().cloned().unwrap_or_else(|| panic!("{answer:.2000}"));
    assert_eq!(content.len(), 3, "preview, note, link: {answer:.2000}");
    let preview = content[0]["text"].as_str().unwrap_or_default();
    assert!(preview.len() > 10_000 && expected.starts_with(preview), "the preview is the beginning");
    let note = content[1]["text"].as_str().unwrap_or_default();
    assert!(note.starts_with("[result truncated: 31457280 bytes, ~"), "{note}");
    let (path, uri) = stored_place(&env, note);
    let id = uri.trim_start_matches("toolport://results/");
    assert_eq!(
        content[2],
        json!({ "type": "resource_link", "uri": uri, "name": format!("result-{id}"),
                "description": "The whole result, as the server sent it",
                "mimeType": "text/plain", "size": THIRTY_MB })
    );
    assert_eq!(result["isError"], false);
    let read = client.request("resources/read", json!({ "uri": uri }));
    let contents = &read["result"]["contents"][0];
    assert_eq!(
        (contents["uri"].as_str(), contents["mimeType"].as_str()),
        (Some(uri.as_str()), Some("text/plain"))
    );
    assert!(contents["text"].as_str() == Some(expected.as_str()), "resources/read returns the whole text");
    let stored = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(stored == expected.as_bytes());
    // An id nothing stored, and one that tries to leave the folder: clear errors.
    let unknown = "toolport://results/0123456789abcdef0123456789abcdef";
    let missing = client.request("resources/read", json!({ "uri": unknown }));
    let message = missing["error"]["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("no stored result 0123456789abcdef0123456789abcdef in "), "{missing}");
    let escape = client.request("resources/read", json!({ "uri": "toolport://results/../mcp.json" }));
    let message = escape["error"]["message"].as_str().unwrap_or_default();
    assert_eq!(message, r#"not a stored result id: "../mcp.json""#, "{escape}");
}

#[test]
fn the_sessions_call_gets_the_same_preview_and_note() {
    let env = big_env(json!({ "maxResultTokens": 100 }));
    let mut session = crate::support::session::Scripted::start(&env);
    let answer = session.run(r#"/call big {"size": 20000}"#);
    let (preview, note) = answer.trim_end().rsplit_once('\n').unwrap_or_else(|| panic!("{answer}"));
    assert!(!preview.is_empty() && big_lines(20000).starts_with(preview), "{answer}");
    assert!(note.starts_with("[result truncated: 20000 bytes, ~"), "{answer}");
    let (path, _) = stored_place(&env, note);
    let stored = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(stored == big_lines(20000).as_bytes());
}
