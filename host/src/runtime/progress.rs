//! Per-server spinners while connecting, only when a person is watching: on a terminal stderr
//! they show which server is slow; piped, nothing extra is printed.

use std::io::IsTerminal as _;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The spinners of one connect round.
pub struct Progress {
    multi: Option<MultiProgress>,
}

impl Progress {
    /// Spinners if `wanted` and stderr is a terminal; otherwise a no-op.
    pub fn new(wanted: bool) -> Self {
        let multi = (wanted && std::io::stderr().is_terminal())
            .then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()));
        Self { multi }
    }

    /// A spinner for `server`.
    pub fn server(&self, server: &str) -> Option<ProgressBar> {
        let multi = self.multi.as_ref()?;
        let bar = multi.add(ProgressBar::new_spinner());
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
            bar.set_style(style);
        }
        bar.set_message(format!("connecting {server}"));
        bar.enable_steady_tick(Duration::from_millis(100));
        Some(bar)
    }

    /// Removes every spinner, so the status view that follows starts on a clean line.
    pub fn finish(&self) {
        if let Some(multi) = &self.multi {
            let _ = multi.clear();
        }
    }
}

/// Marks one spinner done with a short outcome.
pub fn done(bar: Option<ProgressBar>, server: &str, outcome: &Result<usize, String>) {
    if let Some(bar) = bar {
        match outcome {
            Ok(n) => {
                bar.finish_with_message(format!("{server}: {} listed", crate::text::counted(*n, "tool")))
            }
            Err(e) => bar.finish_with_message(format!("{server}: {}", crate::status::summarize_error(e))),
        }
        bar.finish_and_clear();
    }
}
