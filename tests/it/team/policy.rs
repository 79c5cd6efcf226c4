//! Per-caller authorization with Cedar (issue 30): a policy file decides what each caller of
//! `toolport serve --http` sees and may use. Real servers (server-everything, whose tools carry
//! annotations, and the demo server), real JWTs from the test issuer (tests/team/issuer.py),
//! the Python SDK's default `mcp.Client` (tests/team/access_client.py); `toolport policy check`
//! and a bad policy file as a user meets them.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::serve::clients::python;
use crate::support::common::Env;
use crate::support::issuer::Issuer;
use crate::support::peers::everything_stdio;
use crate::support::runtime::{demo, write_config};
use crate::support::serve::ServeHttp;

/// Group `docs` may call only the docs server's read-only tools; group `admin` anything.
pub const DOCS_POLICY: &str = r#"
@id("docs-read-only")
permit(principal in Group::"docs", action == Action::"call", resource in Server::"docs")
when { resource.annotations has readOnlyHint && resource.annotations.readOnlyHint };

@id("admins")
permit(principal in Group::"admin", action, resource);
"#;

/// `docs` is server-everything, `demo` the demo server with its tools as `demo_*` and two
/// resources.
pub fn two_servers(env: &Env, extra: Value) {
    let servers = json!({
        "docs": everything_stdio(),
        "demo": demo(&["--prefix", "demo_", "--resources", "2"]),
    });
    write_config(env, servers, &["docs", "demo"], extra);
}

/// `tests/team/access_client.py` against `url` with `token`; what it saw.
pub fn access_client(url: &str, token: Option<&str>, extra: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("team/access_client.py");
    let mut command = Command::new(python());
    command.arg(&script).args(["--url", url]).args(extra);
    if let Some(token) = token {
        command.args(["--token", token]);
    }
    let out = command.output().unwrap_or_else(|e| panic!("run access_client.py: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let seen: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|_| {
        panic!("access_client.py printed no JSON:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr))
    });
    assert!(seen.get("error").is_none(), "access_client.py failed: {seen}");
    seen
}

/// The strings of `seen[key]`.
pub fn strings(seen: &Value, key: &str) -> Vec<String> {
    let list = seen[key].as_array().cloned().unwrap_or_default();
    list.iter().filter_map(|v| v.as_str().map(str::to_string)).collect()
}

/// A call's texts, as the client got them.
pub fn call_text(seen: &Value, tool: &str) -> String {
    let call = &seen["calls"][tool];
    let texts = call["texts"].as_array().cloned().unwrap_or_default();
    let texts: Vec<&str> = texts.iter().filter_map(Value::as_str).collect();
    format!("is_error={} {}", call["is_error"], texts.join(" | "))
}

/// Every line of the audit log, parsed.
pub fn audit_lines(env: &Env) -> Vec<Value> {
    let text = std::fs::read_to_string(env.home().join("audit/calls.jsonl")).unwrap_or_default();
    text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

const AUDIENCE: &str = "toolport-team-test";
/// How long an edit may take to reach serve (a file watch, then 150 ms of settling).
const WITHIN: std::time::Duration = std::time::Duration::from_secs(20);

/// The issue's done-when: group `docs` calls only the docs server's read-only tools, checked in
/// the lists and the calls of two principals, one in `docs` and one in `admin`.
#[test]
fn group_docs_calls_only_the_docs_servers_read_only_tools() {
    let env = Env::new();
    two_servers(&env, json!({}));
    // The default place: <home>/policy.cedar.
    std::fs::write(env.home().join("policy.cedar"), DOCS_POLICY).unwrap_or_else(|e| panic!("{e}"));
    let issuer = Issuer::start();
    let serve = ServeHttp::start_with(
        &env,
        &["--auth", "oidc", "--issuer", &issuer.url, "--audience", AUDIENCE],
        &[],
    );
    let token = |sub: &str, group: &str| {
        issuer.mint(json!({"sub": sub, "groups": [group], "aud": AUDIENCE, "client_id": "team-test"}))
    };
    let alice = token("alice", "docs");
    let bob = token("bob", "admin");
    let calls = [
        "--call",
        "echo={\"message\": \"hi\"}",
        "--call",
        "toggle-simulated-logging",
        "--call",
        "demo_echo={\"message\": \"hi\"}",
        "--call",
        "no-such-tool",
        "--read",
        "demo://item/1",
    ];
    let seen_by_alice = access_client(&serve.url, Some(&alice), &calls);
    let seen_by_bob = access_client(&serve.url, Some(&bob), &calls);

    // Bob sees everything: both servers' tools, read-only or not, and the resources.
    let bobs = strings(&seen_by_bob, "tools");
    for tool in ["echo", "toggle-simulated-logging", "demo_echo"] {
        assert!(bobs.contains(&tool.to_string()), "bob does not see {tool}: {bobs:?}");
    }
    assert!(strings(&seen_by_bob, "resources").contains(&"demo://item/1".to_string()), "{seen_by_bob}");
    assert_eq!(call_text(&seen_by_bob, "demo_echo"), "is_error=false hi");
    assert_eq!(call_text(&seen_by_bob, "toggle-simulated-logging").split(' ').next(), Some("is_error=false"));
    assert_eq!(seen_by_bob["reads"]["demo://item/1"]["contents"], 1);

    // Alice sees exactly the docs server's read-only tools (the demo server's carry no
    // annotation, so every read-only tool bob sees is the docs server's), and no resource.
    let alices = strings(&seen_by_alice, "tools");
    assert!(alices.contains(&"echo".to_string()), "{alices:?}");
    assert_eq!(alices, strings(&seen_by_bob, "read_only"));
    assert_eq!(strings(&seen_by_alice, "resources"), Vec::<String>::new());
    assert_eq!(strings(&seen_by_alice, "prompts"), Vec::<String>::new());
    assert_eq!(call_text(&seen_by_alice, "echo"), "is_error=false Echo: hi");
    // A denied tool is answered as an unknown one: its existence does not leak.
    let unknown = call_text(&seen_by_alice, "no-such-tool");
    assert!(unknown.starts_with("is_error=true "), "{unknown}");
    for denied in ["toggle-simulated-logging", "demo_echo"] {
        assert_eq!(call_text(&seen_by_alice, denied), unknown.replace("no-such-tool", denied));
    }
    let read = seen_by_alice["reads"]["demo://item/1"]["raised"].as_str().unwrap_or_default();
    assert!(read.contains("Unknown MCP resource: demo://item/1"), "{seen_by_alice}");

    // Every decision on a call or read is in the audit log: the denials with the word
    // `policy`, the allowed call with the policy that let it through.
    let lines = audit_lines(&env);
    let denied: Vec<(String, String)> = lines
        .iter()
        .filter(|l| l["outcome"] == "denied")
        .map(|l| {
            (
                l["kind"].as_str().unwrap_or_default().to_string(),
                l.get("tool").or(l.get("uri")).and_then(Value::as_str).unwrap_or_default().to_string(),
            )
        })
        .collect();
    for expected in [("call", "toggle-simulated-logging"), ("call", "demo_echo"), ("read", "demo://item/1")] {
        assert!(
            denied.contains(&(expected.0.to_string(), expected.1.to_string())),
            "{expected:?} not in {denied:?}"
        );
    }
    assert!(lines.iter().filter(|l| l["outcome"] == "denied").all(|l| l["error"] == "policy"), "{lines:?}");
    let permitted = |by: &str| {
        lines.iter().any(|l| l["tool"] == "echo" && l["outcome"] == "ok" && l["policies"] == json!([by]))
    };
    assert!(permitted("docs-read-only") && permitted("admins"), "{lines:?}");
}

/// With a policy and no caller (no `--auth`), a request is `User::"anonymous"`'s; the lazy
/// surface's search, describe and call answer by the same scope as the lists.
#[test]
fn without_a_caller_the_policy_decides_for_anonymous_on_the_lazy_surface_too() {
    let env = Env::new();
    two_servers(&env, json!({}));
    let policy = env.home().join("team.cedar");
    let text = "permit(principal == User::\"anonymous\", action == Action::\"call\", resource == Tool::\"demo/demo_echo\");";
    std::fs::write(&policy, text).unwrap_or_else(|e| panic!("{e}"));
    let policy = policy.to_string_lossy().into_owned();
    let serve = ServeHttp::start_with(&env, &["--policy", &policy], &[]);
    let seen = access_client(&serve.url, None, &["--call", "echo={\"message\": \"x\"}"]);
    assert_eq!(strings(&seen, "tools"), ["demo_echo"]);
    assert!(call_text(&seen, "echo").starts_with("is_error=true "), "{seen}");
    drop(serve);

    let serve = ServeHttp::start_with(&env, &["--policy", &policy, "--lazy"], &[]);
    let seen = access_client(
        &serve.url,
        None,
        &[
            "--call",
            "search_tools={\"query\": \"echo message\", \"limit\": 50}",
            "--call",
            "describe_tool={\"name\": \"echo\"}",
            "--call",
            "call_tool={\"name\": \"demo_echo\", \"arguments\": {\"message\": \"lazy\"}}",
        ],
    );
    let found = call_text(&seen, "search_tools");
    assert!(found.contains("\"demo_echo\"") && !found.contains("\"echo\""), "{found}");
    assert!(call_text(&seen, "describe_tool").starts_with("is_error=true "), "{seen}");
    assert_eq!(call_text(&seen, "call_tool"), "is_error=false lazy");
}

/// serve follows its policy file: an edit applies to the next request (and every client is
/// told its lists changed), an edit that does not parse is reported with its line and column
/// and changes nothing, and a removed file keeps the policy read last.
#[test]
fn an_edited_policy_applies_without_a_restart_and_a_broken_edit_changes_nothing() {
    let env = Env::new();
    two_servers(&env, json!({}));
    let file = env.home().join("team.cedar");
    let only_echo = "permit(principal == User::\"anonymous\", action == Action::\"call\", resource == Tool::\"demo/demo_echo\");";
    std::fs::write(&file, only_echo).unwrap_or_else(|e| panic!("{e}"));
    let serve = ServeHttp::start_with(&env, &["--policy", &file.to_string_lossy()], &[]);
    let tools = || strings(&access_client(&serve.url, None, &[]), "tools");
    assert_eq!(tools(), ["demo_echo"]);

    let whole_demo =
        "permit(principal == User::\"anonymous\", action == Action::\"call\", resource in Server::\"demo\");";
    std::fs::write(&file, whole_demo).unwrap_or_else(|e| panic!("{e}"));
    serve.wait_for_line("as edited", WITHIN);
    let now = tools();
    assert!(now.len() > 1 && now.iter().all(|t| t.starts_with("demo_")), "{now:?}");

    std::fs::write(&file, "permit(principal, action resource);").unwrap_or_else(|e| panic!("{e}"));
    let said = serve.wait_for_line("the edited policy was not applied", WITHIN);
    assert!(said.contains(&format!("{}:1:", file.display())), "{said}");
    assert_eq!(tools(), now);

    std::fs::remove_file(&file).unwrap_or_else(|e| panic!("{e}"));
    let said = serve.wait_for_line("was removed", WITHIN);
    assert!(said.contains("the policy read last stays in force until serve restarts"), "{said}");
    assert_eq!(tools(), now);
}

fn toolport(env: &Env, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["policy", "check"];
    all.extend_from_slice(args);
    env.run(&all, std::time::Duration::from_secs(60))
}

fn policy_file(env: &Env, text: &str) -> PathBuf {
    let file = env.home().join("policy.cedar");
    std::fs::write(&file, text).unwrap_or_else(|e| panic!("{e}"));
    file
}

/// `toolport policy check` explains one decision: the policies that decided, or that none
/// permits it; exit 0 allow, 1 deny, 2 bad input.
#[test]
fn policy_check_explains_a_decision() {
    let env = Env::new();
    let file = policy_file(
        &env,
        &format!(
            "{DOCS_POLICY}\n@id(\"no-destructive\")\nforbid(principal, action, resource) when {{ resource has annotations && resource.annotations has destructiveHint && resource.annotations.destructiveHint }};\n"
        ),
    );
    let shown = file.display().to_string();
    let (code, out, err) = toolport(
        &env,
        &[
            "--principal",
            "alice",
            "--group",
            "docs",
            "--tool",
            "docs/echo",
            "--annotation",
            "readOnlyHint=true",
        ],
    );
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    assert_eq!(
        out,
        format!(
            "{shown} User::\"alice\" in Group::\"docs\" call Tool::\"docs/echo\"\n\
             annotations: readOnlyHint=true (as given)\n\
             allow: permitted by docs-read-only\n"
        )
    );
    let (code, out, _) = toolport(&env, &["--principal", "alice", "--group", "docs", "--tool", "docs/write"]);
    assert_eq!(code, 1);
    assert!(
        out.ends_with(
            "annotations: none (not pinned in .toolport/tools.lock; give --annotation NAME=BOOL)\n\
             deny: no policy permits it (deny by default)\n"
        ),
        "{out}"
    );
    let (code, out, _) = toolport(
        &env,
        &[
            "--principal",
            "bob",
            "--group",
            "admin",
            "--tool",
            "demo/rm",
            "--annotation",
            "destructiveHint=true",
        ],
    );
    assert_eq!(code, 1);
    assert!(out.ends_with("deny: forbidden by no-destructive\n"), "{out}");
    let (code, out, _) = toolport(
        &env,
        &["--principal", "bob", "--group", "admin", "--resource", "demo://item/1", "--server", "demo"],
    );
    assert_eq!(code, 0);
    assert!(out.ends_with("read Resource::\"demo://item/1\"\nallow: permitted by admins\n"), "{out}");
    let (code, out, _) = toolport(
        &env,
        &["--principal", "alice", "--group", "docs", "--prompt", "docs/simple-prompt", "--action", "list"],
    );
    assert_eq!(code, 1);
    assert!(
        out.ends_with("list Prompt::\"docs/simple-prompt\"\ndeny: no policy permits it (deny by default)\n"),
        "{out}"
    );

    // The operator's endpoints: `operate`, which the `admins` policy permits and nothing
    // permits group `docs`.
    let (code, out, _) = toolport(&env, &["--principal", "bob", "--group", "admin", "--endpoint", "/status"]);
    assert_eq!(code, 0);
    assert!(out.ends_with("operate Endpoint::\"/status\"\nallow: permitted by admins\n"), "{out}");
    let (code, out, _) =
        toolport(&env, &["--principal", "alice", "--group", "docs", "--endpoint", "/metrics"]);
    assert_eq!(code, 1);
    assert!(
        out.ends_with("operate Endpoint::\"/metrics\"\ndeny: no policy permits it (deny by default)\n"),
        "{out}"
    );

    // Bad input: exit 2 with what to give instead.
    let (code, _, err) = toolport(&env, &["--principal", "a", "--tool", "echo"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "toolport: --tool must be SERVER/NAME (the server's configured name, a slash, the name), not \"echo\"\n"
    );
    let (code, _, err) =
        toolport(&env, &["--principal", "a", "--tool", "a/b", "--annotation", "readOnly=yes"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "toolport: --annotation must be NAME=true|false with NAME one of readOnlyHint, destructiveHint, idempotentHint, openWorldHint, not \"readOnly=yes\"\n"
    );
    let (code, _, err) = toolport(&env, &["--principal", "a", "--tool", "a/b", "--action", "get"]);
    assert_eq!(
        (code, err.as_str()),
        (2, "toolport: --action must be call, list, read, prompt or operate, not \"get\"\n")
    );
    let other = Env::new();
    let (code, _, err) = toolport(&other, &["--principal", "a", "--tool", "a/b"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        format!(
            "toolport: no policy file: {} does not exist (give --policy FILE)\n",
            other.home().join("policy.cedar").display()
        )
    );
}

/// A policy file that does not parse names its file, line and column, for `policy check` and
/// for `serve`, which does not start (exit 2).
#[test]
fn a_bad_policy_file_names_its_line_and_column() {
    let env = Env::new();
    let file =
        policy_file(&env, "permit(principal, action, resource);\n\npermit(principal, action resource);\n");
    let expected = format!("toolport: {}:3:26: unexpected token `resource`", file.display());
    let (code, _, err) = toolport(&env, &["--principal", "a", "--tool", "a/b"]);
    assert_eq!(code, 2);
    assert!(err.starts_with(&expected), "{err}");
    write_config(&env, json!({}), &[], json!({}));
    let (code, _, err) = env.run(&["serve", "--http", "127.0.0.1:0"], std::time::Duration::from_secs(60));
    assert_eq!(code, 2);
    assert!(err.starts_with(&expected), "{err}");
}
