//! What the tool surface costs in tokens (issue 17, item 2): `tools --tokens [--json]` and the
//! session's `/tools tokens`, on the binary's `demo-server`. Each tool's count is the host's
//! tokenizer (o200k_base) over its shaped definition as `tools --json` prints it; servers and the
//! total add up; both are sorted dearest first; a filtered tool costs nothing.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::common::Env;
use crate::support::runtime::{demo, write_config};
use crate::support::session::Scripted;

/// Two servers of different sizes, one of them filtered down.
fn two_servers() -> Env {
    let env = Env::new();
    let mut small = demo(&["--prefix", "s_"]);
    small["tools"] = json!({"exclude": ["s_big", "s_fail"]});
    let servers = json!({"large": demo(&["--tools", "12"]), "small": small});
    write_config(&env, servers, &["large", "small"], json!({}));
    env
}

fn stdout(env: &Env, args: &[&str]) -> String {
    let out = env.cmd(args).timeout(Duration::from_secs(90)).output().unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The name of a shaped tool, whatever the shape.
fn name_of(tool: &Value) -> &str {
    tool.pointer("/function/name").or_else(|| tool.get("name")).and_then(Value::as_str).unwrap_or_default()
}

/// Checks `costs` against the definitions `tools --json` printed in the same shape.
fn check_against(costs: &Value, tools: &[Value]) {
    let counted = costs["tools"].as_array().cloned().unwrap_or_default();
    assert_eq!(counted.len(), tools.len(), "{costs}");
    for tool in tools {
        let name = name_of(tool);
        let cost = counted.iter().find(|c| c["name"] == name).unwrap_or_else(|| panic!("{name} not counted"));
        assert_eq!(cost["tokens"], toolport::display::count_tokens(&tool.to_string()), "{name}");
    }
    let sum: u64 = counted.iter().filter_map(|c| c["tokens"].as_u64()).sum();
    assert_eq!(costs["total"], sum, "the tools add up to the total");
    let servers = costs["servers"].as_array().cloned().unwrap_or_default();
    let server_sum: u64 = servers.iter().filter_map(|s| s["tokens"].as_u64()).sum();
    assert_eq!(server_sum, sum, "the servers add up to the total");
    let shares: f64 = servers.iter().filter_map(|s| s["share"].as_f64()).sum();
    assert!((shares - 100.0).abs() < 0.2, "shares {shares}");
    let dearest_first =
        |list: &[Value]| list.windows(2).all(|w| w[0]["tokens"].as_u64() >= w[1]["tokens"].as_u64());
    assert!(dearest_first(&counted) && dearest_first(&servers), "{costs}");
}

#[test]
fn each_tool_costs_its_shaped_definition_and_the_parts_add_up() {
    let env = two_servers();
    let costs = json_of(&stdout(&env, &["tools", "--tokens", "--json"]));
    assert_eq!(costs["tokenizer"], "o200k_base");
    assert_eq!(costs["shape"], "openai");
    let tools = json_of(&stdout(&env, &["tools", "--json"]));
    check_against(&costs, tools.as_array().map(Vec::as_slice).unwrap_or_default());
    let servers = &costs["servers"];
    assert_eq!(servers[0]["server"], "large", "{costs}");
    assert_eq!(servers[0]["tools"], 18);
    assert_eq!(servers[1]["server"], "small");
    assert_eq!(servers[1]["tools"], 4, "the filtered tools cost nothing: {costs}");
    assert!(costs["tools"].as_array().is_some_and(|t| t.iter().all(|c| c["name"] != "s_big")));
}

#[test]
fn another_shape_is_counted_in_that_shape() {
    let env = two_servers();
    let costs = json_of(&stdout(&env, &["tools", "--tokens", "--json", "--shape", "anthropic"]));
    assert_eq!(costs["shape"], "anthropic");
    let tools = json_of(&stdout(&env, &["tools", "--json", "--shape", "anthropic"]));
    check_against(&costs, tools.as_array().map(Vec::as_slice).unwrap_or_default());
    let openai = json_of(&stdout(&env, &["tools", "--tokens", "--json"]));
    assert_ne!(openai["total"], costs["total"], "the shapes' definitions differ");
}

#[test]
fn the_text_view_and_the_sessions_are_the_same_tables() {
    let env = two_servers();
    let text = stdout(&env, &["tools", "--tokens"]);
    let costs = json_of(&stdout(&env, &["tools", "--tokens", "--json"]));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0].split_whitespace().collect::<Vec<_>>(), ["SERVER", "TOOLS", "TOKENS", "SHARE"]);
    let large = lines[1].split_whitespace().collect::<Vec<_>>();
    let share = format!("{:.1}%", costs["servers"][0]["share"].as_f64().unwrap_or_default());
    assert_eq!(large, ["large", "18", &costs["servers"][0]["tokens"].to_string(), &share], "{text}");
    let total = format!("total: {} tokens in 22 tools (o200k_base, openai shape)", costs["total"]);
    assert_eq!(lines.last().copied(), Some(total.as_str()), "{text}");
    let mut session = Scripted::start(&env);
    assert_eq!(session.run("/tools tokens"), text);
    assert_eq!(session.run("/tools tokens nosuch x"), "Usage: /tools [tokens] [shape]\n");
    assert!(session.quit().success());
}
