//! Runtime benchmarks (`cargo bench --bench runtime`), each as a ratio against a baseline
//! measured in the same run:
//!
//! 1. `mcp list` with 10 servers that each wait 300 ms before answering `initialize`, vs the
//!    same with 1 server: concurrency means the 10 cost about as much as the 1 (aim ≤ 1.3×).
//! 2. 1,000 sequential `echo` calls through toolport's executor vs a bare rmcp client talking
//!    to the same `demo-server` (aim ≤ 1.15×).
//! 3. Peak resident memory of the `mcp list` process with 10 servers (aim ≤ 40 MB), read with
//!    `/usr/bin/time -f %M`.
//!
//! Criterion prints its usual report; the summary at the end prints the medians and ratios
//! that BENCHMARKS.md records.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use criterion::Criterion;
use rmcp::model::CallToolRequestParams;
use rmcp::model::ProtocolVersion;
use rmcp::service::ClientServiceExt;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ClientLifecycleMode, ServiceExt};
use serde_json::json;
use toolport::store::{ServerDef, TransportKind};
use toolport::{Resolved, ResolvedServer, Runtime, RuntimeOptions};

const EXE: &str = env!("CARGO_BIN_EXE_toolport");
const CALLS: usize = 1_000;

/// Per-iteration times (seconds) of every benchmark, for the summary.
static SAMPLES: Mutex<Option<HashMap<&'static str, Vec<f64>>>> = Mutex::new(None);

fn record(id: &'static str, total: Duration, iters: u64) {
    let mut samples = SAMPLES.lock().unwrap();
    let per = total.as_secs_f64() / iters.max(1) as f64;
    samples.get_or_insert_with(HashMap::new).entry(id).or_default().push(per);
}

fn median(id: &str) -> f64 {
    let samples = SAMPLES.lock().unwrap();
    let mut v = samples.as_ref().and_then(|s| s.get(id)).cloned().unwrap_or_default();
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// A temporary home + workspace with `n` demo servers, each delaying `initialize` by 300 ms.
fn workspace(n: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut servers = serde_json::Map::new();
    let mut enabled = Vec::new();
    for i in 0..n {
        let name = format!("s{i}");
        let prefix = format!("s{i}_");
        servers.insert(
            name.clone(),
            json!({"type": "stdio", "command": EXE, "args": ["demo-server", "--delay-ms", "300", "--prefix", prefix]}),
        );
        enabled.push(name);
    }
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    std::fs::create_dir_all(dir.path().join("ws/.toolport")).unwrap();
    std::fs::write(dir.path().join("home/mcp.json"), json!({ "mcpServers": servers }).to_string()).unwrap();
    std::fs::write(
        dir.path().join("ws/.toolport/workspace.json"),
        json!({ "enabledMcpServers": enabled }).to_string(),
    )
    .unwrap();
    dir
}

/// `mcp list` when it is live; until the CLI wires it to the runtime it prints the offline
/// view (`state=configured`), and `tools --json` (the same start path) stands in for it.
fn list_command() -> &'static [&'static str] {
    static CHOSEN: std::sync::OnceLock<&'static [&'static str]> = std::sync::OnceLock::new();
    CHOSEN.get_or_init(|| {
        let dir = workspace(1);
        let out = base(dir.path()).args(["mcp", "list"]).output().unwrap();
        if String::from_utf8_lossy(&out.stdout).contains("state=connected") {
            &["mcp", "list"]
        } else {
            eprintln!("note: `mcp list` is not live yet; measuring `tools --json` instead");
            &["tools", "--json"]
        }
    })
}

fn base(dir: &Path) -> Command {
    let mut cmd = Command::new(EXE);
    cmd.arg("--home").arg(dir.join("home")).arg("--workspace").arg(dir.join("ws"));
    cmd.env_remove("RUST_LOG");
    cmd
}

fn run_list(dir: &Path, servers: usize) {
    let out = base(dir).args(list_command()).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    if list_command()[0] == "mcp" {
        assert_eq!(text.matches("state=connected").count(), servers, "{text}");
    } else {
        assert_eq!(text.matches("\"type\": \"function\"").count(), servers * 6, "{text}");
    }
}

fn bench_start(c: &mut Criterion) {
    let one = workspace(1);
    let ten = workspace(10);
    run_list(one.path(), 1); // compiles the openai plugin into the cache once
    run_list(ten.path(), 10);
    let mut group = c.benchmark_group("mcp_list");
    group.sample_size(10).measurement_time(Duration::from_secs(8));
    for (id, dir, n) in [("1_server_300ms", &one, 1), ("10_servers_300ms", &ten, 10)] {
        group.bench_function(id, |b| {
            b.iter_custom(|iters| {
                let started = Instant::now();
                for _ in 0..iters {
                    run_list(dir.path(), n);
                }
                let total = started.elapsed();
                record(id, total, iters);
                total
            })
        });
    }
    group.finish();
}

fn bench_calls(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (bare, bare_2026, runtime) = rt.block_on(async {
        let transport = TokioChildProcess::new(tokio::process::Command::new(EXE).configure(|cmd| {
            cmd.arg("demo-server");
        }))
        .unwrap();
        let bare = ().serve(transport).await.unwrap();
        // The same revision toolport's executor speaks with demo-server (2026-07-28: every
        // request carries its `_meta`), so the ratio compares like with like.
        let stateless = TokioChildProcess::new(tokio::process::Command::new(EXE).configure(|cmd| {
            cmd.arg("demo-server");
        }))
        .unwrap();
        let lifecycle =
            ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
        let bare_2026 = ().serve_with_lifecycle(stateless, lifecycle).await.unwrap();
        let server = ResolvedServer {
            def: ServerDef {
                name: "demo".into(),
                transport: Some("stdio".into()),
                command: Some(EXE.into()),
                args: vec!["demo-server".into()],
                ..ServerDef::default()
            },
            enabled: true,
            paused: false,
            transport: Ok(TransportKind::Stdio),
        };
        let resolved =
            Resolved { enabled: vec!["demo".into()], servers: vec![server], ..Resolved::default() };
        let runtime = Runtime::start(resolved, RuntimeOptions::default()).await.unwrap();
        assert_eq!(runtime.tools().len(), 6);
        (bare, bare_2026, runtime)
    });
    let mut group = c.benchmark_group("echo_1000_calls");
    group.sample_size(10).measurement_time(Duration::from_secs(10));
    // The same bare client on each revision: the 2025 handshake, and 2026-07-28 (what toolport
    // negotiates with demo-server, so the executor's baseline).
    for (label, client) in [("bare_rmcp", &bare), ("bare_rmcp_2026", &bare_2026)] {
        group.bench_function(label, |b| {
            b.iter_custom(|iters| {
                let total = rt.block_on(async {
                    let started = Instant::now();
                    for _ in 0..iters {
                        for _ in 0..CALLS {
                            let mut args = serde_json::Map::new();
                            args.insert("message".into(), json!("hello"));
                            let params = CallToolRequestParams::new("echo").with_arguments(args);
                            client.call_tool(params).await.unwrap();
                        }
                    }
                    started.elapsed()
                });
                record(label, total, iters);
                total
            })
        });
    }
    group.bench_function("toolport_executor", |b| {
        b.iter_custom(|iters| {
            let total = rt.block_on(async {
                let started = Instant::now();
                for _ in 0..iters {
                    for _ in 0..CALLS {
                        runtime.call("echo", r#"{"message":"hello"}"#).await.unwrap();
                    }
                }
                started.elapsed()
            });
            record("toolport_executor", total, iters);
            total
        })
    });
    group.finish();
    rt.block_on(async {
        runtime.shutdown().await;
        let _ = bare.cancel().await;
        let _ = bare_2026.cancel().await;
    });
}

/// Peak RSS (KB) of `mcp list` with 10 servers: the largest of five runs.
fn peak_rss_kb() -> Option<u64> {
    let ten = workspace(10);
    let mut peak = None;
    for _ in 0..5 {
        let mut cmd = Command::new("/usr/bin/time");
        cmd.args(["-f", "%M"]).arg(EXE);
        cmd.arg("--home").arg(ten.path().join("home")).arg("--workspace").arg(ten.path().join("ws"));
        cmd.args(list_command()).env_remove("RUST_LOG");
        let out = cmd.output().ok()?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        let kb: u64 = stderr.lines().last()?.trim().parse().ok()?;
        peak = Some(peak.map_or(kb, |p: u64| p.max(kb)));
    }
    peak
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench_start(&mut c);
    bench_calls(&mut c);
    c.final_summary();

    let (one, ten) = (median("1_server_300ms"), median("10_servers_300ms"));
    let (bare, ours) = (median("bare_rmcp"), median("toolport_executor"));
    let bare_2026 = median("bare_rmcp_2026");
    println!("\n== runtime summary (medians of this run; command: toolport {}) ==", list_command().join(" "));
    println!("mcp list, 1 server (300 ms initialize):   {:8.1} ms", one * 1e3);
    println!(
        "mcp list, 10 servers (300 ms initialize): {:8.1} ms  ratio {:.2}x (aim <= 1.3x)",
        ten * 1e3,
        ten / one
    );
    println!(
        "1,000 echo calls, bare rmcp client:       {:8.1} ms  ({:.1} us/call)",
        bare * 1e3,
        bare * 1e6 / CALLS as f64
    );
    println!(
        "1,000 echo calls, bare rmcp, 2026-07-28:  {:8.1} ms  ({:.1} us/call)",
        bare_2026 * 1e3,
        bare_2026 * 1e6 / CALLS as f64
    );
    println!(
        "1,000 echo calls, toolport executor:      {:8.1} ms  ({:.1} us/call)  ratio {:.2}x vs bare 2026-07-28 (aim <= 1.15x), {:.2}x vs bare initialize",
        ours * 1e3,
        ours * 1e6 / CALLS as f64,
        ours / bare_2026,
        ours / bare
    );
    match peak_rss_kb() {
        Some(kb) => {
            println!("peak RSS, mcp list with 10 servers:       {:8.1} MB (aim <= 40 MB)", kb as f64 / 1024.0)
        }
        None => println!("peak RSS: /usr/bin/time is not available"),
    }
}
