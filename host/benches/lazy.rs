//! The lazy surface (`cargo bench --bench lazy`), on the fixture of its search-quality test:
//! `@modelcontextprotocol/server-everything`, `@modelcontextprotocol/server-memory` and eight
//! `demo-server --tools 40` (names `d1_` … `d8_`), all behind one runtime.
//!
//! 1. Tokens a model's context holds for the tool definitions: the full surface (the sum of
//!    `count_tokens` over each shaped definition's JSON text) against the lazy surface's three
//!    definitions in the same shape (aim ≥ 90% fewer). Counted, not timed: exact in every run.
//! 2. The time of one `search_tools` query over that index (criterion), and of building the
//!    index (what a `list_changed` costs the next search).
//! 3. The trust checks over the same listing (the definition checks, `scan::definitions`, and
//!    each tool's pin, `ToolPin::of_tool`: what every listing pays at connect and on
//!    `list_changed`; aim < 5 ms for the 392 tools), against the same tools written out as JSON
//!    text in the same run (the least any forwarding of a listing costs).
//!
//! The summary at the end prints the figures BENCHMARKS.md records. The peers are installed by
//! the tests' own scripts (`tests/peers/install.sh`, `install_memory.sh`) into the target folder.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::Criterion;
use serde_json::{Value, json};
use toolport::display::count_tokens;
use toolport::scan::{self, ListedTool, ServerDefinitions};
use toolport::serving::{LAZY_SERVER, ToolIndex, lazy_tools};
use toolport::test_support::ToolPin;
use toolport::{Paths, Runtime, RuntimeOptions, ToolRecord, load_resolved};

const EXE: &str = env!("CARGO_BIN_EXE_toolport");

/// Queries of the search-quality test, a few of each fixture server.
const QUERIES: [&str; 6] = [
    "add two numbers together",
    "compress a file with gzip",
    "search the graph for nodes matching a query",
    "ask the user for details through elicitation",
    "generated tool number 17",
    "wait some milliseconds before answering",
];

/// Runs a peer install script of `tests/peers/`; its stdout is the peers folder.
fn install(script: &str) -> PathBuf {
    let target = Path::new(EXE).parent().and_then(Path::parent).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/peers").join(script);
    let out = Command::new("bash").arg(&script).arg(target).output().unwrap();
    assert!(out.status.success(), "{}: {}", script.display(), String::from_utf8_lossy(&out.stderr));
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// A home and workspace with the fixture's ten servers.
fn fixture() -> tempfile::TempDir {
    install("install.sh");
    let peers = install("install_memory.sh");
    let node = peers.join("bin/node");
    let modules = peers.join("node_modules/@modelcontextprotocol");
    let dir = tempfile::tempdir().unwrap();
    let mut servers = json!({
        "everything": {"type": "stdio", "command": node, "args": [modules.join("server-everything/dist/index.js")]},
        "memory": {"type": "stdio", "command": node, "args": [modules.join("server-memory/dist/index.js")],
                   "env": {"MEMORY_FILE_PATH": dir.path().join("memory.jsonl")}},
    });
    let mut enabled = vec!["everything".to_string(), "memory".to_string()];
    for i in 1..=8 {
        let args = json!(["demo-server", "--tools", "40", "--prefix", format!("d{i}_")]);
        servers[format!("demo{i}")] = json!({"type": "stdio", "command": EXE, "args": args});
        enabled.push(format!("demo{i}"));
    }
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    std::fs::create_dir_all(dir.path().join("ws/.toolport")).unwrap();
    std::fs::write(dir.path().join("home/mcp.json"), json!({ "mcpServers": servers }).to_string()).unwrap();
    let workspace = json!({ "enabledMcpServers": enabled });
    std::fs::write(dir.path().join("ws/.toolport/workspace.json"), workspace.to_string()).unwrap();
    dir
}

/// The records grouped by server, as the trust checks take them.
fn definitions(records: &[std::sync::Arc<ToolRecord>]) -> Vec<ServerDefinitions> {
    let mut servers: Vec<ServerDefinitions> = Vec::new();
    for r in records {
        let listed = ListedTool { surface_name: r.name.clone(), tool: r.tool.clone() };
        match servers.iter_mut().find(|s| s.name == r.server) {
            Some(s) => s.tools.push(listed),
            None => servers.push(ServerDefinitions {
                name: r.server.clone(),
                tools: vec![listed],
                ..ServerDefinitions::default()
            }),
        }
    }
    servers
}

/// Tokens of each definition's JSON text, summed.
fn tokens(definitions: &[Value]) -> usize {
    definitions.iter().map(|d| count_tokens(&serde_json::to_string(d).unwrap())).sum()
}

fn main() {
    let dir = fixture();
    let paths = Paths::new(dir.path().join("home"), dir.path().join("ws"));
    let rt = tokio::runtime::Runtime::new().unwrap();
    let runtime: Runtime = rt.block_on(async {
        let resolved = load_resolved(&paths, &Default::default()).unwrap();
        Runtime::start(resolved, RuntimeOptions::default()).await.unwrap()
    });
    assert!(runtime.warnings().is_empty(), "{:?}", runtime.warnings());
    let full = runtime.tools();
    let lazy = rt.block_on(runtime.shape_own(LAZY_SERVER, &lazy_tools(), None)).unwrap();
    let (full_tokens, lazy_tokens) = (tokens(&full), tokens(&lazy));
    let records = runtime.records();

    let mut criterion = Criterion::default().configure_from_args();
    let index = ToolIndex::build(&records);
    let mut group = criterion.benchmark_group("lazy_surface");
    group.sample_size(50).measurement_time(Duration::from_secs(5));
    group.bench_function("search_tools_one_query", |b| {
        let mut next = 0;
        b.iter(|| {
            next = (next + 1) % QUERIES.len();
            index.search(QUERIES[next], 5)
        })
    });
    group.bench_function("build_index", |b| b.iter(|| ToolIndex::build(&records)));
    group.finish();
    let servers = definitions(&records);
    let reserved: Vec<String> = ["bash", "read_file", "write_file", "apply_patch"].map(String::from).into();
    let listing: Vec<_> = records.iter().map(|r| &r.tool).collect();
    let mut group = criterion.benchmark_group("trust_checks");
    group.sample_size(30).measurement_time(Duration::from_secs(5));
    let pins = || listing.iter().map(|t| ToolPin::of_tool(t, &[])).collect::<Vec<_>>();
    let checks = || (scan::definitions(&servers, &reserved).unwrap(), pins());
    group.bench_function("scan_392_tools", |b| b.iter(|| scan::definitions(&servers, &reserved).unwrap()));
    group.bench_function("pins_392_tools", |b| b.iter(pins));
    group.bench_function("checks_392_tools", |b| b.iter(checks));
    group.bench_function("baseline_listing_as_json", |b| b.iter(|| serde_json::to_string(&listing).unwrap()));
    group.finish();
    criterion.final_summary();

    // The summary's own medians: a timed loop of every query, and of builds.
    let median = |mut samples: Vec<f64>| {
        samples.sort_by(f64::total_cmp);
        samples[samples.len() / 2]
    };
    let search: Vec<f64> = (0..2_000)
        .map(|i| {
            let started = Instant::now();
            std::hint::black_box(index.search(QUERIES[i % QUERIES.len()], 5));
            started.elapsed().as_secs_f64()
        })
        .collect();
    let build: Vec<f64> = (0..50)
        .map(|_| {
            let started = Instant::now();
            std::hint::black_box(ToolIndex::build(&records));
            started.elapsed().as_secs_f64()
        })
        .collect();
    let timed = |f: &dyn Fn()| {
        median(
            (0..30)
                .map(|_| {
                    let started = Instant::now();
                    f();
                    started.elapsed().as_secs_f64()
                })
                .collect(),
        )
    };
    let scan = timed(&|| {
        std::hint::black_box(scan::definitions(&servers, &reserved).unwrap());
    });
    let pinned = timed(&|| {
        std::hint::black_box(pins());
    });
    let both = timed(&|| {
        std::hint::black_box(checks());
    });
    let as_json = timed(&|| {
        std::hint::black_box(serde_json::to_string(&listing).unwrap());
    });
    let findings = scan::definitions(&servers, &reserved).unwrap().len();
    rt.block_on(runtime.shutdown());

    println!("\nsummary (the lazy surface, {} tools from 10 servers):", records.len());
    println!("  full surface: {} definitions, {full_tokens} tokens (o200k_base)", full.len());
    println!("  lazy surface: {} definitions, {lazy_tokens} tokens", lazy.len());
    let saved = 1.0 - lazy_tokens as f64 / full_tokens as f64;
    println!(
        "  lazy / full = {:.4} ({:.1}% fewer tokens; aim ≥ 90%)",
        lazy_tokens as f64 / full_tokens as f64,
        saved * 100.0
    );
    println!("  one search_tools query: median {:.1} µs (2,000 queries)", median(search) * 1e6);
    println!("  building the index: median {:.2} ms (50 builds)", median(build) * 1e3);
    println!(
        "  trust checks over the listing: median {:.2} ms (definition checks {:.2} ms, {findings} findings; \
         pins {:.2} ms; aim < 5 ms)",
        both * 1e3,
        scan * 1e3,
        pinned * 1e3
    );
    println!(
        "  the listing as JSON text (baseline): median {:.3} ms; checks / baseline = {:.1}x",
        as_json * 1e3,
        both / as_json
    );
}
