//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! `tests/conformance/install.sh`) against the built binary: every client scenario, the OAuth
//! ones included, each run through `tests/conformance/adapter.sh`, which drives toolport as a
//! person would (`mcp add`, `mcp enable`, `mcp login` with `tests/conformance/browser.sh` as
//! the browser, `tools --json`, `call`). The verdict is the suite's own,
//! judged against `tests/conformance/expected-failures.yml`: a scenario that fails without being
//! listed fails this test, and so does a listed one that passes, so the baseline stays true. A
//! suite that cannot be installed fails the test (it never skips).

use std::path::Path;
use std::process::Command;

use crate::support::common::toolport_path;

/// Scenarios issues 12 and 14 name; the suite's own list decides what runs, this only guards
/// against a listing that silently came back short.
const NAMED_IN_THE_ISSUES: &[&str] = &[
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
    "json-schema-2020-12-preservation",
    "auth/metadata-default",
    "auth/basic-cimd",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/authorization-server-migration",
    "auth/iss-wrong-issuer",
    "auth/resource-mismatch",
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
];

/// How many `auth/*` client scenarios the pinned suite lists: all must run.
const AUTH_SCENARIOS: usize = 33;

#[test]
fn client_scenarios_match_the_baseline() {
    let (out, stdout, stderr) = run_script("conformance/run.sh");
    assert!(out.status.success(), "the conformance run does not match the baseline:\n{stdout}\n{stderr}");
    let ran: Vec<&str> = stdout
        .lines()
        .filter_map(|line| line.strip_prefix("ok   ").or_else(|| line.strip_prefix("FAIL ")))
        .filter_map(|rest| rest.split_whitespace().next())
        .collect();
    for scenario in NAMED_IN_THE_ISSUES {
        assert!(ran.contains(scenario), "{scenario} did not run:\n{stdout}");
    }
    assert!(ran.iter().any(|s| s.starts_with("sep-2640-")), "no sep-2640 scenario ran:\n{stdout}");
    let auth = ran.iter().filter(|s| s.starts_with("auth/")).count();
    assert_eq!(auth, AUTH_SCENARIOS, "not every auth scenario ran:\n{stdout}");
}

/// Runs a conformance script of `tests/` against the built binary, in its target folder:
/// the exit status, stdout and stderr.
pub fn run_script(script: &str) -> (std::process::Output, String, String) {
    let bin = toolport_path();
    let target =
        bin.parent().and_then(Path::parent).unwrap_or_else(|| panic!("no target folder above {bin:?}"));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(script);
    let out = Command::new("bash")
        .arg(&script)
        .env("TOOLPORT_BIN", &bin)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("RUST_LOG")
        .env_remove("TOOLPORT_HOME")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, stdout, stderr)
}
