//! The fault suite, plugins: a name policy and a tool shape that trap, spin, allocate a
//! gibibyte, return the wrong number of answers or (shape) text that is not JSON, and a
//! transport plugin that bombs or spins. The server's name picks the fault (fixtures
//! `plugins/fixtures/fault-*`, and `transport-hostile` for the transport world), so one runtime
//! holds every fault at once next to a healthy server using the same plugin: each bad server
//! ends in `error` with the plugin's message, the healthy one stays `connected`, the host
//! carries on, and the config files are unchanged.

use std::path::Path;

use serde_json::{Value, json};
use toolport::ServerState;
use toolport::test_support::PLUGIN_BUILD_DIR;

use crate::support::common::Env;
use crate::support::faults::{OK, assert_neighbour_fine, healthy, row, start, write};
use crate::support::runtime::{call_text, demo};

/// A plugin definition for the fixture `stem` with tight limits, so a spin ends in a second.
fn plugin(kind: &str, stem: &str) -> Value {
    let path = Path::new(PLUGIN_BUILD_DIR).join(format!("{stem}.wasm"));
    json!({ "kind": kind, "path": path, "limits": { "memoryMb": 32, "callMs": 1000 } })
}

/// `demo-server` whose tools are prefixed with the server name, so no two collide.
fn named_demo(name: &str) -> Value {
    demo(&["--prefix", &format!("{name}_")])
}

/// Writes one server per fault plus the healthy neighbour (last, so it is checked after every
/// failure), all enabled, with `plugins` and the workspace keys `extra`.
fn write_faults(
    env: &Env,
    faults: &[&str],
    plugins: Value,
    extra: Value,
) -> crate::support::faults::Snapshot {
    let mut servers: Vec<(&str, Value)> = faults.iter().map(|f| (*f, named_demo(f))).collect();
    servers.push((OK, healthy()));
    write(env, &servers, plugins, extra)
}

/// The state and error of every row but the neighbour's.
fn failures(runtime: &toolport::Runtime, faults: &[&str]) -> Vec<(String, ServerState, String)> {
    faults
        .iter()
        .map(|f| {
            let r = row(runtime, f);
            (r.name, r.state, r.error.unwrap_or_default())
        })
        .collect()
}

fn expect(rows: &[(&str, &str)]) -> Vec<(String, ServerState, String)> {
    rows.iter().map(|(n, e)| (n.to_string(), ServerState::Error, e.to_string())).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_faulty_name_policy_fails_only_the_server_it_faulted_on() {
    let env = Env::new();
    let faults = ["trap", "spin", "bomb", "fewer", "more"];
    let before = write_faults(
        &env,
        &faults,
        json!({ "fault": plugin("name-policy", "fixture_fault_policy") }),
        json!({ "namePolicy": "fault" }),
    );
    let runtime = start(&env).await;
    let mut rows = failures(&runtime, &faults);
    // A trap names the guest's panic location and message.
    let trap = rows.remove(0);
    assert!(
        trap.2.starts_with("name policy fault: crashed: panicked at ")
            && trap.2.ends_with(
                "fault-policy trapped on purpose; it has no grants.env (variables it reads look unset)"
            ),
        "{trap:?}"
    );
    assert_eq!(
        rows,
        expect(&[
            ("spin", "name policy fault: exceeded its time limit (1000 ms)"),
            ("bomb", "name policy fault: exceeded its memory limit (32 MiB)"),
            ("fewer", "name policy fault: returned bad output: 5 verdicts for 6 tools"),
            ("more", "name policy fault: returned bad output: 7 verdicts for 6 tools"),
        ])
    );
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_faulty_tool_shape_fails_only_the_server_it_faulted_on() {
    let env = Env::new();
    let faults = ["trap", "spin", "bomb", "fewer", "more", "badjson"];
    let before = write_faults(
        &env,
        &faults,
        json!({ "fault": plugin("tool-shape", "fixture_fault_shape") }),
        json!({ "toolShape": "fault" }),
    );
    let runtime = start(&env).await;
    let mut rows = failures(&runtime, &faults);
    let trap = rows.remove(0);
    assert!(
        trap.2.starts_with("tool shape fault: crashed: panicked at ")
            && trap.2.ends_with(
                "fault-shape trapped on purpose; it has no grants.env (variables it reads look unset)"
            ),
        "{trap:?}"
    );
    let bad = "tool shape fault: returned bad output";
    assert_eq!(
        rows,
        expect(&[
            ("spin", "tool shape fault: exceeded its time limit (1000 ms)"),
            ("bomb", "tool shape fault: exceeded its memory limit (32 MiB)"),
            ("fewer", &format!("{bad}: 5 results for 6 tools")),
            ("more", &format!("{bad}: 7 results for 6 tools")),
            (
                "badjson",
                &format!("{bad}: tool badjson_echo: not JSON: key must be a string at line 1 column 2")
            ),
        ])
    );
    // The healthy server went through the same plugin instance after all of that.
    let r = row(&runtime, OK);
    assert_eq!((r.state, r.tools), (ServerState::Connected, 6));
    assert_eq!(call_text(&runtime, "ok_echo", r#"{"message":"shaped"}"#).await, "shaped");
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_transport_plugin_that_bombs_or_spins_fails_only_its_server() {
    let env = Env::new();
    let before = write(
        &env,
        &[
            ("bomb", json!({ "type": "hostile", "url": "tcp://127.0.0.1:9" })),
            (
                "spin",
                json!({ "type": "hostile", "url": "tcp://127.0.0.1:9", "timeouts": { "connectMs": 1500 } }),
            ),
            (OK, healthy()),
        ],
        json!({ "hostile": plugin("transport", "fixture_transport_hostile") }),
        json!({}),
    );
    let runtime = start(&env).await;
    let r = row(&runtime, "bomb");
    assert_eq!(r.state, ServerState::Error, "{r:?}");
    assert_eq!(r.error.as_deref(), Some("transport plugin hostile: exceeded its memory limit (32 MiB)"));
    // A pump that spins forever is a hang at initialize: the connect timeout ends it.
    let spin = row(&runtime, "spin");
    assert_eq!(
        (spin.state, spin.error.as_deref()),
        (ServerState::Error, Some("connect timed out after 1500 ms"))
    );
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}
