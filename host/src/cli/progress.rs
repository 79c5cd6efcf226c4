//! Per-server spinners while connecting, only when a person is watching: on a terminal stderr
//! they show which server is slow; piped, nothing extra is printed. Drawn from the runtime's
//! connect events ([`ProgressSink`]), one spinner view per connect round.

use std::collections::HashMap;
use std::io::IsTerminal as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use toolport::{ConnectEvent, ProgressSink};

/// The spinners of the round under way, if one is.
#[derive(Default)]
pub struct Spinners {
    round: Mutex<Round>,
}

#[derive(Default)]
struct Round {
    multi: Option<MultiProgress>,
    bars: HashMap<String, ProgressBar>,
}

impl Spinners {
    /// A sink that draws spinners on stderr, or `None` when stderr is not a terminal.
    pub fn on_stderr() -> Option<Arc<dyn ProgressSink>> {
        std::io::stderr().is_terminal().then(|| Arc::new(Self::default()) as Arc<dyn ProgressSink>)
    }
}

impl ProgressSink for Spinners {
    fn report(&self, event: ConnectEvent<'_>) {
        let mut round = self.round.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let line = event.line();
        match event {
            ConnectEvent::Started { server } => {
                let multi = round
                    .multi
                    .get_or_insert_with(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()));
                let bar = multi.add(ProgressBar::new_spinner());
                if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
                    bar.set_style(style);
                }
                bar.set_message(line.unwrap_or_default());
                bar.enable_steady_tick(Duration::from_millis(100));
                round.bars.insert(server.to_string(), bar);
            }
            ConnectEvent::Listed { server, .. } | ConnectEvent::Failed { server, .. } => {
                if let Some(bar) = round.bars.remove(server) {
                    bar.finish_with_message(line.unwrap_or_default());
                    bar.finish_and_clear();
                }
            }
            // Removes every spinner, so the status view that follows starts on a clean line.
            ConnectEvent::RoundEnded => {
                round.bars.clear();
                if let Some(multi) = round.multi.take() {
                    let _ = multi.clear();
                }
            }
        }
    }
}
