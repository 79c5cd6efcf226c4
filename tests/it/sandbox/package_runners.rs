//! `npx -y` inside the sandbox (issue 46, "how `npx -y …` servers start"): the package runner
//! downloads through the egress proxy like any client, so with its registry not granted the
//! start fails, naming the grant and the command that adds it; that command, run as printed,
//! is enough for the next start, whose download lands in the server's private `HOME`.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::common::Env;
use crate::support::runtime::write_config;

/// The package, pinned (the version the peers' `server-memory` tests know).
const PACKAGE: &str = "@modelcontextprotocol/server-memory@2026.8.31";
const REGISTRY: &str = "https://registry.npmjs.org:443";

fn listed(env: &Env) -> Value {
    let (code, out, err) = env.run(&["mcp", "list", "--json"], Duration::from_secs(120));
    assert_eq!(code, 0, "{out}{err}");
    let all: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    all["servers"].as_array().and_then(|s| s.iter().find(|s| s["name"] == "mem")).cloned().unwrap_or_default()
}

#[test]
fn npx_starts_once_its_registry_is_granted_by_the_command_its_refusal_prints() {
    let env = Env::new();
    let mem = json!({ "command": "npx", "args": ["-y", PACKAGE], "sandbox": true });
    write_config(&env, json!({ "mem": mem }), &["mem"], json!({}));

    let row = listed(&env);
    assert_eq!(row["state"], "error", "{row}");
    let error = row["error"].as_str().unwrap_or_default().to_string();
    let expected =
        format!("not granted: {REGISTRY} (grant it with: toolport mcp grant mem --host {REGISTRY}); ");
    assert!(error.starts_with(&expected), "{error}");
    assert!(error.contains("403"), "npm's own words name the refusal: {error}");

    // The command as printed, shell words and all.
    let printed = &error["not granted: ".len()..];
    let printed = &printed[printed.find("toolport ").unwrap_or(0)..printed.find(')').unwrap_or(0)];
    let words = shlex::split(printed).unwrap_or_else(|| panic!("not shell words: {printed}"));
    let (code, out, err) =
        env.run(&words.iter().skip(1).map(String::as_str).collect::<Vec<_>>(), Duration::from_secs(30));
    assert_eq!((code, out.as_str()), (0, format!("granted mem: host {REGISTRY}\n").as_str()), "{err}");

    let row = listed(&env);
    assert_eq!(row["state"], "connected", "{row}");
    assert_eq!(row["tools"], 9, "{row}");
}
