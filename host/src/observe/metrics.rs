//! Calls, errors and latency per server and tool, and what toolport holds now (servers by state,
//! held tools, serve's clients and calls in flight, plugins' memory), as OpenTelemetry
//! instruments: one definition of each, read by two readers — a `PeriodicReader` pushing OTLP
//! when the standard `OTEL_*` variables ask for it (`otlp_env`), and the reader that
//! `serve --http --metrics` renders as Prometheus text on each scrape (`prometheus.rs`).
//!
//! Off costs nothing: unless [`start`] built a provider, [`record`] is one atomic load and no
//! instrument exists. Errors are not an instrument of their own but the `outcome` label
//! (`ok`, `tool-error`, `error`), as OpenTelemetry's MCP conventions record `error.type` on
//! the one duration histogram rather than a second counter.
//!
//! Plugin fuel is not metered: wasmtime's fuel is off in toolport's engine (a guest is bounded
//! by epoch deadlines and a CPU share, `plugin/sandbox/`), so what is measured per plugin call
//! is the linear memory the store grew to and the call's wall time.

mod prometheus;

use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, Meter, MeterProvider as _, ObservableGauge};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};

use super::otlp_env::{self, Protocol, Signal};
use super::{Exchange, Kind};
use crate::observe::ObserveError;

/// Latency buckets in seconds: most calls through toolport take milliseconds (a local stdio
/// server answers in 1-20 ms), remote ones hundreds, and a long tool minutes, up to the default
/// call timeout.
const CALL_BUCKETS: [f64; 16] =
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0];

/// Memory buckets in bytes: a guest starts at a few pages and is capped at `limits.memoryMb`
/// (64 MiB by default).
const MEMORY_BUCKETS: [f64; 10] = [
    1_048_576.0,
    2_097_152.0,
    4_194_304.0,
    8_388_608.0,
    16_777_216.0,
    33_554_432.0,
    67_108_864.0,
    134_217_728.0,
    268_435_456.0,
    536_870_912.0,
];

/// What toolport holds at a moment, for the gauges: read when a reader collects, from whoever
/// set [`set_live`] (serve: its runtime and its clients).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Live {
    /// Servers per state (`connected`, `error`, …), every state named even when 0, so a
    /// server leaving a state brings its count down rather than leaving the last value.
    pub servers: Vec<(&'static str, u64)>,
    /// Tools the trust step holds off the surface.
    pub held_tools: u64,
    /// Requests (calls, reads, prompts) serve is answering now.
    pub calls_in_flight: u64,
    /// Clients connected to serve.
    pub clients: u64,
}

/// Where [`Live`] comes from.
pub type LiveSource = Arc<dyn Fn() -> Live + Send + Sync>;

/// The instruments and the provider that owns them.
struct Metrics {
    provider: SdkMeterProvider,
    prometheus: Option<prometheus::Reader>,
    calls: Counter<u64>,
    duration: Histogram<f64>,
    plugin_memory: Histogram<u64>,
    plugin_duration: Histogram<f64>,
    rate_limited: Counter<u64>,
    /// Observed through their callbacks; held so they stay registered.
    _gauges: Vec<ObservableGauge<u64>>,
}

static METRICS: OnceLock<Metrics> = OnceLock::new();
static LIVE: Mutex<Option<LiveSource>> = Mutex::new(None);

/// Builds the instruments and their readers: OTLP when the `OTEL_*` variables ask for metrics,
/// the Prometheus reader when `prometheus` (`serve --http --metrics`). `Ok(false)`: neither is
/// on, nothing was built. Once built, later calls change nothing (`Ok(true)`). `Err` names a
/// variable that asks for what toolport cannot send, or an exporter that cannot be built.
/// The error stays text: the binary adds it to its own (`cli/mod.rs`).
pub fn start(prometheus: bool) -> Result<bool, String> {
    if METRICS.get().is_some() {
        return Ok(true);
    }
    let otlp = otlp_env::otlp(Signal::Metrics)?;
    if otlp.is_none() && !prometheus {
        return Ok(false);
    }
    let mut builder = SdkMeterProvider::builder();
    if let Some(protocol) = otlp {
        let exporter = opentelemetry_otlp::MetricExporter::builder();
        let exporter = match protocol {
            Protocol::Grpc => exporter.with_tonic().build(),
            Protocol::HttpProtobuf => exporter.with_http().build(),
        };
        let exporter = exporter.map_err(|e| ObserveError(format!("cannot export metrics over OTLP: {e}")))?;
        builder = builder.with_reader(PeriodicReader::builder(exporter).build());
    }
    let reader = prometheus.then(prometheus::Reader::default);
    if let Some(reader) = &reader {
        builder = builder.with_reader(reader.clone());
    }
    let provider = builder.build();
    let metrics = instruments(provider, reader);
    if let Err(lost) = METRICS.set(metrics) {
        // Another thread started them first: its provider is the one.
        let _ = lost.provider.shutdown();
    }
    Ok(true)
}

/// Exports what is left and stops the readers (the binary, once its command ends).
pub fn stop() {
    if let Some(metrics) = METRICS.get()
        && let Err(e) = metrics.provider.shutdown()
    {
        tracing::debug!("metrics provider shutdown: {e}");
    }
}

/// Every instrument now, in the Prometheus text exposition format (version 0.0.4); `None`
/// when the Prometheus reader was not started.
pub fn prometheus_text() -> Option<Result<String, String>> {
    let reader = METRICS.get()?.prometheus.as_ref()?;
    Some(reader.text().map_err(String::from))
}

/// Reads [`Live`] from `source` whenever a reader collects, from now on.
pub fn set_live(source: LiveSource) {
    *LIVE.lock().unwrap_or_else(PoisonError::into_inner) = Some(source);
}

/// Counts `exchange` in the metrics.
pub fn record(exchange: &Exchange<'_>) {
    let Some(metrics) = METRICS.get() else { return };
    // A resource's URI is not a label: a template makes them unbounded. Nor is a name no server
    // owns (an unknown tool): a client could make up as many as it likes.
    let name = if exchange.kind == Kind::Read || exchange.server.is_empty() { "" } else { exchange.name };
    let labels = [
        KeyValue::new("server", exchange.server.to_string()),
        KeyValue::new("tool", name.to_string()),
        KeyValue::new("kind", exchange.kind.as_str()),
        KeyValue::new("outcome", exchange.outcome.as_str()),
    ];
    metrics.calls.add(1, &labels);
    metrics.duration.record(exchange.duration.as_secs_f64(), &labels);
}

/// One plugin call ended: the linear memory its store grew to (bytes) and how long it took.
pub fn plugin_call(plugin: &str, memory_bytes: u64, duration: Duration) {
    let Some(metrics) = METRICS.get() else { return };
    let labels = [KeyValue::new("plugin", plugin.to_string())];
    metrics.plugin_memory.record(memory_bytes, &labels);
    metrics.plugin_duration.record(duration.as_secs_f64(), &labels);
}

/// `serve --http` refused a request over a rate limit: `limit` is `caller` (`--rate-limit`) or
/// `tool` (`--tool-rate-limit`). The tool is no label: a client names as many as it likes.
pub fn rate_limited(limit: &'static str) {
    let Some(metrics) = METRICS.get() else { return };
    metrics.rate_limited.add(1, &[KeyValue::new("limit", limit)]);
}

/// The one definition of each instrument.
fn instruments(provider: SdkMeterProvider, prometheus: Option<prometheus::Reader>) -> Metrics {
    let meter: Meter = provider.meter("toolport");
    let calls = meter
        .u64_counter("toolport.calls")
        .with_description(
            "Calls, reads, prompts and sign-ins through toolport, by server, tool, kind and outcome",
        )
        .build();
    let duration = meter
        .f64_histogram("toolport.call.duration")
        .with_unit("s")
        .with_description("How long each call, read, prompt or sign-in took, from the request to its answer")
        .with_boundaries(CALL_BUCKETS.to_vec())
        .build();
    let plugin_memory = meter
        .u64_histogram("toolport.plugin.memory")
        .with_unit("By")
        .with_description("The linear memory a plugin call's store grew to")
        .with_boundaries(MEMORY_BUCKETS.to_vec())
        .build();
    let plugin_duration = meter
        .f64_histogram("toolport.plugin.call.duration")
        .with_unit("s")
        .with_description("How long each plugin call took")
        .with_boundaries(CALL_BUCKETS.to_vec())
        .build();
    let rate_limited = meter
        .u64_counter("toolport.serve.rate_limited")
        .with_description("Requests serve --http refused over a rate limit, by limit (caller, tool)")
        .build();
    let gauges = vec![
        meter
            .u64_observable_gauge("toolport.servers")
            .with_description("Servers per state (connected, error, disabled, paused, missing)")
            .with_callback(|observer| {
                for (state, count) in live().map(|l| l.servers).unwrap_or_default() {
                    observer.observe(count, &[KeyValue::new("state", state)]);
                }
            })
            .build(),
        gauge(&meter, "toolport.tools.held", "Tools the trust step holds off the surface", |l| l.held_tools),
        gauge(&meter, "toolport.serve.calls_in_flight", "Requests serve is answering now", |l| {
            l.calls_in_flight
        }),
        gauge(&meter, "toolport.serve.clients", "Clients connected to serve", |l| l.clients),
    ];
    Metrics {
        provider,
        prometheus,
        calls,
        duration,
        plugin_memory,
        plugin_duration,
        rate_limited,
        _gauges: gauges,
    }
}

/// A gauge of one number of [`Live`], observed only while a source is set.
fn gauge(
    meter: &Meter,
    name: &'static str,
    description: &'static str,
    read: fn(&Live) -> u64,
) -> ObservableGauge<u64> {
    meter
        .u64_observable_gauge(name)
        .with_description(description)
        .with_callback(move |observer| {
            if let Some(live) = live() {
                observer.observe(read(&live), &[]);
            }
        })
        .build()
}

/// What the source says now, if one is set.
fn live() -> Option<Live> {
    let source = LIVE.lock().unwrap_or_else(PoisonError::into_inner).clone()?;
    Some(source())
}
