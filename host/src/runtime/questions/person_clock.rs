//! Time spent waiting for a person does not count against a call's timeout. A tool call whose
//! server asks a question (an `elicitation/create` while the call is open, or an input-required
//! round) would otherwise time out while the person is still reading the form: `callMs` is
//! about servers that hang, not about people who think.

use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// How long the runtime's questions have kept a person busy, and whether one is open now.
pub struct PersonClock {
    spent: Mutex<Spent>,
    /// How many questions are open; calls wait on it while their budget is used up.
    open: watch::Sender<usize>,
}

#[derive(Default)]
struct Spent {
    /// Time of the questions that have ended (overlapping ones counted once).
    closed: Duration,
    /// When the current run of open questions began.
    since: Option<Instant>,
}

impl Default for PersonClock {
    fn default() -> Self {
        Self { spent: Mutex::new(Spent::default()), open: watch::channel(0).0 }
    }
}

impl PersonClock {
    /// Marks a question open until the guard is dropped.
    pub fn asking(&self) -> Asking<'_> {
        self.open.send_modify(|n| {
            if *n == 0
                && let Ok(mut spent) = self.spent.lock()
            {
                spent.since = Some(Instant::now());
            }
            *n += 1;
        });
        Asking { clock: self }
    }

    /// Time spent asking so far, the open question included.
    fn spent(&self) -> Duration {
        match self.spent.lock() {
            Ok(spent) => spent.closed + spent.since.map(|s| s.elapsed()).unwrap_or_default(),
            Err(_) => Duration::ZERO,
        }
    }
}

/// An open question; dropping it closes it.
pub struct Asking<'a> {
    clock: &'a PersonClock,
}

impl Drop for Asking<'_> {
    fn drop(&mut self) {
        self.clock.open.send_modify(|n| {
            *n = n.saturating_sub(1);
            if *n == 0
                && let Ok(mut spent) = self.clock.spent.lock()
                && let Some(since) = spent.since.take()
            {
                spent.closed += since.elapsed();
            }
        });
    }
}

/// Runs `work` for at most `budget` of time not spent asking a person; `None` if that ran out.
pub async fn within<T>(clock: &PersonClock, budget: Duration, work: impl Future<Output = T>) -> Option<T> {
    let start = Instant::now();
    let asked_before = clock.spent();
    let mut open = clock.open.subscribe();
    tokio::pin!(work);
    loop {
        let deadline = start + budget + clock.spent().saturating_sub(asked_before);
        tokio::select! {
            out = &mut work => return Some(out),
            _ = tokio::time::sleep_until(deadline) => {
                if *open.borrow_and_update() == 0 {
                    let now_deadline = start + budget + clock.spent().saturating_sub(asked_before);
                    if now_deadline <= Instant::now() {
                        return None;
                    }
                    continue;
                }
                // A person is answering: the budget stands still until they are done.
                tokio::select! {
                    out = &mut work => return Some(out),
                    _ = open.wait_for(|n| *n == 0) => {}
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_question_stops_the_clock() {
        let clock = PersonClock::default();
        let work = async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let asking = clock.asking();
            tokio::time::sleep(Duration::from_millis(500)).await;
            drop(asking);
            tokio::time::sleep(Duration::from_millis(50)).await;
            "done"
        };
        assert_eq!(within(&clock, Duration::from_millis(200), work).await, Some("done"));
    }

    #[tokio::test]
    async fn work_alone_still_times_out() {
        let clock = PersonClock::default();
        let work = tokio::time::sleep(Duration::from_secs(2));
        assert_eq!(within(&clock, Duration::from_millis(200), work).await, None);
    }
}
