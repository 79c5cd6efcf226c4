//! Where what passes through toolport is recorded, as one value the host hands the runtime
//! (`RuntimeOptions::observer`) rather than process globals: the audit log of exchanges, the
//! trail of trust decisions, and the notices for the person running it. Cheap to clone (a few
//! `Arc`s). `Observer::default()` writes no file and sends notices to `tracing` (`info`, target
//! `toolport::notice`), which a library user shows, redirects or silences as it likes.
//!
//! Both files are written by one thread (`writer.rs`): an exchange or a decision hands its
//! line over and goes on. [`Observer::flush`] returns once every line handed over is in its
//! file: the runtime's shutdown calls it and the binary calls it when a command ends; the last
//! clone dropped writes what is left too.
//!
//! The metrics are not here: an OpenTelemetry meter provider is the process's (`metrics::start`
//! builds it once, for the OTLP exporter and the Prometheus reader alike); [`Observer::finished`]
//! counts each exchange in it.

use std::fmt::Display;
use std::path::PathBuf;
use std::sync::Arc;

use super::audit_log::{self, AuditLine, AuditLog};
use super::writer::{Render, Target, Writer};
use super::{Exchange, metrics};
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
}

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observer")
            .field("log", &self.0.log)
            .field("trail", &self.0.trail)
            .field("notices", &self.0.notices.is_some())
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
        metrics::record(exchange);
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
}

impl Parts {
    fn start_writer(&mut self) {
        if self.writer.is_none() {
            self.writer = Writer::start().map(Arc::new);
        }
    }
}
