//! Name policies that answer legally: a `reject` verdict puts only that server in `error`,
//! and the host's collision rules still run on the names a policy leaves.

use std::path::Path;

use serde_json::{Value, json};
use toolport::ServerState;
use toolport::test_support::PLUGIN_BUILD_DIR;

use crate::support::common::Env;
use crate::support::faults::{OK, assert_failed, assert_neighbour_fine, healthy, row, start, write};
use crate::support::runtime::{DEMO_TOOLS, clash, demo};

fn fault_policy() -> Value {
    let path = Path::new(PLUGIN_BUILD_DIR).join("fixture_fault_policy.wasm");
    json!({ "fault": { "kind": "name-policy", "path": path } })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rejecting_policy_puts_only_that_server_in_error() {
    let env = Env::new();
    let before = write(
        &env,
        &[("picky", demo(&["--prefix", "picky_"])), (OK, healthy())],
        fault_policy(),
        json!({ "namePolicy": "fault" }),
    );
    let runtime = start(&env).await;
    // Error state, that message, no tools, and the startup warning.
    assert_failed(
        &runtime,
        "picky",
        "name policy fault rejected tool picky_echo: echo tools are not allowed here",
    );
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}

#[tokio::test(flavor = "multi_thread")]
async fn collision_rules_run_after_the_policy() {
    // `keep` everywhere: both servers offer `echo`, so the later one loses it whatever the
    // policy said.
    let env = Env::new();
    write(
        &env,
        &[("first", demo(&[])), ("second", demo(&[]))],
        fault_policy(),
        json!({ "namePolicy": "fault" }),
    );
    let runtime = start(&env).await;
    assert_eq!(row(&runtime, "first").state, ServerState::Connected);
    let second = row(&runtime, "second");
    assert_eq!(second.state, ServerState::Error);
    let expected = clash("second", "echo", "first", &DEMO_TOOLS, false);
    assert_eq!(second.error.as_deref(), Some(expected.as_str()), "no namespace fix over another policy");
    runtime.shutdown().await;
}
