//! Connect progress as events: each server's connect starting and ending (its tools listed, or
//! why not), and the end of a connect round. The library draws nothing; a host that wants
//! spinners (the `toolport` binary, on a terminal stderr) gives [`RuntimeOptions::progress`] a
//! [`ProgressSink`] that draws them from these events.
//!
//! [`RuntimeOptions::progress`]: super::RuntimeOptions::progress

use std::sync::Arc;

/// One step of a connect round, as a host shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectEvent<'a> {
    /// `server`'s connect began.
    Started {
        /// The server's name.
        server: &'a str,
    },
    /// `server` is up and listed `tools` tools.
    Listed {
        /// The server's name.
        server: &'a str,
        /// How many tools it listed.
        tools: usize,
    },
    /// `server` did not come up.
    Failed {
        /// The server's name.
        server: &'a str,
        /// Why, whole (the status view's error); [`ConnectEvent::line`] summarizes it.
        error: &'a str,
    },
    /// Every connect of the round has ended: what a spinner view clears its lines on, so the
    /// status view that follows starts on a clean line.
    RoundEnded,
}

impl ConnectEvent<'_> {
    /// The line a progress view shows for this step (`connecting github`, `github: 3 tools
    /// listed`, `github: <the error, summarized>`); `None` for the end of a round.
    pub fn line(&self) -> Option<String> {
        match self {
            Self::Started { server } => Some(format!("connecting {server}")),
            Self::Listed { server, tools } => {
                Some(format!("{server}: {} listed", crate::text::counted(*tools, "tool")))
            }
            Self::Failed { server, error } => {
                Some(format!("{server}: {}", crate::status::summarize_error(error)))
            }
            Self::RoundEnded => None,
        }
    }
}

/// Who is told of connect progress ([`RuntimeOptions::progress`]). Reports arrive from the
/// connecting tasks, several servers at once, so an implementation takes `&self` and must be
/// quick: a connect waits for its report.
///
/// [`RuntimeOptions::progress`]: super::RuntimeOptions::progress
pub trait ProgressSink: Send + Sync {
    /// One step of a connect round.
    fn report(&self, event: ConnectEvent<'_>);
}

/// The reports of one connect round, to the host's sink if it gave one.
pub struct Progress {
    sink: Option<Arc<dyn ProgressSink>>,
}

impl Progress {
    /// Reports to `sink`; `None` reports nothing.
    pub fn new(sink: Option<Arc<dyn ProgressSink>>) -> Self {
        Self { sink }
    }

    fn report(&self, event: ConnectEvent<'_>) {
        if let Some(sink) = &self.sink {
            sink.report(event);
        }
    }

    /// `server`'s connect began.
    pub fn server(&self, server: &str) {
        self.report(ConnectEvent::Started { server });
    }

    /// `server`'s connect ended: its tool count, or why it failed.
    pub fn done(&self, server: &str, outcome: &Result<usize, String>) {
        self.report(match outcome {
            Ok(tools) => ConnectEvent::Listed { server, tools: *tools },
            Err(error) => ConnectEvent::Failed { server, error },
        });
    }

    /// The round is over.
    pub fn finish(&self) {
        self.report(ConnectEvent::RoundEnded);
    }
}
