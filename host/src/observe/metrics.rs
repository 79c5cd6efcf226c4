//! Calls, errors and latency per server and tool, and what toolport holds now (servers by state,
//! held tools, serve's clients and calls in flight, plugins' memory), as OpenTelemetry
//! instruments: one definition of each, read by two readers — a `PeriodicReader` pushing OTLP
//! when the standard `OTEL_*` variables ask for it (`otlp_env`), and the reader that
//! `serve --http --metrics` renders as Prometheus text on each scrape (`prometheus.rs`).
//!
//! The meter is a value, [`Metrics`], that an `Observer` holds (`Observer::with_metrics`), not
//! the process's: two observers with meters of their own count apart, and nothing here is
//! global (OpenTelemetry's global meter provider is never set). Off costs nothing: an observer
//! without a meter checks an `Option` and no instrument exists.
//!
//! Errors are not an instrument of their own but the `outcome` label (`ok`, `tool-error`,
//! `error`), as OpenTelemetry's MCP conventions record `error.type` on the one duration
//! histogram rather than a second counter.
//!
//! Plugin fuel is not metered: wasmtime's fuel is off in toolport's engine (a guest is bounded
//! by epoch deadlines and a CPU share, `plugin/sandbox/`), so what is measured per plugin call
//! is the linear memory the store grew to and the call's wall time.

mod prometheus;

use std::sync::{Arc, Mutex, PoisonError};
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
/// set [`Metrics::set_live`] (serve: its runtime and its clients).
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

/// One meter: the provider, its readers and the instruments, built by [`Metrics::start`] and
/// held by an `Observer` (`Observer::with_metrics`). Cheap to clone: its clones are the same
/// meter, so every clone of the observer counts into the same instruments, and two meters
/// never see each other's counts.
#[derive(Clone)]
pub struct Metrics(Arc<Instruments>);

/// The instruments and the provider that owns them.
struct Instruments {
    provider: SdkMeterProvider,
    prometheus: Option<prometheus::Reader>,
    calls: Counter<u64>,
    duration: Histogram<f64>,
    plugin_memory: Histogram<u64>,
    plugin_duration: Histogram<f64>,
    rate_limited: Counter<u64>,
    /// What the gauges read when a reader collects ([`Metrics::set_live`]); the gauges'
    /// callbacks hold it too.
    live: Arc<Mutex<Option<LiveSource>>>,
    /// Observed through their callbacks; held so they stay registered.
    _gauges: Vec<ObservableGauge<u64>>,
}

impl Metrics {
    /// Builds a meter and its readers: OTLP when the `OTEL_*` variables ask for metrics
    /// (`otlp_env`), the Prometheus reader when `prometheus` (`serve --http --metrics`).
    /// `Ok(None)`: neither is on, nothing was built. `Err` names a variable that asks for what
    /// toolport cannot send, or an exporter that cannot be built. The gRPC exporter binds to
    /// the tokio runtime it is built in: call this inside one.
    pub fn start(prometheus: bool) -> Result<Option<Metrics>, ObserveError> {
        Self::with_readers(otlp_env::otlp(Signal::Metrics)?, prometheus)
    }

    /// [`Metrics::start`] with the OTLP protocol given rather than read from the environment.
    pub(crate) fn with_readers(
        otlp: Option<Protocol>,
        prometheus: bool,
    ) -> Result<Option<Metrics>, ObserveError> {
        if otlp.is_none() && !prometheus {
            return Ok(None);
        }
        let mut builder = SdkMeterProvider::builder();
        if let Some(protocol) = otlp {
            let exporter = opentelemetry_otlp::MetricExporter::builder();
            let exporter = match protocol {
                Protocol::Grpc => exporter.with_tonic().build(),
                Protocol::HttpProtobuf => exporter.with_http().build(),
            };
            let exporter =
                exporter.map_err(|e| ObserveError(format!("cannot export metrics over OTLP: {e}")))?;
            builder = builder.with_reader(PeriodicReader::builder(exporter).build());
        }
        let reader = prometheus.then(prometheus::Reader::default);
        if let Some(reader) = &reader {
            builder = builder.with_reader(reader.clone());
        }
        Ok(Some(Metrics(Arc::new(instruments(builder.build(), reader)))))
    }

    /// Exports what is left and stops the readers (the binary, once its command ends). The
    /// SDK may wait for a slow exporter: the binary bounds it (`cli/mod.rs`).
    pub fn shutdown(&self) {
        if let Err(e) = self.0.provider.shutdown() {
            tracing::debug!("metrics provider shutdown: {e}");
        }
    }

    /// Whether `serve --http --metrics` can render this meter (it has the Prometheus reader).
    pub fn has_prometheus(&self) -> bool {
        self.0.prometheus.is_some()
    }

    /// Every instrument now, in the Prometheus text exposition format (version 0.0.4); `None`
    /// when this meter has no Prometheus reader.
    pub fn prometheus_text(&self) -> Option<Result<String, ObserveError>> {
        Some(self.0.prometheus.as_ref()?.text())
    }

    /// Reads [`Live`] from `source` whenever a reader collects, from now on.
    pub fn set_live(&self, source: LiveSource) {
        *self.0.live.lock().unwrap_or_else(PoisonError::into_inner) = Some(source);
    }

    /// Counts `exchange`.
    pub fn record(&self, exchange: &Exchange<'_>) {
        // A resource's URI is not a label: a template makes them unbounded. Nor is a name no
        // server owns (an unknown tool): a client could make up as many as it likes.
        let name = if exchange.kind == Kind::Read || exchange.server.is_empty() { "" } else { exchange.name };
        let labels = [
            KeyValue::new("server", exchange.server.to_string()),
            KeyValue::new("tool", name.to_string()),
            KeyValue::new("kind", exchange.kind.as_str()),
            KeyValue::new("outcome", exchange.outcome.as_str()),
        ];
        self.0.calls.add(1, &labels);
        self.0.duration.record(exchange.duration.as_secs_f64(), &labels);
    }

    /// One plugin call ended: the linear memory its store grew to (bytes) and how long it took.
    pub fn plugin_call(&self, plugin: &str, memory_bytes: u64, duration: Duration) {
        let labels = [KeyValue::new("plugin", plugin.to_string())];
        self.0.plugin_memory.record(memory_bytes, &labels);
        self.0.plugin_duration.record(duration.as_secs_f64(), &labels);
    }

    /// `serve --http` refused a request over a rate limit: `limit` is `caller` (`--rate-limit`)
    /// or `tool` (`--tool-rate-limit`). The tool is no label: a client names as many as it likes.
    pub fn rate_limited(&self, limit: &'static str) {
        self.0.rate_limited.add(1, &[KeyValue::new("limit", limit)]);
    }
}

/// The one definition of each instrument.
fn instruments(provider: SdkMeterProvider, prometheus: Option<prometheus::Reader>) -> Instruments {
    let meter: Meter = provider.meter("toolport");
    let live: Arc<Mutex<Option<LiveSource>>> = Arc::default();
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
            .with_callback({
                let live = live.clone();
                move |observer| {
                    for (state, count) in now(&live).map(|l| l.servers).unwrap_or_default() {
                        observer.observe(count, &[KeyValue::new("state", state)]);
                    }
                }
            })
            .build(),
        gauge(&meter, &live, "toolport.tools.held", "Tools the trust step holds off the surface", |l| {
            l.held_tools
        }),
        gauge(&meter, &live, "toolport.serve.calls_in_flight", "Requests serve is answering now", |l| {
            l.calls_in_flight
        }),
        gauge(&meter, &live, "toolport.serve.clients", "Clients connected to serve", |l| l.clients),
    ];
    Instruments {
        provider,
        prometheus,
        calls,
        duration,
        plugin_memory,
        plugin_duration,
        rate_limited,
        live,
        _gauges: gauges,
    }
}

/// A gauge of one number of [`Live`], observed only while a source is set.
fn gauge(
    meter: &Meter,
    live: &Arc<Mutex<Option<LiveSource>>>,
    name: &'static str,
    description: &'static str,
    read: fn(&Live) -> u64,
) -> ObservableGauge<u64> {
    let live = live.clone();
    meter
        .u64_observable_gauge(name)
        .with_description(description)
        .with_callback(move |observer| {
            if let Some(live) = now(&live) {
                observer.observe(read(&live), &[]);
            }
        })
        .build()
}

/// What `live`'s source says now, if one is set. The source is called outside the lock: it
/// reads the runtime, which may take locks of its own.
fn now(live: &Mutex<Option<LiveSource>>) -> Option<Live> {
    let source = live.lock().unwrap_or_else(PoisonError::into_inner).clone()?;
    Some(source())
}
