//! A server's `notifications/message` (MCP logging) as a `tracing` event under the server's
//! name and level: `-v` shows what servers say (`-vv` their debug messages), and nothing
//! reaches stdout. Even a server's `error` stays at INFO: the server may log whatever it likes
//! whenever it likes, and toolport's own warnings must not drown in it.

// Logging is deprecated in 2026-07-28 (SEP-2577), but 2025-11-25 servers, most of today's,
// still send it.
#![allow(deprecated)]

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use serde_json::Value;

use crate::text::{clip_foreign, escape_line};

/// Logs one message of `server`. The text is the server's: clipped and escaped like every
/// foreign text before it reaches a log line.
pub(crate) fn record(server: &str, params: LoggingMessageNotificationParam) {
    let text = match &params.data {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let text = escape_line(&clip_foreign(&text)).into_owned();
    let logger = params.logger.as_deref().map(|l| escape_line(l).into_owned()).unwrap_or_default();
    let level = format!("{:?}", params.level).to_lowercase();
    match params.level {
        LoggingLevel::Debug => tracing::debug!(server, logger, level, "{text}"),
        _ => tracing::info!(server, logger, level, "{text}"),
    }
}
