//! Where what passes through toolport is recorded, as one value the host hands the runtime
//! (`RuntimeOptions::observer`) rather than process globals: the audit log of exchanges, the
//! trail of trust decisions, the notices for the person running it, and the metrics. Cheap to
//! clone (a few `Arc`s). `Observer::default()` writes no file, has no meter and sends notices
//! to `tracing` (`info`, target `toolport::notice`), which a library user shows, redirects or
//! silences as it likes.
//!
//! Both files are written by one thread (`writer.rs`): an exchange or a decision hands its
//! line over and goes on. [`Observer::flush`] returns once every line handed over is in its
//! file: the runtime's shutdown calls it and the binary calls it when a command ends; the last
//! clone dropped writes what is left too.
//!
//! The metrics are a meter of the observer's own ([`Observer::with_metrics`]: an OpenTelemetry
//! provider with the OTLP exporter and the Prometheus reader as asked, `metrics.rs`), shared by
//! its clones: [`Observer::finished`] counts each exchange in it, the plugin host each plugin
//! call, serve's rate limits each refusal, and `serve --http --metrics` renders it. Without a
//! meter each of those is one `Option` checked. [`Observer::shutdown`] exports its last points
//! when the host is done.

use std::fmt::Display;
use std::path::PathBuf;
use std::sync::Arc;

use std::time::Duration;

use super::audit_log::{self, AuditLine, AuditLog};
use super::metrics::{LiveSource, Metrics};
use super::writer::{Render, Target, Writer};
use super::{Exchange, ObserveError};
use crate::notice::{self, NoticePrinter};

/// Where the host keeps the trail of trust decisions: the file and the workspace its lines
/// are about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditTrail {
    /// The trail file (`<home>/audit/decisions.jsonl` for the binary).
    pub file: PathBuf,
    /// The workspace root, written on every line.
    pub workspace: PathBuf,
}

/// The host's recorders (see the module's documentation).
#[derive(Clone, Default)]
pub struct Observer(Arc<Parts>);

/// What an observer holds: one allocation shared by its clones, so handing it to each call
/// costs one reference count.
#[derive(Clone, Default)]
struct Parts {
    log: Option<AuditLog>,
    /// Where the log's lines go, when it names a file.
    log_target: Option<Target>,
    trail: Option<AuditTrail>,
    notices: Option<NoticePrinter>,
    /// Started with the first file named: an observer without a file has no thread.
    writer: Option<Arc<Writer>>,
    /// The meter, when metrics were asked for: no meter, no instrument.
    metrics: Option<Metrics>,
}

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observer")
            .field("log", &self.0.log)
            .field("trail", &self.0.trail)
            .field("notices", &self.0.notices.is_some())
            .field("metrics", &self.0.metrics.is_some())
            .finish()
    }
}

impl Observer {
    /// Records nothing on file; notices go to `tracing`. The same as `Default`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends every exchange to `log`'s file, and shows it through its printer when asked.
    pub fn with_audit_log(mut self, log: AuditLog) -> Self {
        let parts = Arc::make_mut(&mut self.0);
        parts.log_target = log.file.as_deref().map(|file| Target {
            file: Arc::from(file),
            rotate_at: audit_log::ROTATE_AT,
            kept: audit_log::KEPT,
        });
        if parts.log_target.is_some() {
            parts.start_writer();
        }
        parts.log = Some(log);
        self
    }

    /// Appends every trust decision to `trail`.
    pub fn with_audit_trail(mut self, trail: AuditTrail) -> Self {
        let parts = Arc::make_mut(&mut self.0);
        parts.start_writer();
        parts.trail = Some(trail);
        self
    }

    /// Sends every notice to `printer` (the binary's stderr) instead of `tracing`.
    pub fn with_notices(mut self, printer: NoticePrinter) -> Self {
        Arc::make_mut(&mut self.0).notices = Some(printer);
        self
    }

    /// Counts what passes through in a meter of this observer's own: read by OTLP when the
    /// standard `OTEL_*` variables ask for metrics, and by `serve --http --metrics` as
    /// Prometheus text when `prometheus`. With neither the observer stays without a meter
    /// (nothing is counted, nothing costs). `Err` names the `OTEL_*` variable that asks for what
    /// toolport cannot send, or the exporter that cannot be built. The gRPC exporter binds to
    /// the tokio runtime it is built in: call this inside one. Its clones share the meter;
    /// [`Observer::shutdown`] exports what is left.
    pub fn with_metrics(self, prometheus: bool) -> Result<Self, ObserveError> {
        Ok(match Metrics::start(prometheus)? {
            Some(metrics) => self.with_meter(metrics),
            None => self,
        })
    }

    /// Counts in `metrics` (a meter built by the caller: the tests, with the readers they chose).
    pub(crate) fn with_meter(mut self, metrics: Metrics) -> Self {
        Arc::make_mut(&mut self.0).metrics = Some(metrics);
        self
    }

    /// The audit log this observer writes, if any.
    pub fn audit_log(&self) -> Option<&AuditLog> {
        self.0.log.as_ref()
    }

    /// The trail this observer writes, if any.
    pub fn audit_trail(&self) -> Option<&AuditTrail> {
        self.0.trail.as_ref()
    }

    /// Tells the person `line` (several lines when it holds line ends).
    pub fn tell(&self, line: impl Display) {
        notice::tell(self.0.notices.as_ref(), line);
    }

    /// One exchange ended: it goes to the audit log and the metrics.
    pub fn finished(&self, exchange: &Exchange<'_>) {
        self.audit(exchange);
        if let Some(metrics) = &self.0.metrics {
            metrics.record(exchange);
        }
    }

    /// One plugin call ended: the memory its store grew to and how long it took, counted.
    pub(crate) fn plugin_call(&self, plugin: &str, memory_bytes: u64, duration: Duration) {
        if let Some(metrics) = &self.0.metrics {
            metrics.plugin_call(plugin, memory_bytes, duration);
        }
    }

    /// `serve --http` refused a request over the `limit` (`caller` or `tool`), counted.
    pub(crate) fn rate_limited(&self, limit: &'static str) {
        if let Some(metrics) = &self.0.metrics {
            metrics.rate_limited(limit);
        }
    }

    /// The gauges read what toolport holds from `source` from now on (serve: its runtime and
    /// its clients); nothing without a meter.
    pub(crate) fn set_live(&self, source: LiveSource) {
        if let Some(metrics) = &self.0.metrics {
            metrics.set_live(source);
        }
    }

    /// Whether [`Observer::prometheus_text`] can render this observer's meter.
    pub(crate) fn has_prometheus(&self) -> bool {
        self.0.metrics.as_ref().is_some_and(Metrics::has_prometheus)
    }

    /// Every instrument now, in the Prometheus text exposition format (version 0.0.4); `None`
    /// when the observer has no meter or its meter no Prometheus reader.
    pub(crate) fn prometheus_text(&self) -> Option<Result<String, ObserveError>> {
        self.0.metrics.as_ref()?.prometheus_text()
    }

    /// Appends `exchange`'s line to the audit log, and shows it on stderr when asked.
    fn audit(&self, exchange: &Exchange<'_>) {
        if !exchange.audit.enabled {
            return;
        }
        let Some(log) = &self.0.log else { return };
        let printer = log.printer.as_ref().filter(|_| log.stderr || exchange.audit.stderr);
        if self.0.log_target.is_none() && printer.is_none() {
            return;
        }
        let line = AuditLine::of(exchange);
        if let Some(printer) = printer {
            match serde_json::to_string(&line) {
                Ok(text) => printer(&text),
                Err(e) => tracing::warn!("cannot show an audit line: {e}"),
            }
        }
        if let Some(target) = &self.0.log_target {
            self.write(target.clone(), Box::new(move |out: &mut Vec<u8>| serde_json::to_writer(out, &line)));
        }
    }

    /// Appends a line to the trail, when there is one: `line` makes it from the trail (its
    /// workspace); it is serialized on the writer's thread. The trail rotates past
    /// `rotate_at` bytes into one older file.
    pub(crate) fn append_to_trail<T>(&self, rotate_at: u64, line: impl FnOnce(&AuditTrail) -> T)
    where
        T: serde::Serialize + Send + 'static,
    {
        let Some(trail) = &self.0.trail else { return };
        let value = line(trail);
        let target = Target { file: Arc::from(trail.file.as_path()), rotate_at, kept: 1 };
        self.write(target, Box::new(move |out: &mut Vec<u8>| serde_json::to_writer(out, &value)));
    }

    fn write(&self, target: Target, render: Render) {
        match &self.0.writer {
            Some(writer) => writer.append(target, render),
            None => super::writer::write_here(&target, render),
        }
    }

    /// Returns once every line handed over before this call is in its file.
    pub fn flush(&self) {
        if let Some(writer) = &self.0.writer {
            writer.flush();
        }
    }

    /// The host is done: every line is written ([`Observer::flush`]), and the meter exports
    /// its last points (a final OTLP push) and stops its readers. What the binary calls once
    /// its command ends; nothing is counted after it. A runtime's own shutdown only flushes,
    /// since the observer outlives it (a command may start several runtimes).
    pub fn shutdown(&self) {
        self.flush();
        if let Some(metrics) = &self.0.metrics {
            metrics.shutdown();
        }
    }
}

impl Parts {
    fn start_writer(&mut self) {
        if self.writer.is_none() {
            self.writer = Writer::start().map(Arc::new);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::config::AuditChoice;
    use crate::observe::metrics::Live;
    use crate::observe::{Kind, Outcome};

    fn call<'a>(server: &'a str, tool: &'a str) -> Exchange<'a> {
        Exchange {
            kind: Kind::Call,
            client: None,
            server,
            name: tool,
            outcome: Outcome::Ok,
            duration: Duration::from_millis(3),
            bytes_in: 0,
            bytes_out: 0,
            arguments: None,
            error: None,
            policies: &[],
            audit: AuditChoice::default(),
            guards: &[],
        }
    }

    /// An observer with a meter of its own, read through the Prometheus reader alone.
    fn metered() -> Observer {
        match Metrics::with_readers(None, true) {
            Ok(Some(metrics)) => Observer::new().with_meter(metrics),
            Ok(None) => panic!("no meter built"),
            Err(e) => panic!("{e}"),
        }
    }

    fn text(observer: &Observer) -> String {
        match observer.prometheus_text() {
            Some(Ok(text)) => text,
            Some(Err(e)) => panic!("{e}"),
            None => panic!("no Prometheus reader"),
        }
    }

    fn live(held_tools: u64) -> LiveSource {
        Arc::new(move || Live { held_tools, ..Default::default() })
    }

    /// The value of the sample `name` with exactly `labels`, in any order (the SDK keeps a
    /// point's attributes in the order it first saw them, or sorted).
    fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let mut wanted: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
        wanted.sort();
        text.lines().filter(|line| !line.starts_with('#')).find_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            let (found, mut got) = match series.split_once('{') {
                Some((found, rest)) => {
                    (found, rest.trim_end_matches('}').split(',').map(str::to_string).collect::<Vec<_>>())
                }
                None => (series, Vec::new()),
            };
            got.sort();
            (found == name && got == wanted).then(|| value.parse().ok()).flatten()
        })
    }

    #[test]
    fn two_observers_with_meters_of_their_own_count_apart() {
        let (a, b) = (metered(), metered());
        a.finished(&call("alpha", "echo"));
        // A clone is the same observer: it counts into the same meter.
        a.clone().finished(&call("alpha", "echo"));
        b.finished(&call("beta", "echo"));
        a.rate_limited("caller");
        b.plugin_call("shape", 1 << 20, Duration::from_millis(5));
        a.set_live(live(7));
        let (a, b) = (text(&a), text(&b));
        let echo = |server| [("server", server), ("tool", "echo"), ("kind", "call"), ("outcome", "ok")];
        assert_eq!(sample(&a, "toolport_calls_total", &echo("alpha")), Some(2.0), "{a}");
        assert_eq!(sample(&b, "toolport_calls_total", &echo("beta")), Some(1.0), "{b}");
        assert!(!a.contains("beta") && !b.contains("alpha"), "{a}\n{b}");
        assert_eq!(sample(&a, "toolport_serve_rate_limited_total", &[("limit", "caller")]), Some(1.0), "{a}");
        assert!(!b.contains("toolport_serve_rate_limited_total{"), "{b}");
        assert_eq!(
            sample(&b, "toolport_plugin_memory_bytes_count", &[("plugin", "shape")]),
            Some(1.0),
            "{b}"
        );
        assert!(!a.contains("plugin=\"shape\""), "{a}");
        assert_eq!(sample(&a, "toolport_tools_held", &[]), Some(7.0), "{a}");
        assert_eq!(sample(&b, "toolport_tools_held", &[]), None, "{b}");
    }

    #[test]
    fn an_observer_without_a_meter_counts_nothing_and_renders_nothing() {
        let observer = Observer::new();
        observer.finished(&call("alpha", "echo"));
        observer.plugin_call("shape", 1 << 20, Duration::from_millis(5));
        observer.rate_limited("tool");
        observer.set_live(Arc::new(|| panic!("no meter: nothing reads what toolport holds")));
        assert!(!observer.has_prometheus());
        assert!(observer.prometheus_text().is_none());
        observer.shutdown();
    }
}
