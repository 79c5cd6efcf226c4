//! `limits.cpuPercent`: a guest's share of one core over a minute, on top of `callMs`'s
//! busy-time rule, which every wait resets. The `nap` mode of the hostile sandboxed server
//! (`plugins/fixtures/server-hostile`) computes 900 ms and sleeps 10 ms, for ever: under
//! `callMs: 1500` alone it would keep a core busy until the host quits. A bad `cpuPercent` is
//! a configuration error naming the file, the entry and the key.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolport::plugins::{PluginHost, ToolInfo};
use toolport::store::{Grants, Limits, PluginDef, PluginKind, ServerDef};
use toolport::test_support::PLUGIN_BUILD_DIR;

use crate::support::common::Env;
use crate::support::faults::write;
use crate::support::session::Scripted;
use crate::support::wasm::{SMALL_CONNECT_MS, seed_cache};

/// The share the tests allow: 5 % of a minute is 3 s of CPU, so the nap is stopped after a
/// few of its stretches, and no stretch (900 ms) comes near `callMs`.
const PERCENT: u8 = 5;
/// The CPU time that share is (`CPU_WINDOW` in host/src/plugin/sandbox/cpu.rs is a minute).
const BUDGET: Duration = Duration::from_secs(3);

fn component(stem: &str) -> PathBuf {
    PathBuf::from(PLUGIN_BUILD_DIR).join(format!("{stem}.wasm"))
}

/// A `wasm` server running the hostile fixture in `mode`, plus the keys of `extra`.
fn hostile(mode: &str, extra: Value) -> Value {
    let mut def = json!({ "type": "wasm", "component": component("server_hostile"), "args": [mode] });
    if let (Some(def), Some(extra)) = (def.as_object_mut(), extra.as_object()) {
        def.extend(extra.clone());
    }
    def
}

/// The row of `name` in a `/mcp` view.
fn row<'a>(view: &'a str, name: &str) -> &'a str {
    let start = format!("- {name} |");
    view.lines().find(|l| l.starts_with(&start)).unwrap_or_else(|| panic!("no row for {name} in:\n{view}"))
}

fn connected(name: &str) -> String {
    format!("- {name} | type=wasm | state=connected | workspace=enabled | paused=no | tools=1")
}

/// Polls `/mcp` until `name`'s row is `expected` (a server stopped in a call turns `error` a
/// moment after the call's answer), for at most 5 s.
fn wait_for_row(s: &mut Scripted, name: &str, expected: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let view = s.run("/mcp");
        if row(&view, name) == expected {
            return;
        }
        assert!(Instant::now() < deadline, "{}\n{view}", row(&view, name));
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn assert_neighbour_fine(s: &mut Scripted) {
    let view = s.run("/mcp");
    assert_eq!(row(&view, "ok"), connected("ok"), "{view}");
    assert_eq!(s.run(r#"/call echo {"text":"still fine"}"#), "still fine\n");
}

/// `/call nap`: the answer without its newline, and how long it took.
fn call_nap(s: &mut Scripted) -> (String, Duration) {
    let started = Instant::now();
    let answer = s.run_within("/call nap", Duration::from_secs(90));
    (answer.trim_end_matches('\n').to_string(), started.elapsed())
}

/// Each stretch of the nap is far under `callMs` and ends in a real wait, so only its share of
/// a core stops it: once it has used 3 s of CPU (5 % of a minute), well before the call's own
/// timeout. Only that server goes to `error`, with the reason on its row; the neighbour answers
/// throughout; `/mcp retry` starts a fresh run with a fresh budget.
#[test]
fn a_guest_that_naps_between_long_stretches_is_stopped_at_its_cpu_share() {
    let env = Env::new();
    let component = component("server_hostile");
    assert!(component.exists(), "{} is missing: host/build.rs builds it", component.display());
    seed_cache(env.home(), &component, &["healthy"], SMALL_CONNECT_MS);
    let nap = hostile(
        "nap",
        // The call's own timeout is what the old host (no CPU share) ends the call with.
        json!({ "limits": { "callMs": 1500, "cpuPercent": PERCENT }, "timeouts": { "callMs": 60_000 } }),
    );
    let before = write(&env, &[("nap", nap), ("ok", hostile("healthy", json!({})))], json!({}), json!({}));
    let mut s = Scripted::start(&env);
    let stopped =
        format!("used more than {PERCENT}% of a core over 60 s (limits.cpuPercent), so it was stopped");

    let (answer, took) = call_nap(&mut s);
    assert_eq!(answer, format!("MCP server nap is not connected: {stopped}"));
    // CPU time never runs ahead of the clock: the budget cannot be used up sooner than this
    // (less what the run used before the call, a few milliseconds).
    assert!(took >= BUDGET - Duration::from_millis(500), "stopped after {took:?}, before its budget");
    assert!(took < Duration::from_secs(40), "stopped only after {took:?}");
    eprintln!("nap: the call ended after {took:?} (cpuPercent {PERCENT}, budget {BUDGET:?})");
    wait_for_row(
        &mut s,
        "nap",
        &format!(
            "- nap | type=wasm | state=error | workspace=enabled | paused=no | tools=0 | error={stopped}"
        ),
    );
    assert_neighbour_fine(&mut s);

    let view = s.run("/mcp retry nap");
    assert_eq!(row(&view, "nap"), connected("nap"), "{view}");
    let (answer, took) = call_nap(&mut s);
    assert_eq!(answer, format!("MCP server nap is not connected: {stopped}"));
    assert!(took >= BUDGET - Duration::from_millis(500), "the fresh run was stopped after {took:?}");
    assert_neighbour_fine(&mut s);
    assert!(s.quit().success());
    before.assert_unchanged(&env);
}

/// A plugin call is held to the same share: a tool shape that loops for ever under a `callMs`
/// of a minute fails that call once it has used 2 % of a minute (1.2 s), long before the
/// minute; the plugin works again on the next call.
#[tokio::test]
async fn a_plugin_call_over_its_cpu_share_fails_that_call() {
    let limits = Limits { call_ms: 60_000, cpu_percent: 2, ..Limits::default() };
    let def = PluginDef {
        name: "hostile".into(),
        kind: PluginKind::ToolShape,
        path: component("fixture_hostile"),
        grants: Grants::default(),
        limits,
        sha256: None,
    };
    let cache = Some(std::env::temp_dir().join("toolport-it-plugin-cache"));
    let host = PluginHost::new(cache, &[def]).unwrap_or_else(|e| panic!("{e}"));
    let shape = host.tool_shape("hostile").unwrap_or_else(|e| panic!("{e}"));
    let server = |name: &str, args: &[&str]| ServerDef {
        name: name.into(),
        command: Some("demo".into()),
        args: args.iter().map(|a| a.to_string()).collect(),
        ..ServerDef::default()
    };
    let tool = |name: &str| ToolInfo {
        name: name.into(),
        title: None,
        description: None,
        input_schema: json!({"type": "object"}),
        output_schema: None,
        annotations: None,
    };
    let started = Instant::now();
    let err = shape.convert(&server("loop", &[""]), &[tool("target")]).await.err();
    let took = started.elapsed();
    assert_eq!(
        err.map(|e| e.to_string()).as_deref(),
        Some(
            "tool shape hostile: used more than 2% of a core over 60 s (limits.cpuPercent), so it was stopped"
        )
    );
    assert!(took >= Duration::from_millis(1_000), "stopped after {took:?}, before its budget");
    assert!(took < Duration::from_secs(30), "stopped after {took:?}: that is callMs, not the share");
    let out = shape.convert(&server("well-behaved", &[]), &[tool("\"a\"")]).await;
    assert_eq!(out.map_err(|e| e.to_string()), Ok(vec![json!("a")]));
}

/// 0 stops every guest at once, 101 is more than one guest can use, and a share is a whole
/// number: each is refused with the file, the entry and the key, for a server and a plugin.
#[test]
fn a_cpu_percent_that_is_not_a_share_of_one_core_is_a_configuration_error() {
    let what = "\"limits.cpuPercent\" must be an integer from 1 to 100 (percent of one core)";
    for bad in [json!(0), json!(101), json!(50.5), json!("50")] {
        let env = Env::new();
        let nap = hostile("nap", json!({ "limits": { "cpuPercent": bad } }));
        write(&env, &[("nap", nap)], json!({}), json!({}));
        let (code, _, stderr) = env.run(&["mcp", "list"], Duration::from_secs(60));
        let expected = format!("{}: server \"nap\": {what}", env.store().display());
        assert_eq!(code, 2, "{bad}: {stderr}");
        assert!(stderr.contains(&expected), "{bad}: {stderr}");

        let env = Env::new();
        let shape = json!({ "kind": "tool-shape", "path": component("fixture_hostile"),
                            "limits": { "cpuPercent": bad } });
        write(&env, &[], json!({ "hostile": shape }), json!({}));
        let (code, _, stderr) = env.run(&["plugin", "list"], Duration::from_secs(60));
        let expected = format!("{}: plugin \"hostile\": {what}", env.store().display());
        assert_eq!(code, 2, "{bad}: {stderr}");
        assert!(stderr.contains(&expected), "{bad}: {stderr}");
    }
}
