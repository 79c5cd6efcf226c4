//! Lines the library has for the person running it: a sign-in address, `serve`'s "reconnecting
//! github", a server's request to open a page. The library never prints them itself, so an
//! embedding host decides where they go, through its `Observer` (`Observer::with_notices`): the
//! `toolport` binary hands it a printer that writes them to stderr; without one they are
//! `tracing` events at `info` under the target `toolport::notice`, which a host can show,
//! redirect or silence.
//!
//! Notices are for people. What a program reads (a command's output, a protocol) is the
//! caller's, and diagnostics for whoever debugs toolport are plain `tracing` events.

use std::fmt::Display;
use std::sync::Arc;

/// Where notices go: one line each, without its line end.
pub type NoticePrinter = Arc<dyn Fn(&str) + Send + Sync>;

/// Tells the person `line` (several lines when it holds line ends) through `printer`, or as a
/// `tracing` event without one.
pub(crate) fn tell(printer: Option<&NoticePrinter>, line: impl Display) {
    match printer {
        Some(print) => print(&line.to_string()),
        None => tracing::info!(target: "toolport::notice", "{line}"),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// A printer receives the notice as written; without one, nothing reaches it.
    #[test]
    fn notices_reach_the_printer_the_host_set() {
        let seen = Arc::new(Mutex::new(Vec::<String>::new()));
        let sink = seen.clone();
        let printer: NoticePrinter = Arc::new(move |line: &str| {
            sink.lock().unwrap_or_else(|p| p.into_inner()).push(line.to_string());
        });
        tell(Some(&printer), format_args!("toolport serve: reconnecting {}", "notice-test-1"));
        tell(None, "toolport serve: reconnecting notice-test-2");
        let seen = seen.lock().unwrap_or_else(|p| p.into_inner());
        let ours: Vec<&String> = seen.iter().filter(|l| l.contains("notice-test-")).collect();
        assert_eq!(ours, ["toolport serve: reconnecting notice-test-1"]);
    }
}
