//! The plugin host against real components: the built-ins (embedded and from files), hostile
//! fixtures that must stay contained, refusal of mismatched components, and the compiled cache.
//! Components come from the guest workspace `host/build.rs` builds (`PLUGIN_BUILD_DIR`).

use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolport::plugins::{CacheOutcome, Fault, PluginError, PluginHost, ToolInfo, Verdict};
use toolport::store::{DirGrant, Grants, Limits, PluginDef, PluginKind, ServerDef};
use toolport::test_support::PLUGIN_BUILD_DIR;

fn wasm(stem: &str) -> PathBuf {
    Path::new(PLUGIN_BUILD_DIR).join(format!("{stem}.wasm"))
}

/// One cache folder for the whole test binary: compiling with a debug-built cranelift is slow,
/// and every test but the cache tests only needs a loaded plugin.
fn shared_cache() -> Option<PathBuf> {
    Some(std::env::temp_dir().join("toolport-it-plugin-cache"))
}

/// A read-only folder grant at its own path, as a plugin's `grants.dirs` entry reads.
fn read_only(path: &Path) -> DirGrant {
    DirGrant { written: path.display().to_string(), host: path.to_path_buf(), guest: None, writable: false }
}

fn def(name: &str, kind: PluginKind, stem: &str, grants: Grants, limits: Limits) -> PluginDef {
    PluginDef { name: name.to_string(), kind, path: wasm(stem), grants, limits, sha256: None }
}

fn host(defs: &[PluginDef]) -> PluginHost {
    PluginHost::new(shared_cache(), defs).unwrap_or_else(|e| panic!("{e}"))
}

fn server(name: &str) -> ServerDef {
    ServerDef { name: name.to_string(), command: Some("demo".into()), ..ServerDef::default() }
}

fn server_with_arg(name: &str, arg: &str) -> ServerDef {
    ServerDef { args: vec![arg.to_string()], ..server(name) }
}

/// A schema with nested objects, `anyOf`, `$defs`, union types and key order that must all come
/// through unchanged.
fn rich_schema() -> Value {
    json!({
        "type": "object",
        "$defs": {
            "point": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}, "required": ["x", "y"]}
        },
        "properties": {
            "zeta": {"type": ["string", "null"], "description": "union type"},
            "alpha": {"anyOf": [{"$ref": "#/$defs/point"}, {"type": "array", "items": {"$ref": "#/$defs/point"}}]},
            "nested": {"type": "object", "properties": {"deeper": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 1e3}}}}},
            "unicode": {"type": "string", "default": "naïve ✓ \"quoted\""}
        },
        "required": ["alpha"],
        "additionalProperties": false
    })
}

fn tools() -> Vec<ToolInfo> {
    vec![
        ToolInfo {
            name: "plot".into(),
            title: Some("Plot points".into()),
            description: Some("Plots one or more points.".into()),
            input_schema: rich_schema(),
            output_schema: Some(json!({"type": "object"})),
            annotations: Some(json!({"readOnlyHint": true})),
        },
        ToolInfo {
            name: "ping".into(),
            title: None,
            description: None,
            input_schema: Value::Null,
            output_schema: None,
            annotations: None,
        },
        ToolInfo {
            name: "empty".into(),
            title: None,
            description: Some("Takes nothing.".into()),
            input_schema: json!({}),
            output_schema: None,
            annotations: None,
        },
    ]
}

fn expected_openai() -> Vec<Value> {
    vec![
        json!({"type": "function", "function": {"name": "plot", "description": "Plots one or more points.", "parameters": rich_schema()}}),
        json!({"type": "function", "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}}}),
        json!({"type": "function", "function": {"name": "empty", "description": "Takes nothing.", "parameters": {"type": "object", "properties": {}}}}),
    ]
}

fn expected_anthropic() -> Vec<Value> {
    vec![
        json!({"name": "plot", "description": "Plots one or more points.", "input_schema": rich_schema()}),
        json!({"name": "ping", "input_schema": {"type": "object", "properties": {}}}),
        json!({"name": "empty", "description": "Takes nothing.", "input_schema": {"type": "object", "properties": {}}}),
    ]
}

/// Key order matters to some clients and to prompt caching: compare the serialised text.
fn same_text(a: &[Value], b: &[Value]) {
    let text = |v: &[Value]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(text(a), text(b));
}

#[tokio::test]
async fn openai_shape_embedded_and_from_file_pass_schemas_through_intact() {
    let h = host(&[def(
        "openai-file",
        PluginKind::ToolShape,
        "shape_openai",
        Grants::default(),
        Limits::default(),
    )]);
    // The embedded built-in is the very component the guest workspace built.
    let file_bytes = std::fs::read(wasm("shape_openai")).unwrap();
    assert_eq!(toolport::plugins::builtin_bytes("openai").unwrap(), file_bytes.as_slice());
    let embedded = h.tool_shape("openai").unwrap();
    assert_eq!(embedded.name(), "openai");
    assert_eq!(embedded.origin(), &toolport::plugins::Origin::Builtin);
    let out = embedded.convert(&server("demo"), &tools()).await.unwrap();
    same_text(&out, &expected_openai());
    let from_file = h.tool_shape("openai-file").unwrap();
    assert_eq!(from_file.origin(), &toolport::plugins::Origin::File(wasm("shape_openai")));
    same_text(&from_file.convert(&server("demo"), &tools()).await.unwrap(), &expected_openai());
}

#[tokio::test]
async fn anthropic_shape_embedded_and_from_file() {
    let h = host(&[def(
        "anthropic-file",
        PluginKind::ToolShape,
        "shape_anthropic",
        Grants::default(),
        Limits::default(),
    )]);
    same_text(
        &h.tool_shape("anthropic").unwrap().convert(&server("demo"), &tools()).await.unwrap(),
        &expected_anthropic(),
    );
    same_text(
        &h.tool_shape("anthropic-file").unwrap().convert(&server("demo"), &tools()).await.unwrap(),
        &expected_anthropic(),
    );
}

#[tokio::test]
async fn shape_of_zero_tools_is_empty() {
    let out = host(&[]).tool_shape("openai").unwrap().convert(&server("demo"), &[]).await.unwrap();
    assert!(out.is_empty());
}

fn named(names: &[&str]) -> Vec<ToolInfo> {
    names
        .iter()
        .map(|n| ToolInfo {
            name: n.to_string(),
            title: None,
            description: None,
            input_schema: json!({"type": "object"}),
            output_schema: None,
            annotations: None,
        })
        .collect()
}

fn renamed(verdicts: Vec<Verdict>) -> Vec<String> {
    verdicts
        .into_iter()
        .map(|v| match v {
            Verdict::Rename(n) => n,
            other => panic!("expected a rename, got {other:?}"),
        })
        .collect()
}

#[tokio::test]
async fn namespace_policy_sanitises_truncates_and_keeps_names_distinct() {
    let h = host(&[def(
        "namespace-file",
        PluginKind::NamePolicy,
        "policy_namespace",
        Grants::default(),
        Limits::default(),
    )]);
    let long_a = format!("{}_a", "x".repeat(80));
    let long_b = format!("{}_b", "x".repeat(80));
    let tools = named(&["read", "web.search/v2", "naïve tool", &long_a, &long_b]);
    let srv = server("git hub");
    let embedded = renamed(h.name_policy("namespace").unwrap().review(&srv, &tools).await.unwrap());
    let from_file = renamed(h.name_policy("namespace-file").unwrap().review(&srv, &tools).await.unwrap());
    assert_eq!(embedded, from_file);
    assert_eq!(embedded[0], "git_hub__read");
    assert_eq!(embedded[1], "git_hub__web_search_v2");
    assert_eq!(embedded[2], "git_hub__na_ve_tool");
    for long in &embedded[3..] {
        assert_eq!(long.len(), 64, "{long}");
        assert!(long.starts_with("git_hub__xxxxxxxx"), "{long}");
        assert!(long.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'), "{long}");
    }
    assert_ne!(embedded[3], embedded[4], "truncated names must stay distinct");
    // Deterministic: the same input gives the same name on another call.
    let again = renamed(h.name_policy("namespace").unwrap().review(&srv, &tools).await.unwrap());
    assert_eq!(embedded, again);
}

#[test]
fn lookup_errors_name_the_plugin() {
    let missing = PluginDef {
        name: "gone".into(),
        kind: PluginKind::ToolShape,
        path: PathBuf::from("/nonexistent/gone.wasm"),
        grants: Grants::default(),
        limits: Limits::default(),
        sha256: None,
    };
    let h = host(&[missing]);
    assert_eq!(h.tool_shape("nope").unwrap_err().to_string(), "tool shape nope: unknown plugin");
    assert_eq!(
        h.tool_shape("namespace").unwrap_err().to_string(),
        "tool shape namespace: is a name-policy plugin, not a tool-shape plugin"
    );
    assert_eq!(
        h.name_policy("openai").unwrap_err().to_string(),
        "name policy openai: is a tool-shape plugin, not a name-policy plugin"
    );
    let err = h.tool_shape("gone").unwrap_err();
    assert!(matches!(err.fault, Fault::Unreadable { .. }));
    assert!(err.to_string().starts_with("tool shape gone: cannot read /nonexistent/gone.wasm: "), "{err}");
}

#[test]
fn core_module_and_junk_are_not_components() {
    let dir = tempfile::tempdir().unwrap();
    let core = dir.path().join("core.wasm");
    std::fs::write(&core, b"\0asm\x01\0\0\0").unwrap();
    let junk = dir.path().join("junk.wasm");
    std::fs::write(&junk, b"#!/bin/sh\necho hi\n").unwrap();
    let mk = |name: &str, path: &Path| PluginDef {
        name: name.into(),
        kind: PluginKind::ToolShape,
        path: path.to_path_buf(),
        grants: Grants::default(),
        limits: Limits::default(),
        sha256: None,
    };
    let h = host(&[mk("core", &core), mk("junk", &junk)]);
    let err = h.tool_shape("core").unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "tool shape core: {} is not a WebAssembly component: it is a core WebAssembly module; build it for \
             wasm32-wasip2 (or wrap it with `wasm-tools component new`)",
            core.display()
        )
    );
    let err = h.tool_shape("junk").unwrap_err().to_string();
    assert!(
        err.ends_with("is not a WebAssembly component: it does not start with the WebAssembly magic number"),
        "{err}"
    );
}

#[test]
fn another_major_version_and_the_wrong_world_are_refused() {
    let h = host(&[
        def("future", PluginKind::ToolShape, "fixture_future_shape", Grants::default(), Limits::default()),
        def(
            "policy-as-shape",
            PluginKind::ToolShape,
            "policy_namespace",
            Grants::default(),
            Limits::default(),
        ),
    ]);
    let err = h.tool_shape("future").unwrap_err();
    assert!(matches!(err.fault, Fault::WrongVersion { .. }));
    assert_eq!(
        err.to_string(),
        "tool shape future: was built for toolport:plugin@1.0.0 (it exports toolport:plugin/shape@1.0.0), \
         but this toolport serves toolport:plugin@0.1.1: rebuild it against wit/since_v0.1.0"
    );
    let err = h.tool_shape("policy-as-shape").unwrap_err();
    assert_eq!(
        err.to_string(),
        "tool shape policy-as-shape: is configured as tool-shape but exports toolport:plugin/policy@0.1.1 \
         (the name-policy world); expected toolport:plugin/shape@0.1.1 (the tool-shape world)"
    );
}

/// The hostile fixture under test limits, plus the built-in it must not disturb.
struct Hostile {
    host: PluginHost,
    limits: Limits,
}

impl Hostile {
    fn new(grants: Grants) -> Self {
        let limits = Limits { memory_mb: 64, call_ms: 1_000, ..Limits::default() };
        let host = host(&[def("hostile", PluginKind::ToolShape, "fixture_hostile", grants, limits)]);
        Self { host, limits }
    }

    async fn attack(&self, mode: &str, arg: &str) -> Result<Vec<Value>, PluginError> {
        self.host
            .tool_shape("hostile")
            .unwrap_or_else(|e| panic!("{e}"))
            .convert(&server_with_arg(mode, arg), &named(&["target"]))
            .await
    }

    /// After any attack, the same plugin and a built-in both still work.
    async fn still_works(&self) {
        let out = self
            .host
            .tool_shape("hostile")
            .unwrap_or_else(|e| panic!("{e}"))
            .convert(&server("well-behaved"), &named(&["\"a\"", "\"b\""]))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out, vec![json!("a"), json!("b")]);
        let shaped = self
            .host
            .tool_shape("openai")
            .unwrap_or_else(|e| panic!("{e}"))
            .convert(&server("demo"), &tools())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        same_text(&shaped, &expected_openai());
    }
}

#[tokio::test]
async fn endless_loop_stops_at_the_time_limit() {
    let h = Hostile::new(Grants::default());
    let started = Instant::now();
    let err = h.attack("loop", "").await.unwrap_err();
    let took = started.elapsed();
    assert_eq!(
        err.to_string(),
        format!("tool shape hostile: exceeded its time limit ({} ms)", h.limits.call_ms)
    );
    assert!(took >= Duration::from_millis(h.limits.call_ms), "stopped early: {took:?}");
    assert!(took < Duration::from_millis(h.limits.call_ms * 3), "stopped late: {took:?}");
    h.still_works().await;
}

#[tokio::test]
async fn allocating_a_gibibyte_stops_at_the_memory_limit() {
    let h = Hostile::new(Grants::default());
    let err = h.attack("alloc", "").await.unwrap_err();
    assert_eq!(err.to_string(), "tool shape hostile: exceeded its memory limit (64 MiB)");
    h.still_works().await;
}

#[tokio::test]
async fn files_outside_the_grants_are_denied() {
    let h = Hostile::new(Grants::default());
    let err = h.attack("read-file", "/etc/passwd").await.unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("tool shape hostile: read /etc/passwd: "), "{text}");
    assert!(!text.contains("root:"), "{text}");
    let home = std::env::home_dir().unwrap();
    let home = home.to_string_lossy();
    let err = h.attack("read-dir", &home).await.unwrap_err().to_string();
    assert!(err.starts_with(&format!("tool shape hostile: read_dir {home}: ")), "{err}");
    h.still_works().await;
}

#[tokio::test]
async fn a_granted_folder_is_readable_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "granted text").unwrap();
    let h = Hostile::new(Grants { dirs: vec![read_only(dir.path())], ..Grants::default() });
    let file = dir.path().join("notes.txt");
    let out = h.attack("read-file", &file.to_string_lossy()).await.unwrap();
    assert_eq!(out, vec![json!("granted text")]);
    assert!(h.attack("read-file", "/etc/passwd").await.is_err());
    h.still_works().await;
}

#[tokio::test]
async fn host_environment_is_absent_unless_granted() {
    // PATH is set in every test process; the plugin must not see it unless granted.
    assert!(std::env::var("PATH").is_ok());
    let h = Hostile::new(Grants::default());
    let err = h.attack("env", "PATH").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "tool shape hostile: env PATH: environment variable not found; it has no grants.env \
         (variables it reads look unset)"
    );
    h.still_works().await;
    let granted = Hostile::new(Grants { env: vec!["PATH".into()], ..Grants::default() });
    let out = granted.attack("env", "PATH").await.unwrap();
    assert_eq!(out, vec![json!(std::env::var("PATH").unwrap())]);
}

#[tokio::test]
async fn a_failing_plugin_is_told_only_the_grants_it_lacks() {
    let dir = tempfile::tempdir().unwrap();
    // It looked for a path and has no folder: the hint says so, and nothing about variables.
    let nothing = Hostile::new(Grants::default());
    let err = nothing.attack("read-file", "/etc/hostname").await.unwrap_err().to_string();
    assert!(err.starts_with("tool shape hostile: read /etc/hostname: "), "{err}");
    assert!(err.ends_with("; it has no grants.dirs (paths look missing)"), "{err}");
    let both = Hostile::new(Grants {
        env: vec!["TOOLPORT_IT_UNSET".into()],
        dirs: vec![read_only(dir.path())],
        ..Grants::default()
    });
    let err = both.attack("env", "TOOLPORT_IT_UNSET").await.unwrap_err().to_string();
    assert_eq!(err, "tool shape hostile: env TOOLPORT_IT_UNSET: environment variable not found");
    // A refused destination is recorded by the host: the guest's words stay as they were,
    // with no guess added.
    let err = nothing.attack("tcp", "127.0.0.1:9").await.unwrap_err().to_string();
    assert!(err.starts_with("tool shape hostile: connect 127.0.0.1:9: "), "{err}");
    assert!(!err.contains("it has no"), "{err}");
}

/// `grants.dirs: ["../cfg"]` in `<home>/mcp.json` is the folder beside the home, and the guest
/// reads it at that plain path (it once saw `<home>/../cfg`, which its libc never matched).
#[tokio::test]
async fn a_relative_folder_grant_is_the_plain_path_beside_the_store() {
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path().canonicalize().unwrap();
    std::fs::create_dir_all(top.join("home")).unwrap();
    std::fs::create_dir_all(top.join("cfg")).unwrap();
    std::fs::write(top.join("cfg/settings.txt"), "from cfg").unwrap();
    let store_file = top.join("home/mcp.json");
    let text = json!({"plugins": {"hostile": {
        "kind": "tool-shape", "path": wasm("fixture_hostile"), "grants": {"dirs": ["../cfg"]}
    }}});
    let store =
        toolport::store::GlobalStore::parse(&store_file, &text.to_string()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(store.plugins[0].grants.dirs[0].host, top.join("cfg"));
    let host = PluginHost::new(shared_cache(), &store.plugins).unwrap_or_else(|e| panic!("{e}"));
    let file = top.join("cfg/settings.txt");
    let out = host
        .tool_shape("hostile")
        .unwrap_or_else(|e| panic!("{e}"))
        .convert(&server_with_arg("read-file", &file.to_string_lossy()), &named(&["target"]))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out, vec![json!("from cfg")]);
}

#[tokio::test]
async fn tcp_only_to_granted_ports() {
    let granted = TcpListener::bind("127.0.0.1:0").unwrap();
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    let granted_addr = granted.local_addr().unwrap();
    let other_addr = other.local_addr().unwrap();
    let h = Hostile::new(Grants {
        hosts: vec![format!("tcp://127.0.0.1:{}", granted_addr.port())],
        ..Grants::default()
    });

    let err = h.attack("tcp", &other_addr.to_string()).await.unwrap_err().to_string();
    assert!(err.starts_with(&format!("tool shape hostile: connect {other_addr}: ")), "{err}");
    assert!(err.to_lowercase().contains("denied") || err.contains("ermission"), "{err}");
    other.set_nonblocking(true).unwrap();
    assert!(other.accept().is_err(), "the denied port must never see a connection");

    let reader = std::thread::spawn(move || {
        let (mut stream, _) = granted.accept().unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        text
    });
    let out = h.attack("tcp", &granted_addr.to_string()).await.unwrap();
    assert_eq!(out, vec![json!("connected")]);
    assert_eq!(reader.join().unwrap(), "hello from the sandbox");
    h.still_works().await;
}

#[tokio::test]
async fn a_panic_is_a_clear_error() {
    let h = Hostile::new(Grants::default());
    let err = h.attack("panic", "").await.unwrap_err();
    assert!(matches!(err.fault, Fault::Trap { .. }));
    let text = err.to_string();
    assert!(text.starts_with("tool shape hostile: crashed: panicked at "), "{text}");
    // A panic reads `RUST_BACKTRACE`: the guest asked for its environment, which has nothing.
    assert!(
        text.ends_with(
            "hostile plugin panicked on purpose; it has no grants.env (variables it reads look unset)"
        ),
        "{text}"
    );
    h.still_works().await;
}

#[tokio::test]
async fn second_load_uses_the_cache_and_a_truncated_entry_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let load = || {
        let h = PluginHost::with_caches(Some(cache.clone()), Some(cache.clone()), &[]).unwrap();
        h.tool_shape("openai").unwrap();
        h.cache_outcome("openai").unwrap()
    };
    assert_eq!(load(), CacheOutcome::Compiled);
    let entries: Vec<PathBuf> = std::fs::read_dir(&cache).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    let entry = &entries[0];
    assert_eq!(entry.extension().and_then(|e| e.to_str()), Some("cwasm"));
    let full = std::fs::metadata(entry).unwrap().len();

    assert_eq!(load(), CacheOutcome::Hit);

    let bytes = std::fs::read(entry).unwrap();
    std::fs::write(entry, &bytes[..bytes.len() / 2]).unwrap();
    assert_eq!(load(), CacheOutcome::Rebuilt);
    assert_eq!(std::fs::metadata(entry).unwrap().len(), full, "the entry is rewritten whole");
    assert_eq!(load(), CacheOutcome::Hit);

    // A flipped byte in the middle (same length) is caught by the MAC, not trusted.
    let mut bytes = std::fs::read(entry).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(entry, &bytes).unwrap();
    assert_eq!(load(), CacheOutcome::Rebuilt);

    // And the rebuilt plugin works.
    let h = PluginHost::with_caches(Some(cache.clone()), Some(cache.clone()), &[]).unwrap();
    let out = h.tool_shape("openai").unwrap().convert(&server("demo"), &tools()).await.unwrap();
    same_text(&out, &expected_openai());
}

// A transport plugin's pump (the echo fixture, both ways, returning once its inbox closes) is
// tested beside `TransportPlugin::run` in `host/src/plugin/kinds/transport.rs`: running a transport is
// crate-only, so that every connection carries its server's origin grant. The transport suites
// (`transport/plugins.rs`, `faults/guests/plugins.rs`) run real transport plugins end to end.

/// Serves one HTTP request with `200 OK` and returns the request head it read.
fn one_shot_http_server(listener: TcpListener) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        use std::io::{BufRead, BufReader, Write};
        let (stream, _) = listener.accept().unwrap_or_else(|e| panic!("{e}"));
        let mut reader = BufReader::new(stream);
        let mut head = String::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or_else(|e| panic!("{e}")) == 0 || line == "\r\n" {
                break;
            }
            head.push_str(&line);
        }
        let mut stream = reader.into_inner();
        stream
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok")
            .unwrap_or_else(|e| panic!("{e}"));
        head
    })
}

#[tokio::test]
async fn outgoing_http_only_to_granted_hosts() {
    let granted = TcpListener::bind("127.0.0.1:0").unwrap();
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    let granted_port = granted.local_addr().unwrap().port();
    let other_port = other.local_addr().unwrap().port();
    let grants = Grants { hosts: vec![format!("http://127.0.0.1:{granted_port}")], ..Grants::default() };
    let h = host(&[def("probe", PluginKind::ToolShape, "fixture_http_probe", grants, Limits::default())]);
    let probe = h.tool_shape("probe").unwrap();

    let url = format!("http://127.0.0.1:{other_port}/denied");
    let err = probe.convert(&server_with_arg("http", &url), &named(&["x"])).await.unwrap_err().to_string();
    assert_eq!(err, format!("tool shape probe: GET {url}: ErrorCode::HttpRequestDenied"));
    other.set_nonblocking(true).unwrap();
    assert!(other.accept().is_err(), "the denied host must never see a connection");

    let server_thread = one_shot_http_server(granted);
    let url = format!("http://127.0.0.1:{granted_port}/allowed");
    let out = probe.convert(&server_with_arg("http", &url), &named(&["x"])).await.unwrap();
    assert_eq!(out, vec![json!(200)]);
    assert!(server_thread.join().unwrap().starts_with("GET /allowed HTTP/1.1\r\n"));
}
