//! The thread-local reactor: which pollables tasks wait on, and the park hook that blocks in
//! `wasi:io/poll` until one of them (or the tick) is ready.

use std::cell::RefCell;
use std::future::poll_fn;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use wasip2::clocks::monotonic_clock;
use wasip2::io::poll::{self, Pollable};

/// The longest an idle runtime stays blocked in `poll` before it lets tokio check its timers
/// (see the crate docs for why there is a bound at all).
pub const TICK: Duration = Duration::from_secs(1);

/// One task waiting on one pollable.
struct Wait {
    key: u64,
    pollable: Arc<Pollable>,
    waker: Waker,
}

#[derive(Default)]
struct Reactor {
    next_key: u64,
    waits: Vec<Wait>,
    /// The `block_on` future's waker, woken whenever the hook returns (at the latest after a
    /// [`TICK`]), so tokio always has work and looks at its timers.
    tick: Option<Waker>,
}

thread_local! {
    static REACTOR: RefCell<Reactor> = RefCell::new(Reactor::default());
}

/// A pollable a task can wait on through the reactor, any number of times (a stream's pollable
/// stays usable for the stream's life).
///
/// Field order matters to WASI: a pollable is a child of its stream or future, so an owner keeps
/// its `Readiness` in a field declared *before* the parent resource, and it is dropped first.
pub struct Readiness {
    key: u64,
    pollable: Arc<Pollable>,
}

impl Readiness {
    pub fn new(pollable: Pollable) -> Self {
        let key = REACTOR.with_borrow_mut(|r| {
            r.next_key += 1;
            r.next_key
        });
        Self { key, pollable: Arc::new(pollable) }
    }

    /// `Ready` when the pollable is ready now; otherwise registers the task's waker with the
    /// reactor (replacing an earlier one of this `Readiness`) and returns `Pending`.
    pub fn poll_ready(&self, cx: &mut Context<'_>) -> Poll<()> {
        if self.pollable.ready() {
            self.forget();
            return Poll::Ready(());
        }
        REACTOR.with_borrow_mut(|r| {
            if let Some(wait) = r.waits.iter_mut().find(|w| w.key == self.key) {
                if !wait.waker.will_wake(cx.waker()) {
                    wait.waker = cx.waker().clone();
                }
            } else {
                r.waits.push(Wait {
                    key: self.key,
                    pollable: Arc::clone(&self.pollable),
                    waker: cx.waker().clone(),
                });
            }
        });
        Poll::Pending
    }

    /// Waits until the pollable is ready.
    pub async fn ready(&self) {
        poll_fn(|cx| self.poll_ready(cx)).await
    }

    fn forget(&self) {
        // `try_with`: a task dropped while the thread-locals are torn down must not panic.
        let _ = REACTOR.try_with(|r| {
            if let Ok(mut r) = r.try_borrow_mut() {
                r.waits.retain(|w| w.key != self.key);
            }
        });
    }
}

impl Drop for Readiness {
    fn drop(&mut self) {
        self.forget();
    }
}

/// Waits `duration` on a monotonic-clock pollable: a precise deadline, unlike `tokio::time`
/// while the runtime is idle.
pub async fn sleep(duration: Duration) {
    let nanos = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
    Readiness::new(monotonic_clock::subscribe_duration(nanos)).ready().await
}

/// Registers the `block_on` future's waker as the tick (see [`TICK`]).
pub(crate) fn set_tick(waker: &Waker) {
    REACTOR.with_borrow_mut(|r| match &r.tick {
        Some(tick) if tick.will_wake(waker) => {}
        _ => r.tick = Some(waker.clone()),
    });
}

/// tokio's `on_thread_park` hook: blocks in `poll` on every registered pollable and a
/// [`TICK`] clock, then wakes the tasks whose pollables are ready and the tick, so tokio always
/// finds work, polls its timers without blocking and never reaches its own park.
pub(crate) fn park() {
    let clock = monotonic_clock::subscribe_duration(u64::try_from(TICK.as_nanos()).unwrap_or(u64::MAX));
    let wakers = REACTOR.with_borrow_mut(|r| {
        let mut list: Vec<&Pollable> = r.waits.iter().map(|w| &*w.pollable).collect();
        list.push(&clock);
        let ready = poll::poll(&list);
        drop(list);

        let ready_keys: Vec<u64> = ready
            .into_iter()
            // The clock is the last entry, past `waits`: its index finds nothing here.
            .filter_map(|index| r.waits.get(index as usize))
            .map(|w| w.key)
            .collect();
        let mut wakers = Vec::with_capacity(ready_keys.len() + 1);
        r.waits.retain(|w| {
            if ready_keys.contains(&w.key) {
                wakers.push(w.waker.clone());
                false
            } else {
                true
            }
        });
        // The tick is woken on every return, not only on a timeout: a ready pollable's waker may
        // belong to a task that has finished (the source outlived it), and a wake-up that
        // schedules nothing would send tokio into its own park. The spurious poll of the
        // `block_on` future costs nothing next to a wasm call.
        wakers.extend(r.tick.clone());
        wakers
    });
    // Woken outside the borrow: a waker only schedules its task, but keep the reactor free anyway.
    for waker in wakers {
        waker.wake();
    }
}
