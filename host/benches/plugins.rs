//! Plugin host benchmarks (figures in BENCHMARKS.md, "Plugins"):
//! - loading `shape-openai` cold (compile) vs from the compiled cache;
//! - `shape-openai` converting 1,000 tools vs the same conversion in native Rust;
//! - one `review` of `policy-namespace` on 10 tools (fresh store + instantiate from
//!   `InstancePre` + call);
//! - one hook of a pass-through guard (`fixture_guard_pass`) in a warm instance, alone and as
//!   serve runs it (two hooks in a task on a multi-threaded runtime, against an empty task).
//!
//! Run: `cargo bench --bench plugins`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use toolport::plugins::{CacheOutcome, PluginHost, ToolInfo};
use toolport::store::ServerDef;

fn server() -> ServerDef {
    ServerDef { name: "bench".into(), command: Some("bench".into()), ..ServerDef::default() }
}

/// A realistic tool: nested objects, `anyOf`, `$defs`, a description.
fn tool(i: usize) -> ToolInfo {
    ToolInfo {
        name: format!("tool_{i}"),
        title: None,
        description: Some(format!("Does thing number {i} with a moderately long description.")),
        input_schema: json!({
            "type": "object",
            "$defs": {"point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}}},
            "properties": {
                "query": {"type": "string", "description": "what to look for"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                "at": {"anyOf": [{"$ref": "#/$defs/point"}, {"type": "null"}]},
                "options": {"type": "object", "properties": {"deep": {"type": "boolean"}}}
            },
            "required": ["query"]
        }),
        output_schema: None,
        annotations: None,
    }
}

/// The same conversion as the `shape-openai` guest, natively, with the same boundary work on
/// both sides: the host serialises the schema to text, the conversion validates it and embeds
/// it verbatim (the guest's `RawValue`), and the host parses the result back into a value.
fn native_openai(tools: &[ToolInfo]) -> Vec<Value> {
    tools
        .iter()
        .map(|t| {
            let schema = if t.input_schema.is_null() {
                "{}".to_string()
            } else {
                serde_json::to_string(&t.input_schema).unwrap_or_default()
            };
            let schema = match schema.trim() {
                "" | "null" | "{}" => r#"{"type":"object","properties":{}}"#.to_string(),
                s => s.to_string(),
            };
            let _: serde::de::IgnoredAny = serde_json::from_str(&schema).unwrap_or(serde::de::IgnoredAny);
            let mut text = String::with_capacity(schema.len() + 128);
            text.push_str(r#"{"type":"function","function":{"name":"#);
            text.push_str(&serde_json::to_string(&t.name).unwrap_or_default());
            if let Some(d) = &t.description {
                text.push_str(r#","description":"#);
                text.push_str(&serde_json::to_string(d).unwrap_or_default());
            }
            text.push_str(r#","parameters":"#);
            text.push_str(&schema);
            text.push_str("}}");
            serde_json::from_str(&text).unwrap_or(Value::Null)
        })
        .collect()
}

fn load(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let cache = dir.path().join("cache");
    // Warm the cache once.
    let warm = PluginHost::new(Some(cache.clone()), &[]).unwrap_or_else(|e| panic!("{e}"));
    warm.tool_shape("openai").unwrap_or_else(|e| panic!("{e}"));
    let mut g = c.benchmark_group("plugins/load shape-openai");
    g.sample_size(10);
    // Both variants time the load only: dropping the loaded plugin (unmapping its code) happens
    // outside the measurement.
    g.bench_function("cold compile", |b| {
        b.iter_with_large_drop(|| {
            let h = PluginHost::new(None, &[]).unwrap_or_else(|e| panic!("{e}"));
            let shape = h.tool_shape("openai").unwrap_or_else(|e| panic!("{e}"));
            (h, shape)
        })
    });
    g.sample_size(100);
    g.bench_function("cached load", |b| {
        b.iter_with_large_drop(|| {
            let h = PluginHost::new(Some(cache.clone()), &[]).unwrap_or_else(|e| panic!("{e}"));
            let shape = h.tool_shape("openai").unwrap_or_else(|e| panic!("{e}"));
            debug_assert_eq!(h.cache_outcome("openai"), Some(CacheOutcome::Hit));
            (h, shape)
        })
    });
    g.finish();
}

fn convert(c: &mut Criterion) {
    let rt =
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap_or_else(|e| panic!("{e}"));
    let host = PluginHost::new(None, &[]).unwrap_or_else(|e| panic!("{e}"));
    let shape = host.tool_shape("openai").unwrap_or_else(|e| panic!("{e}"));
    let tools: Vec<ToolInfo> = (0..1000).map(tool).collect();
    let srv = server();
    let wasm = rt.block_on(shape.convert(&srv, &tools)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(wasm, native_openai(&tools), "the native baseline must produce the same output");
    let mut g = c.benchmark_group("plugins/convert 1000 tools");
    g.sample_size(30);
    g.bench_with_input(BenchmarkId::new("shape-openai (wasm)", 1000), &tools, |b, tools| {
        b.iter(|| black_box(rt.block_on(shape.convert(&srv, tools)).unwrap_or_else(|e| panic!("{e}"))))
    });
    g.bench_with_input(BenchmarkId::new("native", 1000), &tools, |b, tools| {
        b.iter(|| black_box(native_openai(tools)))
    });
    g.finish();
}

fn review(c: &mut Criterion) {
    let rt =
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap_or_else(|e| panic!("{e}"));
    let host = PluginHost::new(None, &[]).unwrap_or_else(|e| panic!("{e}"));
    let policy = host.name_policy("namespace").unwrap_or_else(|e| panic!("{e}"));
    let tools: Vec<ToolInfo> = (0..10).map(tool).collect();
    let srv = server();
    c.bench_function("plugins/policy-namespace review 10 tools (instantiate + call)", |b| {
        b.iter(|| black_box(rt.block_on(policy.review(&srv, &tools)).unwrap_or_else(|e| panic!("{e}"))))
    });
}

fn guard_hook(c: &mut Criterion) {
    use toolport::plugins::{HookContext, HookKind};
    use toolport::store::{Grants, Limits, PluginDef, PluginKind};
    let rt =
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap_or_else(|e| panic!("{e}"));
    let path = std::path::Path::new(toolport::test_support::PLUGIN_BUILD_DIR).join("fixture_guard_pass.wasm");
    let def = PluginDef {
        name: "pass".into(),
        kind: PluginKind::Guard,
        path,
        grants: Grants::default(),
        limits: Limits::default(),
        sha256: None,
    };
    let host = PluginHost::new(None, &[def]).unwrap_or_else(|e| panic!("{e}"));
    let guard = host.guard("pass").unwrap_or_else(|e| panic!("{e}"));
    // As serve runs it: on a multi-threaded runtime, from a task of its own.
    let multi = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let context =
        HookContext { kind: HookKind::Call, server: "bench", target: "echo", subject: None, client: None };
    let params = json!({"name": "echo", "arguments": {"message": "hi"}});
    c.bench_function("plugins/guard-pass on-request (a warm instance)", |b| {
        b.iter(|| {
            black_box(rt.block_on(guard.on_request(&context, &params)).unwrap_or_else(|e| panic!("{e}")))
        })
    });
    c.bench_function("plugins/guard-pass two hooks in a task, multi-threaded", |b| {
        b.iter(|| {
            let (guard, params) = (guard.clone(), params.clone());
            let task = multi.spawn(async move {
                let context = HookContext {
                    kind: HookKind::Call,
                    server: "bench",
                    target: "echo",
                    subject: None,
                    client: None,
                };
                let first = guard.on_request(&context, &params).await;
                let second = guard.on_request(&context, &params).await;
                first.and(second)
            });
            black_box(
                multi.block_on(task).unwrap_or_else(|e| panic!("{e}")).unwrap_or_else(|e| panic!("{e}")),
            )
        })
    });
    c.bench_function("plugins/no hook in a task, multi-threaded (baseline)", |b| {
        b.iter(|| black_box(multi.block_on(multi.spawn(async { 1 })).unwrap_or_else(|e| panic!("{e}"))))
    });
}

criterion_group!(benches, load, convert, review, guard_hook);
criterion_main!(benches);
