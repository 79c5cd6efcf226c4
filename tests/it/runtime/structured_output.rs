//! Structured output through the binary: `structuredContent` checked against the tool's
//! `outputSchema`. A conforming result from the real server-everything passes and `call --json`
//! prints all of it; the demo server's `--bad-structured` tools break their schemas in each way
//! the check knows, and a schema that cannot be compiled costs only that tool its check.

use serde_json::{Value, json};

use crate::support::common::Env;
use crate::support::peers::everything_stdio;
use crate::support::runtime::{demo, names, write_config};

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(env: &Env, args: &[&str]) -> Run {
    let out = env.cmd(args).output().unwrap_or_else(|e| panic!("run toolport {args:?}: {e}"));
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The line `toolport call` printed for its error (stderr also carries the log).
fn error_line(r: &Run) -> &str {
    r.stderr.lines().find(|l| l.starts_with("toolport: ")).unwrap_or_else(|| panic!("no error: {}", r.stderr))
}

fn bad_structured_env() -> Env {
    let env = Env::new();
    write_config(&env, json!({ "demo": demo(&["--bad-structured"]) }), &["demo"], json!({}));
    env
}

#[test]
fn server_everything_structured_content_passes_its_schema_and_call_json_shows_it() {
    let env = Env::new();
    write_config(&env, json!({ "everything": everything_stdio() }), &["everything"], json!({}));
    let r = run(&env, &["call", "get-structured-content", r#"{"location": "Chicago"}"#, "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let result: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("json: {e}: {}", r.stdout));
    assert_eq!(result["isError"], json!(false), "{result}");
    // The server sends the same weather twice: as text for old clients, and structured.
    let text = result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text block: {result}"));
    let from_text: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("text is not JSON: {e}"));
    assert_eq!(result["structuredContent"], from_text, "{result}");
    assert!(result["structuredContent"]["temperature"].is_number(), "{result}");
    let keys: Vec<&String> = result.as_object().map(|o| o.keys().collect()).unwrap_or_default();
    assert_eq!(keys, ["content", "structuredContent", "isError"]);
    // Without --json, the text as before.
    let plain = run(&env, &["call", "get-structured-content", r#"{"location": "Chicago"}"#]);
    assert_eq!((plain.code, plain.stdout.trim_end()), (0, text), "{}", plain.stderr);
}

#[test]
fn a_result_that_breaks_its_output_schema_is_a_call_error_naming_the_path() {
    let env = bad_structured_env();
    let mismatch = run(&env, &["call", "mismatch"]);
    assert_eq!((mismatch.code, mismatch.stdout.as_str()), (1, ""));
    assert_eq!(
        error_line(&mismatch),
        r#"toolport: MCP tool mismatch on server demo returned an invalid result: structuredContent at /count breaks its outputSchema ("type"): "five" is not of type "integer""#
    );
    // --json prints a result, and there is none.
    let json = run(&env, &["call", "mismatch", "--json"]);
    assert_eq!((json.code, json.stdout.as_str(), error_line(&json)), (1, "", error_line(&mismatch)));

    let unstructured = run(&env, &["call", "unstructured"]);
    assert_eq!(unstructured.code, 1);
    assert_eq!(
        error_line(&unstructured),
        "toolport: MCP tool unstructured on server demo returned an invalid result: no structuredContent, but the tool has an outputSchema"
    );
}

#[test]
fn an_is_error_result_is_not_checked_against_the_output_schema() {
    let env = bad_structured_env();
    let refused = run(&env, &["call", "refused"]);
    assert_eq!((refused.code, refused.stdout.as_str()), (1, "no apples today\n"), "{}", refused.stderr);
    let json = run(&env, &["call", "refused", "--json"]);
    let result: Value =
        serde_json::from_str(&json.stdout).unwrap_or_else(|e| panic!("json: {e}: {}", json.stdout));
    assert_eq!(result, json!({"content": [{"type": "text", "text": "no apples today"}], "isError": true}));
}

#[test]
fn an_output_schema_that_does_not_compile_only_skips_that_tools_check() {
    let env = bad_structured_env();
    let tools = run(&env, &["tools", "--json"]);
    assert_eq!(tools.code, 0, "{}", tools.stderr);
    let listed: Vec<Value> = serde_json::from_str(&tools.stdout).unwrap_or_else(|e| panic!("json: {e}"));
    assert_eq!(names(&listed)[6..], ["mismatch", "unstructured", "refused", "bad_schema", "remote_schema"]);
    let status = run(&env, &["mcp", "list", "--json"]);
    let status: Value = serde_json::from_str(&status.stdout).unwrap_or_else(|e| panic!("json: {e}"));
    assert_eq!(status["servers"][0]["state"], json!("connected"), "{status}");

    // The same answer as `mismatch`, but nothing to check it against: it passes, and the
    // warning says why.
    let bad = run(&env, &["call", "bad_schema", "--json"]);
    assert_eq!(bad.code, 0, "{}", bad.stderr);
    let result: Value =
        serde_json::from_str(&bad.stdout).unwrap_or_else(|e| panic!("json: {e}: {}", bad.stdout));
    assert_eq!(result["structuredContent"], json!({"count": "five", "unit": "apple"}));
    let warned = |r: &Run, tool: &str| {
        r.stderr
            .lines()
            .find(|l| l.contains(&format!("outputSchema of tool {tool} on server demo does not compile (")))
            .map(str::to_string)
            .unwrap_or_else(|| panic!("no warning for {tool}: {}", r.stderr))
    };
    assert!(warned(&bad, "bad_schema").contains("its structuredContent will not be validated"));
    // A `$ref` to a URL is refused, never fetched.
    let remote = run(&env, &["call", "remote_schema"]);
    assert_eq!((remote.code, remote.stdout.as_str()), (0, "five apples\n"), "{}", remote.stderr);
    assert!(
        warned(&remote, "remote_schema").contains("http://127.0.0.1:9/never-fetched.json"),
        "{}",
        remote.stderr
    );
}
