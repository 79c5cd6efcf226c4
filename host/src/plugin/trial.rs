//! What a one-off run of a policy or a shape leaves behind for its author (`toolport plugin
//! run`): the plugin's log lines, kept as well as logged, and the destinations its sandbox
//! refused. A runtime never asks for either, so nothing is kept unless a caller does.

use std::sync::{Arc, Mutex};

use super::bindings::Level;
use super::policy::NamePolicy;
use super::shape::ToolShape;

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

    fn lines(&self) -> Vec<PluginLogLine> {
        self.0.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

/// The same three methods on both handles, read from the loaded plugin each wraps.
macro_rules! trial_methods {
    ($handle:ty) => {
        impl $handle {
            /// From now on, keeps this plugin's log lines for `log_lines` (they are logged too).
            pub fn keep_logs(&self) {
                self.plugin.sandbox.keep_logs();
            }

            /// The log lines kept since `keep_logs`, oldest first.
            pub fn log_lines(&self) -> Vec<PluginLogLine> {
                self.plugin.sandbox.log_sink().map(|s| s.lines()).unwrap_or_default()
            }

            /// The destinations its sandbox refused so far (`tcp://…`, `name lookup of …`),
            /// oldest first.
            pub fn denials(&self) -> Vec<String> {
                self.plugin.sandbox.denials().all()
            }
        }
    };
}

trial_methods!(NamePolicy);
trial_methods!(ToolShape);
