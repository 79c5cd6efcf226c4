//! Lines the library has for the person running it: a sign-in address, `serve`'s "reconnecting
//! github", a server's request to open a page. The library never prints them itself, so an
//! embedding host decides where they go: the `toolport` binary installs a printer that writes
//! them to stderr ([`set_notice_printer`]); without one they are `tracing` events at `info`
//! under the target `toolport::notice`, which a host can show, redirect or silence.
//!
//! Notices are for people. What a program reads (a command's output, a protocol) is the
//! caller's, and diagnostics for whoever debugs toolport are plain `tracing` events.

use std::fmt::Display;
use std::sync::{Arc, RwLock};

/// Where notices go: one line each, without its line end.
pub type NoticePrinter = Arc<dyn Fn(&str) + Send + Sync>;

static PRINTER: RwLock<Option<NoticePrinter>> = RwLock::new(None);

/// Sends every later notice to `printer` (`None`: back to `tracing`).
pub fn set_notice_printer(printer: Option<NoticePrinter>) {
    let mut slot = PRINTER.write().unwrap_or_else(|poisoned| poisoned.into_inner());
    *slot = printer;
}

/// Tells the person `line` (several lines when it holds line ends).
pub(crate) fn tell(line: impl Display) {
    let line = line.to_string();
    let printer = PRINTER.read().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
    match printer {
        Some(print) => print(&line),
        None => tracing::info!(target: "toolport::notice", "{line}"),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// A printer, once set, receives the notice as written; unset, nothing reaches it.
    #[test]
    fn notices_reach_the_printer_the_host_set() {
        let seen = Arc::new(Mutex::new(Vec::<String>::new()));
        let sink = seen.clone();
        set_notice_printer(Some(Arc::new(move |line: &str| {
            sink.lock().unwrap_or_else(|p| p.into_inner()).push(line.to_string());
        })));
        tell(format_args!("toolport serve: reconnecting {}", "notice-test-1"));
        set_notice_printer(None);
        tell("toolport serve: reconnecting notice-test-2");
        let seen = seen.lock().unwrap_or_else(|p| p.into_inner());
        let ours: Vec<&String> = seen.iter().filter(|l| l.contains("notice-test-")).collect();
        assert_eq!(ours, ["toolport serve: reconnecting notice-test-1"]);
    }
}
