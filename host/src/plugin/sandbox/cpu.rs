//! A guest's share of one core over a sliding window (`limits.cpuPercent`).
//!
//! The busy-time rule (`limits.callMs`, `waits`) stops a guest that computes for too long
//! without once waiting, but it starts afresh at every wait: a guest that computes 999 ms and
//! sleeps 1 ms, for ever, never trips it and keeps a core busy. This budget closes that gap: the
//! CPU time a guest used in the last [`CPU_WINDOW`] may not pass `cpuPercent` of the window.
//!
//! What counts is the CPU time of the thread while it polls the guest's future ([`Meter::wrap`]):
//! the guest's code and the host calls it makes inline, never the time it waits (a pending
//! poll) or stands in the runtime's queue after yielding at an epoch tick. So many guests
//! sharing a few cores are each charged what they really got, not the wall time they wanted.
//! The cost is two clock reads per poll; the check itself rides on the epoch callback the
//! busy-time rule already has (`limits`), so computing pays nothing per instruction.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use nix::time::{ClockId, clock_gettime};

use crate::plugin::error::Fault;

/// The window `cpuPercent` is a share of. A minute, so that the default share (80 %, 48 s)
/// still admits one whole default `callMs` stretch of a server (30 s) and a burst after a quiet
/// spell, while a guest that keeps a core busy is stopped within about a minute.
pub(crate) const CPU_WINDOW: Duration = Duration::from_secs(60);

/// The window is kept as this many slots of CPU time (one second each): the sum over the slots
/// is the use over the last window, to within one slot.
const SLOTS: usize = 60;
const SLOT: Duration = Duration::from_secs(1);

/// Raised from the epoch callback when a guest has used more than its share of the window.
#[derive(Debug, thiserror::Error)]
#[error("CPU budget used up")]
pub(crate) struct OverCpu;

/// Whether a call's or a run's error is the CPU budget running out.
pub(crate) fn over_cpu(err: &wasmtime::Error) -> bool {
    err.chain().any(|c| c.is::<OverCpu>())
}

/// The fault a guest stopped for using more than `percent` of a core is reported as.
pub(crate) fn cpu_fault(percent: u8) -> Fault {
    Fault::CpuLimit { percent, window_s: CPU_WINDOW.as_secs() }
}

/// One store's CPU account: shared by the future that measures ([`Meter::wrap`]) and the epoch
/// callback that checks. Cheap to clone; the lock is only ever taken by the task that runs the
/// guest, so it is never contended.
#[derive(Debug, Clone)]
pub(crate) struct Meter {
    window: Arc<Mutex<Window>>,
    /// The CPU time the guest may use in one window.
    budget: Duration,
}

impl Meter {
    /// An account allowing `percent` of one core over [`CPU_WINDOW`]. 100 never stops a guest,
    /// whatever a poll across a slot's edge makes of the sums: it is how the limit is switched
    /// off (one guest runs on one thread at a time, so it cannot use more).
    pub fn new(percent: u8) -> Self {
        let budget = match percent {
            100.. => Duration::MAX,
            share => CPU_WINDOW * u32::from(share) / 100,
        };
        Self { window: Arc::new(Mutex::new(Window::new(Instant::now()))), budget }
    }

    /// Whether the guest has used more than its share of the last window (epoch callback).
    pub fn over(&self) -> bool {
        self.lock().used(Instant::now()) > self.budget
    }

    /// `future` (the guest's call or run), charging this account for the thread's CPU time
    /// during each of its polls.
    pub fn wrap<F: Future>(&self, future: F) -> Metered<F> {
        Metered { inner: Box::pin(future), meter: self.clone() }
    }

    fn charge(&self, used: Duration) {
        self.lock().add(Instant::now(), used);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Window> {
        // The window holds plain numbers: a panic mid-update leaves nothing to distrust.
        self.window.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A guest's future, charging its [`Meter`] after every poll.
pub(crate) struct Metered<F> {
    inner: Pin<Box<F>>,
    meter: Meter,
}

impl<F: Future> Future for Metered<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let start = Clock::now();
        let out = self.inner.as_mut().poll(cx);
        self.meter.charge(start.elapsed());
        out
    }
}

/// The calling thread's CPU clock, or the wall clock where the system has none (the poll's
/// wall time then stands for its CPU time: never less, so the limit still holds).
enum Clock {
    Thread(Duration),
    Wall(Instant),
}

impl Clock {
    fn now() -> Self {
        match thread_cpu() {
            Some(cpu) => Self::Thread(cpu),
            None => Self::Wall(Instant::now()),
        }
    }

    fn elapsed(&self) -> Duration {
        match self {
            Self::Thread(start) => thread_cpu().map_or(Duration::ZERO, |now| now.saturating_sub(*start)),
            Self::Wall(start) => start.elapsed(),
        }
    }
}

fn thread_cpu() -> Option<Duration> {
    let t = clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).ok()?;
    Some(Duration::new(u64::try_from(t.tv_sec()).ok()?, u32::try_from(t.tv_nsec()).ok()?))
}

/// CPU time per one-second slot over the last [`SLOTS`] seconds, and their running sum.
#[derive(Debug)]
struct Window {
    origin: Instant,
    slots: [Duration; SLOTS],
    /// Whole slots from `origin` to the newest slot written or read.
    newest: u64,
    sum: Duration,
}

impl Window {
    fn new(origin: Instant) -> Self {
        Self { origin, slots: [Duration::ZERO; SLOTS], newest: 0, sum: Duration::ZERO }
    }

    /// Moves the window on to `now`, dropping the slots that fell out of it.
    fn advance(&mut self, now: Instant) {
        let current = now.saturating_duration_since(self.origin).as_secs() / SLOT.as_secs();
        if current <= self.newest {
            return;
        }
        let stale = (current - self.newest).min(SLOTS as u64);
        for step in 1..=stale {
            let slot = &mut self.slots[slot_of(self.newest + step)];
            self.sum = self.sum.saturating_sub(*slot);
            *slot = Duration::ZERO;
        }
        self.newest = current;
    }

    fn add(&mut self, now: Instant, used: Duration) {
        self.advance(now);
        let slot = &mut self.slots[slot_of(self.newest)];
        *slot = slot.saturating_add(used);
        self.sum = self.sum.saturating_add(used);
    }

    fn used(&mut self, now: Instant) -> Duration {
        self.advance(now);
        self.sum
    }
}

fn slot_of(index: u64) -> usize {
    // `SLOTS` fits a u64 and the remainder is below it: no truncation either way.
    (index % SLOTS as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn use_older_than_the_window_no_longer_counts() {
        let origin = Instant::now();
        let mut w = Window::new(origin);
        w.add(origin, Duration::from_secs(20));
        w.add(origin + Duration::from_secs(30), Duration::from_secs(20));
        assert_eq!(w.used(origin + Duration::from_secs(59)), Duration::from_secs(40));
        // The first second's 20 s fall out as the window passes them.
        assert_eq!(w.used(origin + Duration::from_secs(60)), Duration::from_secs(20));
        assert_eq!(w.used(origin + Duration::from_secs(91)), Duration::ZERO);
        // A long quiet spell clears every slot once, however long it was.
        w.add(origin + Duration::from_secs(10_000), Duration::from_secs(1));
        assert_eq!(w.used(origin + Duration::from_secs(10_000)), Duration::from_secs(1));
    }

    #[test]
    fn the_budget_is_the_share_of_the_window() {
        let meter = Meter::new(50);
        assert_eq!(meter.budget, Duration::from_secs(30));
        meter.charge(Duration::from_secs(30));
        assert!(!meter.over(), "exactly the budget is within it");
        meter.charge(Duration::from_millis(1));
        assert!(meter.over());
        let off = Meter::new(100);
        off.charge(CPU_WINDOW * 2);
        assert!(!off.over(), "100 % is no limit");
    }

    #[tokio::test]
    async fn a_metered_future_is_charged_its_polls() {
        let meter = Meter::new(1);
        // Spins until the thread itself has used 700 ms, so a loaded machine cannot make it less.
        let spin = async {
            let start = Clock::now();
            while start.elapsed() < Duration::from_millis(700) {
                std::hint::black_box(0u64);
            }
        };
        meter.wrap(spin).await;
        // 700 ms of computing is more than 1 % of a minute (600 ms).
        assert!(meter.over(), "{:?}", meter.lock().used(Instant::now()));
        let idle = Meter::new(1);
        idle.wrap(tokio::time::sleep(Duration::from_millis(700))).await;
        assert!(!idle.over(), "waiting is not computing: {:?}", idle.lock().used(Instant::now()));
    }
}
