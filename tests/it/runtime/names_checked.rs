//! Issue 11 item 9: the host checks what a final tool name is, not only whom it collides with.
//! A name is rejected when blank, over 128 characters, or holding a control or format
//! character; reserved and collision checks compare names after NFKC and case folding. A name
//! policy whose rename makes a bad name is blamed for it. Each bad server or policy verdict
//! sits next to a healthy neighbour that keeps answering, and the config files stay unchanged.

use std::path::Path;

use serde_json::{Value, json};
use toolport::test_support::PLUGIN_BUILD_DIR;

use crate::support::common::Env;
use crate::support::faults::{OK, assert_failed, assert_neighbour_fine, fault, healthy, start, write};
use crate::support::runtime::{call_text, demo, names};

/// The `fault-policy` fixture as the workspace's name policy, with room for a 5 MB rename.
fn fault_policy() -> Value {
    let path = Path::new(PLUGIN_BUILD_DIR).join("fixture_fault_policy.wasm");
    json!({ "fault": { "kind": "name-policy", "path": path, "limits": { "memoryMb": 64, "callMs": 5000 } } })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_128_character_tool_name_works() {
    let env = Env::new();
    let before = write(&env, &[("bad", fault("cap-name", &[])), (OK, healthy())], json!({}), json!({}));
    let runtime = start(&env).await;
    let name = "c".repeat(128);
    assert_eq!(names(&runtime.tools())[0], name);
    assert_eq!(call_text(&runtime, &name, "").await, "poked");
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}

/// `bash` plus a zero-width space is not a new name that slips past the reserved check, and
/// full-width `ｂａｓｈ` is `bash` once normalised.
#[tokio::test(flavor = "multi_thread")]
async fn lookalikes_of_a_reserved_name_are_refused() {
    let env = Env::new();
    let before = write(
        &env,
        &[("zw", fault("zw-bash", &[])), ("wide", fault("wide-bash", &[])), (OK, healthy())],
        json!({}),
        json!({}),
    );
    let runtime = start(&env).await;
    assert_failed(
        &runtime,
        "zw",
        "MCP server zw returned an invalid tool name: bash\\u{200b} (control or format character U+200B)",
    );
    // The printed command quotes the full-width name for the shell.
    let wide = "MCP tool name conflicts with built-in tool: ｂａｓｈ. Fix: leave it out (toolport mcp set wide \
        tools.exclude 'ｂａｓｈ'), or prefix every tool with its server's name (toolport workspace set namePolicy \
        namespace)";
    assert_failed(&runtime, "wide", wide);
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}

/// The policy made the bad names, so the policy is named, not the tool shape that would have
/// choked on them; the neighbour goes through the same policy (it keeps every name).
#[tokio::test(flavor = "multi_thread")]
async fn a_policy_that_renames_to_an_invalid_name_is_blamed() {
    let env = Env::new();
    let before = write(
        &env,
        &[
            ("sprawl", demo(&["--prefix", "sprawl_"])),
            ("smuggle", demo(&["--prefix", "smuggle_"])),
            (OK, healthy()),
        ],
        fault_policy(),
        json!({ "namePolicy": "fault" }),
    );
    let runtime = start(&env).await;
    let shown = format!("{}…", "x".repeat(64));
    assert_failed(
        &runtime,
        "sprawl",
        &format!(
            "name policy fault renamed tool sprawl_echo to an invalid name: {shown} \
             (5000002 characters, over the limit of 128)"
        ),
    );
    assert_failed(
        &runtime,
        "smuggle",
        "name policy fault renamed tool smuggle_echo to an invalid name: smuggle_echo\\u{200b} \
         (control or format character U+200B)",
    );
    assert_neighbour_fine(&runtime).await;
    runtime.shutdown().await;
    before.assert_unchanged(&env);
}
