//! Host impl of the `toolport:plugin/log` interface: a plugin's log lines go to the host's
//! `tracing` log under the plugin's name, capped so a plugin cannot flood it, and escaped so
//! it cannot forge one: a `\n` followed by `ERROR toolport: …` would read as the host's own
//! line, and an escape sequence would reach the user's terminal.

use super::bindings::Level;
use super::bindings::policy::toolport::plugin::log::Host;
use super::sandbox::store::State;
use crate::text::{escape_line, floor_char_boundary};

/// Longest log line a plugin may write; the rest is cut so a plugin cannot flood the log.
const MAX_LOG_LINE: usize = 4096;
/// Log lines kept per store (one call, or one transport connection); later ones are dropped.
const MAX_LOG_LINES: u32 = 1000;

impl Host for State {
    fn log(&mut self, level: Level, message: String) {
        self.log_lines = self.log_lines.saturating_add(1);
        if self.log_lines > MAX_LOG_LINES {
            if self.log_lines == MAX_LOG_LINES + 1 {
                tracing::warn!(
                    plugin = &*self.plugin,
                    "plugin log limit ({MAX_LOG_LINES} lines) reached; dropping the rest"
                );
            }
            return;
        }
        let mut message = message;
        if message.len() > MAX_LOG_LINE {
            message.truncate(floor_char_boundary(&message, MAX_LOG_LINE));
        }
        let message = escape_line(&message);
        if let Some(sink) = &self.log_sink {
            sink.push(level, &message);
        }
        let plugin = &*self.plugin;
        match level {
            Level::Trace => tracing::trace!(plugin, "{message}"),
            Level::Debug => tracing::debug!(plugin, "{message}"),
            Level::Info => tracing::info!(plugin, "{message}"),
            Level::Warn => tracing::warn!(plugin, "{message}"),
            Level::Error => tracing::error!(plugin, "{message}"),
        }
    }
}
