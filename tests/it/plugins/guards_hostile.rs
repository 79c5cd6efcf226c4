//! Hostile guards (issue 48): a guard that traps, loops, answers with 40 MB, rewrites a call
//! into what its tool's schema refuses or a result into what is no result. Each can break only
//! the request it was asked about: fail-closed it refuses that request with what went wrong;
//! under `failOpen` the request goes on and the failure is recorded; the next call is served.
//! `fixture_guard_hostile` reads what to do from the call's `message` (`plugins/fixtures/
//! guard-hostile`), and runs with a 1 s `callMs`.

use serde_json::{Value, json};

use super::guards::{call, guard_trail, servers};
use crate::support::common::Env;

/// `everything__echo` of `message` under the hostile guard with `fail_open`: exit status,
/// stdout, stderr.
fn echo(env: &Env, fail_open: bool, message: &str) -> (i32, String, String) {
    servers(env, json!([{"plugin": "hostile", "failOpen": fail_open}]), json!({}));
    call(env, "everything__echo", &json!({ "message": message }))
}

/// Asserts a fail-closed refusal of `message` whose reason contains `why`.
fn refused(env: &Env, message: &str, why: &str) {
    let (code, stdout, stderr) = echo(env, false, message);
    assert_eq!(code, 1, "{message}: {stdout}");
    assert!(
        stderr.contains("MCP tool everything__echo on server everything was refused by guard hostile: "),
        "{message}: {stderr}"
    );
    assert!(stderr.contains(why), "{message}: {stderr}");
    assert!(stderr.contains("(the guard does not fail open: failOpen is false)"), "{stderr}");
}

#[test]
fn a_trap_refuses_the_call_and_the_next_one_is_served() {
    let env = Env::new();
    refused(&env, "trap", "crashed: panicked at");
    let (code, stdout, stderr) = echo(&env, false, "fine");
    assert_eq!((code, stdout.trim_end()), (0, "Echo: fine"), "{stderr}");
    let (code, stdout, stderr) = echo(&env, true, "trap");
    assert_eq!((code, stdout.trim_end()), (0, "Echo: trap"), "fails open: {stderr}");
    let failed: Vec<Value> = guard_trail(&env).into_iter().filter(|l| l["action"] == "failed").collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["reason"], "guard hostile failed (failOpen): went on the tools/call request");
}

#[test]
fn a_busy_loop_is_stopped_at_its_time_limit() {
    let env = Env::new();
    refused(&env, "loop", "exceeded its time limit (1000 ms)");
}

#[test]
fn a_huge_mutation_is_refused_at_its_cap() {
    let env = Env::new();
    refused(&env, "huge", "a mutation of 41943");
    refused(&env, "huge-response", "over its cap");
}

#[test]
fn a_rewrite_the_tools_schema_refuses_never_reaches_the_server() {
    let env = Env::new();
    refused(&env, "schema", "its rewrite does not fit: the tool's input schema refuses it");
    refused(&env, "wrongtype", "its rewrite does not fit: the tool's input schema refuses it at /message");
    refused(&env, "rename", "its rewrite does not fit: it must keep \"name\": \"echo\"");
    refused(&env, "notjson", "the mutation is not JSON");
}

#[test]
fn a_response_hook_that_traps_or_breaks_the_result_refuses_it() {
    let env = Env::new();
    refused(&env, "trap-response", "crashed: panicked at");
    refused(&env, "bad-result", "its rewrite does not fit: not a tools/call result");
    // Failing open, the server's result comes back as it was.
    let (code, stdout, stderr) = echo(&env, true, "bad-result");
    assert_eq!((code, stdout.trim_end()), (0, "Echo: bad-result"), "{stderr}");
}
