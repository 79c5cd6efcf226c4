//! Traces: toolport's own `tracing` spans (the ones that declare `otel.kind`) exported over OTLP
//! when the standard `OTEL_*` variables ask for it ([`otlp`]), with W3C Trace Context carried in
//! and out of MCP requests (`_meta.traceparent`, SEP-414) and HTTP headers.
//!
//! The rest of the library never touches the OpenTelemetry SDK: it makes `tracing` spans and
//! calls the helpers here ([`adopt`], [`carrier`]), which do nothing while traces are off. The
//! binary starts the exporter ([`start`]) before anything runs and flushes it
//! ([`Traces::shutdown`]) before it exits.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use opentelemetry::propagation::TextMapPropagator as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry::{KeyValue, global};
use opentelemetry_otlp::SpanExporter;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::resource::{EnvResourceDetector, ResourceDetector, TelemetryResourceDetector};
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Subscriber;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::Layer;
use tracing_subscriber::registry::LookupSpan;

use super::otlp_env::{Protocol, Signal, otlp};
use crate::observe::ObserveError;

/// The field a span declares to be exported: only spans made for OpenTelemetry carry it, so
/// the exporter never sees a log line or another span's fields (which may quote a URL).
pub const KIND_FIELD: &str = "otel.kind";

/// The W3C Trace Context header and `_meta` key of the parent span.
pub const TRACEPARENT: &str = "traceparent";
/// The W3C Trace Context header and `_meta` key of the vendors' trace state.
pub const TRACESTATE: &str = "tracestate";

/// Whether [`start`] turned traces on: while it is false every helper returns at once, so
/// unconfigured toolport pays a load per request and nothing more.
static ON: AtomicBool = AtomicBool::new(false);

/// Whether spans are exported.
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// The running exporter: a batch span processor over OTLP. Dropping it without
/// [`Traces::shutdown`] loses the spans of the last batch.
pub struct Traces {
    provider: SdkTracerProvider,
}

/// Starts exporting when `OTEL_*` asks for traces (`None` when not). Must run inside a Tokio
/// runtime's context: the gRPC exporter's channel is bound to it (the batch processor's own
/// thread then drives the exports, and the HTTP one uses the blocking client). `Err` names the
/// variable at fault.
pub fn start() -> Result<Option<Traces>, ObserveError> {
    let Some(protocol) = otlp(Signal::Traces)? else { return Ok(None) };
    let exporter = exporter(protocol)?;
    let provider =
        SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource()).build();
    global::set_text_map_propagator(TraceContextPropagator::new());
    ON.store(true, Ordering::Relaxed);
    Ok(Some(Traces { provider }))
}

/// The OTLP span exporter for `protocol`; the exporters read the endpoint, headers, timeout and
/// compression variables themselves.
fn exporter(protocol: Protocol) -> Result<SpanExporter, ObserveError> {
    use opentelemetry_otlp::WithExportConfig as _;
    let built = match protocol {
        Protocol::Grpc => {
            SpanExporter::builder().with_tonic().with_protocol(opentelemetry_otlp::Protocol::Grpc).build()
        }
        Protocol::HttpProtobuf => SpanExporter::builder()
            .with_http()
            .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
            .build(),
    };
    built.map_err(|e| ObserveError(format!("cannot export traces over OTLP: {e}")))
}

/// `service.name` `toolport` and `service.version`, unless `OTEL_RESOURCE_ATTRIBUTES` or
/// `OTEL_SERVICE_NAME` say otherwise (the SDK's detectors read them; the service name variable
/// wins, as the specification says).
fn resource() -> Resource {
    let mut resource = Resource::builder_empty()
        .with_attributes([
            KeyValue::new("service.name", "toolport"),
            KeyValue::new("service.version", env!("CARGO_PKG_VERSION")),
        ])
        .with_detectors(&[
            Box::new(TelemetryResourceDetector) as Box<dyn ResourceDetector>,
            Box::new(EnvResourceDetector::new()),
        ]);
    if let Some(name) = std::env::var("OTEL_SERVICE_NAME").ok().filter(|n| !n.trim().is_empty()) {
        resource = resource.with_service_name(name);
    }
    resource.build()
}

impl Traces {
    /// The `tracing` layer that hands toolport's spans to the exporter: only spans that declare
    /// [`KIND_FIELD`], whatever the log's verbosity; never an event (a log line may quote what
    /// the stderr writer masks).
    pub fn layer<S>(&self) -> impl Layer<S> + Send + Sync + 'static
    where
        S: Subscriber + for<'span> LookupSpan<'span> + Send + Sync,
    {
        let exported = tracing_subscriber::filter::filter_fn(|meta| {
            meta.is_span() && meta.fields().field(KIND_FIELD).is_some()
        });
        tracing_opentelemetry::layer()
            .with_tracer(self.provider.tracer("toolport"))
            .with_location(false)
            .with_threads(false)
            .with_target(false)
            .with_tracked_inactivity(false)
            .with_filter(exported)
    }

    /// Exports what is still queued and stops, waiting at most `timeout`.
    pub fn shutdown(self, timeout: Duration) -> Result<(), ObserveError> {
        ON.store(false, Ordering::Relaxed);
        self.provider
            .shutdown_with_timeout(timeout)
            .map_err(|e| ObserveError(format!("cannot flush the traces: {e}")))
    }
}

/// Makes the remote span in `traceparent`/`tracestate` (a request's `_meta` or its W3C headers)
/// `span`'s parent. Call it before `span` is first entered; a malformed `traceparent` is ignored
/// (the span starts a trace of its own), as the W3C specification says.
pub fn adopt(span: &tracing::Span, traceparent: Option<&str>, tracestate: Option<&str>) {
    let Some(traceparent) = traceparent.filter(|_| on()) else { return };
    let mut carrier = HashMap::new();
    carrier.insert(TRACEPARENT.to_string(), traceparent.to_string());
    if let Some(state) = tracestate {
        carrier.insert(TRACESTATE.to_string(), state.to_string());
    }
    let parent = TraceContextPropagator::new().extract(&carrier);
    let _ = span.set_parent(parent);
}

/// `span`'s context as W3C Trace Context entries (`traceparent`, and `tracestate` when there is
/// one), for a request's `_meta` or headers; empty while traces are off.
pub fn carrier(span: &tracing::Span) -> Vec<(&'static str, String)> {
    if !on() {
        return Vec::new();
    }
    let mut carrier: HashMap<String, String> = HashMap::new();
    TraceContextPropagator::new().inject_context(&span.context(), &mut carrier);
    [TRACEPARENT, TRACESTATE]
        .into_iter()
        .filter_map(|key| carrier.remove(key).filter(|v| !v.is_empty()).map(|v| (key, v)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_the_helpers_do_nothing() {
        let span = tracing::info_span!("test", otel.kind = "client");
        adopt(&span, Some("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"), None);
        assert!(carrier(&span).is_empty());
    }

    #[test]
    fn both_exporters_build_from_the_variables_alone() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        let Ok(runtime) = runtime else { panic!("no runtime") };
        let _inside = runtime.enter();
        assert!(exporter(Protocol::Grpc).is_ok());
        assert!(exporter(Protocol::HttpProtobuf).is_ok());
    }

    #[test]
    fn the_service_is_toolport_with_its_version() {
        let resource = resource();
        let name = resource.get(&opentelemetry::Key::new("service.name")).map(|v| v.to_string());
        let expected = std::env::var("OTEL_SERVICE_NAME").unwrap_or_else(|_| "toolport".to_string());
        assert_eq!(name, Some(expected));
        let version = resource.get(&opentelemetry::Key::new("service.version")).map(|v| v.to_string());
        assert_eq!(version.as_deref(), Some(env!("CARGO_PKG_VERSION")));
    }
}
