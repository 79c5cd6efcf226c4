//! The secret scanner (`cargo bench --bench secrets`): what redacting a typical result costs
//! (`trust/secrets`, applied to every text of every result by the call guard), against
//! parsing the same result as JSON in the same run (what rmcp does to every result anyway).
//!
//! The result is text a tool returns: source code with the words gitleaks' keywords look for
//! (`token`, `key`, `secret`, `password`, `api`), JSON with ids and hashes, paths and prose,
//! repeated to 4 KB and to 100 KB, with one made-up AWS key in each (so the redaction itself
//! runs). The first scan of a process also compiles the rules its keywords pick; that is timed
//! once, apart. The summary at the end prints the figures BENCHMARKS.md records.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::{Duration, Instant};

use criterion::Criterion;
use serde_json::{Value, json};
use toolport::display::{redact_secrets, scan_secrets};

/// One stretch of a typical result.
const CHUNK: &str = r#"// src/auth/client.rs
/// Builds the API client; the token comes from the environment, never from this file.
pub fn client(config: &Config) -> Result<Client, Error> {
    let token = std::env::var("SERVICE_TOKEN").map_err(|_| Error::MissingKey("SERVICE_TOKEN"))?;
    let secret_name = config.secret_name.as_deref().unwrap_or("default");
    Client::builder().api_version("2024-06-01").bearer(&token).build()
}
{"id": "550e8400-e29b-41d4-a716-446655440000", "sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
 "path": "/home/user/projects/service/src/auth/client.rs", "password_policy": "min 12 characters", "size": 4211}
The request failed with 401 Unauthorized: check that the access key has the right scopes and has not expired.
"#;

fn result_text(bytes: usize) -> String {
    let key = format!("{}{}", "AKIA", "QYLPMN5HHHFPZAM2");
    let mut text = format!("aws_access_key_id = {key}\n");
    while text.len() < bytes {
        text.push_str(CHUNK);
    }
    text.truncate(text.floor_char_boundary(bytes));
    text
}

fn main() {
    let small = result_text(4 * 1024);
    let large = result_text(100 * 1024);
    let as_json =
        |text: &str| json!({"content": [{"type": "text", "text": text}], "isError": false}).to_string();
    let (small_json, large_json) = (as_json(&small), as_json(&large));

    let started = Instant::now();
    let found = scan_secrets(&small).len();
    let first = started.elapsed();

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group("secrets");
    group.sample_size(30).measurement_time(Duration::from_secs(5));
    group.bench_function("redact_4kb", |b| b.iter(|| redact_secrets(&small, Vec::new())));
    group.bench_function("baseline_parse_4kb", |b| {
        b.iter(|| serde_json::from_str::<Value>(&small_json).unwrap())
    });
    group.bench_function("redact_100kb", |b| b.iter(|| redact_secrets(&large, Vec::new())));
    group.bench_function("baseline_parse_100kb", |b| {
        b.iter(|| serde_json::from_str::<Value>(&large_json).unwrap())
    });
    group.finish();
    criterion.final_summary();

    let median = |f: &dyn Fn()| {
        let mut samples: Vec<f64> = (0..50)
            .map(|_| {
                let started = Instant::now();
                f();
                started.elapsed().as_secs_f64()
            })
            .collect();
        samples.sort_by(f64::total_cmp);
        samples[samples.len() / 2]
    };
    let rows = [("4 KB", &small, &small_json), ("100 KB", &large, &large_json)];
    println!("\nsummary (secret scanner over a typical result; {found} secret in the 4 KB text):");
    println!(
        "  first scan of the process (compiles the rules its keywords pick): {:.1} ms",
        first.as_secs_f64() * 1e3
    );
    for (label, text, json) in rows {
        let redact = median(&|| {
            std::hint::black_box(redact_secrets(text, Vec::new()));
        });
        let parse = median(&|| {
            std::hint::black_box(serde_json::from_str::<Value>(json).unwrap());
        });
        println!(
            "  {label}: redact median {:.1} µs, JSON parse of the result (baseline) {:.1} µs; redact / parse = {:.1}x",
            redact * 1e6,
            parse * 1e6,
            redact / parse
        );
    }
}
