//! Where a plugin's log lines are kept for a one-off run (`trial`): a leaf, because the
//! sandbox and the store that fill it sit below the plugins that are tried.

use std::sync::{Arc, Mutex};

use crate::plugin::bindings::Level;

/// One line a plugin wrote through `toolport:plugin/log`, as the host logged it (capped and
/// escaped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginLogLine {
    /// `trace`, `debug`, `info`, `warn` or `error`.
    pub level: &'static str,
    /// The text, escaped like the host log's copy.
    pub message: String,
}

/// Where a plugin's log lines are kept once a caller asked for them; shared by every store of
/// that plugin. Bounded by the log's own per-store cap.
#[derive(Debug, Clone, Default)]
pub(crate) struct LogSink(Arc<Mutex<Vec<PluginLogLine>>>);

impl LogSink {
    /// Keeps one line.
    pub fn push(&self, level: Level, message: &str) {
        let level = match level {
            Level::Trace => "trace",
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        };
        if let Ok(mut lines) = self.0.lock() {
            lines.push(PluginLogLine { level, message: message.to_string() });
        }
    }

    pub(in crate::plugin) fn lines(&self) -> Vec<PluginLogLine> {
        self.0.lock().map(|l| l.clone()).unwrap_or_default()
    }
}
