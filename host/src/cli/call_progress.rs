//! `toolport call` on a terminal: the server's progress reports for the call, drawn as a
//! progress bar on stderr while it runs and cleared when the answer comes. Off a terminal the
//! call is made plainly: a pipe or a log file gets only the result.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use toolport::{CallError, CallOutcome, CallProgress, Runtime};

/// Calls `tool`, drawing its progress when stderr is a terminal.
pub async fn call(runtime: &Runtime, tool: &str, arguments: &str) -> Result<CallOutcome, CallError> {
    if !std::io::stderr().is_terminal() {
        return runtime.call(tool, arguments).await;
    }
    let (reports, mut received) = tokio::sync::mpsc::unbounded_channel();
    let call = runtime.call_with_progress(tool, arguments, reports);
    tokio::pin!(call);
    // Made at the first report: a call that reports nothing draws nothing.
    let mut bar: Option<ProgressBar> = None;
    loop {
        tokio::select! {
            outcome = &mut call => {
                if let Some(bar) = bar {
                    bar.finish_and_clear();
                }
                return outcome;
            }
            Some(report) = received.recv() => draw(&mut bar, &report),
        }
    }
}

/// Shows one report: a bar when the server says how much there is in all, else a spinner.
fn draw(bar: &mut Option<ProgressBar>, report: &CallProgress) {
    let bar = bar.get_or_insert_with(|| {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.enable_steady_tick(Duration::from_millis(120));
        bar
    });
    let done = amount(report.progress);
    let text = match report.total {
        Some(total) => {
            bar.set_style(
                ProgressStyle::with_template("{bar:30} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar.set_length(1000);
            let fraction = if total > 0.0 { (report.progress / total).clamp(0.0, 1.0) } else { 0.0 };
            bar.set_position((fraction * 1000.0) as u64);
            format!("{done}/{}", amount(total))
        }
        None => {
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            done
        }
    };
    match &report.message {
        Some(message) => bar.set_message(format!("{text} {message}")),
        None => bar.set_message(text),
    }
}

/// `3` for 3.0, `2.5` for 2.5: counts read as counts.
fn amount(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 { format!("{}", value as i64) } else { format!("{value}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_amounts_read_as_counts() {
        assert_eq!(amount(3.0), "3");
        assert_eq!(amount(2.5), "2.5");
    }
}
