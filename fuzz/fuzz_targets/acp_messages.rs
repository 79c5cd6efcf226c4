//! The ACP agent (`toolport::serving::serve_acp`) fed arbitrary bytes as its input stream: framing,
//! JSON-RPC classification, every method's parameter handling, sessions without servers and
//! prompts. The agent must never panic or stop early, and every line it writes must be a
//! JSON-RPC 2.0 message.
//!
//! Sessions that bring their own `mcpServers` are filtered out: they would start arbitrary
//! commands or connect to arbitrary URLs. Sessions without servers read the (empty) home store
//! and the `cwd`'s workspace file, which is read-only.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tokio::io::AsyncReadExt as _;
use toolport::RuntimeOptions;
use toolport::serving::{AcpOptions, serve_acp as serve};

fn home() -> PathBuf {
    static HOME: OnceLock<PathBuf> = OnceLock::new();
    HOME.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("toolport-fuzz-acp-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        dir
    })
    .clone()
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("tokio: {e}"))
    })
}

/// True when a line asks for servers of its own (anywhere in its params).
fn brings_servers(line: &[u8]) -> bool {
    let Ok(value) = serde_json::from_slice::<Value>(line) else { return false };
    fn any_servers(v: &Value) -> bool {
        match v {
            Value::Object(map) => map.iter().any(|(k, v)| {
                (k == "mcpServers" && v.as_array().is_some_and(|a| !a.is_empty())) || any_servers(v)
            }),
            Value::Array(items) => items.iter().any(any_servers),
            _ => false,
        }
    }
    any_servers(&value)
}

fuzz_target!(|data: &[u8]| {
    let input: Vec<u8> = data
        .split(|b| *b == b'\n')
        .filter(|line| !brings_servers(line))
        .flat_map(|line| line.iter().copied().chain([b'\n']))
        .collect();
    let options = AcpOptions { home: home(), runtime: RuntimeOptions::default(), limits: Default::default() };
    let output = runtime().block_on(async move {
        let (writer, mut reader) = tokio::io::duplex(1 << 16);
        let mut out = Vec::new();
        // Read while serving: the duplex buffer is bounded.
        let (served, _) =
            tokio::join!(serve(std::io::Cursor::new(input), writer, options), reader.read_to_end(&mut out));
        assert!(served.is_ok(), "serve failed: {served:?}");
        out
    });
    for line in output.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let value: Value = serde_json::from_slice(line)
            .unwrap_or_else(|e| panic!("not JSON: {e}: {}", String::from_utf8_lossy(line)));
        assert_eq!(value.get("jsonrpc").and_then(Value::as_str), Some("2.0"), "{value}");
    }
});
