//! A `wasm` server that is not Rust: `tests/wasm/python-server/app.py`, a pure-Python MCP stdio
//! server built by `tests/wasm/build-python.sh` (componentize-py) into an 18 MB
//! `wasi:cli/command` component, served by the built binary through `toolport tools` and
//! `toolport call`. A missing peer or a failed build fails these tests; nothing is skipped.
//!
//! Compiling that component with a debug-built cranelift takes minutes on 2 cores (measured:
//! 3 to 4 on a busy machine). It happens once per target folder, in `support::wasm`'s warm-up,
//! under [`FIRST_CONNECT_MS`]; the test's own home gets the compiled cache.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::common::Env;
use crate::support::faults::write;
use crate::support::wasm::{built_by, seed_cache};

/// One test of this module at a time: each may compile the component, which takes both cores.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The first compile in a debug build, on a loaded 2-core machine, with room to spare.
const FIRST_CONNECT_MS: u64 = 900_000;

/// Builds (or finds up to date) the Python component; its path. Any failure fails the test.
fn python_peer() -> PathBuf {
    built_by(&Path::new(env!("CARGO_MANIFEST_DIR")).join("wasm/build-python.sh"), &[])
}

/// The Python server with a memory limit well above what CPython needs (it runs in 32 MiB).
fn python_server(component: &Path, connect_ms: u64) -> Value {
    json!({
        "type": "wasm",
        "component": component,
        "limits": { "memoryMb": 64 },
        "timeouts": { "connectMs": connect_ms },
    })
}

/// `toolport <args…>` in `env`, killed after `within`: its stdout, after checking it succeeded.
fn run(env: &Env, args: &[&str], within: Duration) -> String {
    let started = Instant::now();
    let out = env.cmd(args).timeout(within).output().unwrap_or_else(|e| panic!("toolport {args:?}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("python: toolport {args:?} took {:?}", started.elapsed());
    assert!(out.status.success(), "toolport {args:?} failed ({}):\n{stdout}{stderr}", out.status);
    assert!(stderr.is_empty(), "toolport {args:?} warned:\n{stderr}");
    stdout
}

/// The Python server lists its two tools (with their schemas, through the openai shape) and
/// answers both through the one-shot commands; nothing is warned about, nothing written.
#[test]
fn a_python_server_lists_its_tools_and_answers_add_and_reverse() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let component = python_peer();
    let env = Env::new();
    seed_cache(env.home(), &component, &[], FIRST_CONNECT_MS);
    let before = write(&env, &[("py", python_server(&component, 60_000))], json!({}), json!({}));

    let warm = Duration::from_secs(120);
    let listed = run(&env, &["tools", "--json"], warm);
    let tools: Value =
        serde_json::from_str(&listed).unwrap_or_else(|e| panic!("tools --json: {e}:\n{listed}"));
    let names: Vec<&str> = tools
        .as_array()
        .map(|t| t.iter().filter_map(|t| t.pointer("/function/name").and_then(Value::as_str)).collect())
        .unwrap_or_default();
    assert_eq!(names, ["add", "reverse"], "{listed}");
    assert_eq!(
        tools.pointer("/0/function/parameters/required"),
        Some(&json!(["a", "b"])),
        "add's schema: {listed}"
    );

    assert_eq!(
        run(&env, &["tools"], warm),
        "add — Adds two numbers and answers the sum as text.\nreverse — Answers its text reversed.\n"
    );
    assert_eq!(run(&env, &["call", "add", r#"{"a": 2, "b": 3.5}"#], warm), "5.5\n");
    assert_eq!(run(&env, &["call", "reverse", r#"{"text": "héllo wörld"}"#], warm), "dlröw olléh\n");
    let list = run(&env, &["mcp", "list"], warm);
    assert!(
        list.lines()
            .any(|l| l == "- py | type=wasm | state=connected | workspace=enabled | paused=no | tools=2"),
        "{list}"
    );
    before.assert_unchanged(&env);
}

/// `timeouts.connectMs` bounds a connect, compiling included: a component that takes minutes
/// to compile fails at its 3 s, and the command ends soon after (the compile runs on a blocking
/// thread the timeout does not wait for; it once ran inside the connect future, and `mcp list`
/// printed `connect timed out after 5000 ms` after 3 min 57 s).
#[test]
fn a_connect_timeout_bounds_the_first_compile() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let component = python_peer();
    // A fresh home: nothing compiled yet.
    let env = Env::new();
    let before = write(&env, &[("py", python_server(&component, 3000))], json!({}), json!({}));
    let started = Instant::now();
    let out = env
        .cmd(["mcp", "list"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap_or_else(|e| panic!("toolport mcp list: {e}"));
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("python: a cold `mcp list` with connectMs 3000 ended after {took:?} ({})", out.status);
    assert!(took < Duration::from_secs(30), "`mcp list` was still compiling after {took:?}");
    assert!(
        stdout.lines().any(|l| l.starts_with("- py | type=wasm | state=error |")
            && l.ends_with("| error=connect timed out after 3000 ms")),
        "{stdout}"
    );
    before.assert_unchanged(&env);
}
