//! Transport-plugin benchmark (`cargo bench --bench transports`), as a ratio against a baseline
//! measured in the same run:
//!
//! 10,000 sequential `echo` calls through toolport's runtime to the binary's `demo-server`,
//! once over native stdio (the baseline) and once over the `transport-tcp` plugin (loaded from
//! its built `.wasm`, one store for the connection). demo-server only speaks stdio, so the TCP
//! side reaches it through a small in-process relay (socket ↔ child pipes): that hop is part
//! of the TCP figure. A third figure, a bare rmcp client over the same relay without any
//! plugin, separates the plugin's cost from the relay's. Aim: TCP-plugin throughput ≥ 0.6× stdio.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use criterion::Criterion;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::json;
use tokio::net::TcpListener;
use toolport::store::{Grants, Limits, PluginDef, PluginKind, ServerDef, TransportKind};
use toolport::test_support::PLUGIN_BUILD_DIR;
use toolport::{Resolved, ResolvedServer, Runtime, RuntimeOptions};

const EXE: &str = env!("CARGO_BIN_EXE_toolport");
const CALLS: usize = 10_000;

/// Serves `toolport demo-server` to every TCP connection (newline-delimited both ways).
async fn relay() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let (socket, _) = listener.accept().await.unwrap();
            socket.set_nodelay(true).unwrap();
            tokio::spawn(async move {
                let mut child = tokio::process::Command::new(EXE)
                    .arg("demo-server")
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::null())
                    .kill_on_drop(true)
                    .spawn()
                    .unwrap();
                let (mut stdin, mut stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
                let (mut from, mut to) = socket.into_split();
                tokio::select! {
                    _ = tokio::io::copy(&mut from, &mut stdin) => {}
                    _ = tokio::io::copy(&mut stdout, &mut to) => {}
                }
            });
        }
    });
    addr.to_string()
}

async fn runtime(def: ServerDef, kind: TransportKind, plugins: Vec<PluginDef>) -> Runtime {
    let server = ResolvedServer { def, enabled: true, paused: false, transport: Ok(kind) };
    let resolved =
        Resolved { enabled: vec!["demo".into()], servers: vec![server], plugins, ..Resolved::default() };
    let runtime = Runtime::start(resolved, RuntimeOptions::default()).await.unwrap();
    assert_eq!(runtime.tools().len(), 6, "{:?}", runtime.status());
    runtime
}

async fn calls(runtime: &Runtime) -> Duration {
    let started = Instant::now();
    for _ in 0..CALLS {
        runtime.call("echo", r#"{"message":"hello"}"#).await.unwrap();
    }
    started.elapsed()
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (stdio, tcp, bare) = rt.block_on(async {
        let stdio = runtime(
            ServerDef {
                name: "demo".into(),
                transport: Some("stdio".into()),
                command: Some(EXE.into()),
                args: vec!["demo-server".into()],
                ..ServerDef::default()
            },
            TransportKind::Stdio,
            Vec::new(),
        )
        .await;
        let addr = relay().await;
        let plugin = PluginDef {
            name: "tcp".into(),
            kind: PluginKind::Transport,
            path: PathBuf::from(PLUGIN_BUILD_DIR).join("transport_tcp.wasm"),
            grants: Grants::default(),
            limits: Limits::default(),
            sha256: None,
        };
        let tcp = runtime(
            ServerDef {
                name: "demo".into(),
                transport: Some("tcp".into()),
                url: Some(format!("tcp://{addr}")),
                ..ServerDef::default()
            },
            TransportKind::Plugin("tcp".into()),
            vec![plugin],
        )
        .await;
        let socket = tokio::net::TcpStream::connect(&addr).await.unwrap();
        socket.set_nodelay(true).unwrap();
        let bare = ().serve(socket.into_split()).await.unwrap();
        (stdio, tcp, bare)
    });
    let mut group = c.benchmark_group("echo_10000_calls");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(20));
    group
        .bench_function("native_stdio", |b| b.iter_custom(|iters| rt.block_on(sum(iters, || calls(&stdio)))));
    group.bench_function("transport_tcp_plugin", |b| {
        b.iter_custom(|iters| rt.block_on(sum(iters, || calls(&tcp))))
    });
    group.bench_function("bare_rmcp_over_the_relay", |b| {
        b.iter_custom(|iters| {
            rt.block_on(sum(iters, || async {
                let started = Instant::now();
                for _ in 0..CALLS {
                    let mut args = serde_json::Map::new();
                    args.insert("message".into(), json!("hello"));
                    bare.call_tool(CallToolRequestParams::new("echo").with_arguments(args)).await.unwrap();
                }
                started.elapsed()
            }))
        })
    });
    group.finish();
    rt.block_on(async {
        stdio.shutdown().await;
        tcp.shutdown().await;
        let _ = bare.cancel().await;
    });
}

async fn sum<F, Fut>(iters: u64, mut one: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Duration>,
{
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        total += one().await;
    }
    total
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
    print_summary();
}

/// The medians and the ratio BENCHMARKS.md records, read back from criterion's estimates.
fn print_summary() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/criterion/echo_10000_calls");
    let median = |id: &str| -> Option<f64> {
        let text = std::fs::read_to_string(dir.join(id).join("new/estimates.json")).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        v.pointer("/median/point_estimate").and_then(serde_json::Value::as_f64).map(|ns| ns / 1e9)
    };
    let (Some(stdio), Some(tcp)) = (median("native_stdio"), median("transport_tcp_plugin")) else {
        return;
    };
    let per_s = |secs: f64| CALLS as f64 / secs;
    println!("\n== transports summary ({CALLS} sequential echo calls, medians) ==");
    println!("native stdio:          {:.3} s  ({:.0} calls/s)", stdio, per_s(stdio));
    println!("transport-tcp plugin:  {:.3} s  ({:.0} calls/s)", tcp, per_s(tcp));
    if let Some(bare) = median("bare_rmcp_over_the_relay") {
        println!("bare rmcp, same relay: {:.3} s  ({:.0} calls/s)", bare, per_s(bare));
    }
    println!("throughput ratio tcp-plugin / stdio: {:.2}x (aim >= 0.6x)", stdio / tcp);
}
