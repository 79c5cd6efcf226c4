//! Runtime glue for MCP servers built as `wasi:cli/command` components (and, for the benchmark,
//! as ordinary native programs): stdin and stdout as tokio streams for rmcp's
//! `(AsyncRead, AsyncWrite)` transport, and [`run`], a current-thread tokio runtime that idles
//! **blocked in `wasi:io/poll`**, burning no CPU between messages.
//!
//! # Why not tokio's own park
//!
//! On `wasm32-wasip2` std has no threads: its `Condvar` is `no_threads`, whose `wait` panics
//! ("condvar wait not supported") and whose `wait_timeout` is a plain `thread::sleep`. tokio's
//! `ParkThread` (the only parker without the `net` driver) therefore panics in `park()` when no
//! timer is pending, and in `park_timeout(d)` sleeps `d` blindly — input arriving meanwhile waits
//! for the timer. rmcp's own `examples/wasi` avoids both by spinning on `yield_now`, which keeps
//! a core busy. Neither may run here.
//!
//! # How idling works instead
//!
//! The runtime is built with `on_thread_park(reactor::park)`. Every WASI source (stdin, an HTTP
//! response future, a body stream, a deadline) is a [`Readiness`]: its `poll_ready` asks the
//! pollable `ready()` without blocking and, if not, stores the task's waker and the pollable in
//! a thread-local reactor and returns `Pending`. tokio calls the hook when its run queue is
//! empty; the hook blocks in `wasi:io/poll.poll` on every registered pollable plus a
//! monotonic-clock pollable, and wakes the tasks whose pollables are ready and, every time, the
//! `block_on` future (the "tick"; a ready pollable's waker may belong to a task that has
//! finished, and a wake-up that schedules nothing would send tokio into its own park). The
//! current-thread scheduler then sees pending work, skips its park and — since tokio 1.52.4
//! (tokio#8222; this crate asks for 1.54) — polls its time driver with a zero timeout, so timers
//! that are due fire and the thread never reaches the `Condvar`.
//!
//! # The trade-off: tokio timers while idle
//!
//! The hook cannot see tokio's timer wheel (tokio exposes no "next deadline"). So it bounds each
//! wait by [`TICK`]: when nothing became ready within it, the tick alone makes tokio poll its
//! timers. An idle server therefore wakes once per [`TICK`] (1 s; over 30 s idle under wasmtime
//! the process used no CPU time visible at the kernel's 10 ms resolution) and a `tokio::time`
//! timer fires up to one tick late *while nothing else happens*; with traffic, timers are checked
//! after every wake-up.
//! rmcp's server only arms timers for requests it sends to the client and for its 5 s shutdown
//! drain, so the lateness is not observable in these servers. Code that needs a precise
//! deadline uses [`sleep`], a monotonic-clock pollable in the same reactor.
//!
//! Stdout writes block (`blocking-write-and-flush` in chunks of at most 4096 bytes, the most one
//! call may take): a reply is written whole before the next message is read, and the host
//! drains its end. Stdin EOF (`stream-error.closed`) reads as end of file, so rmcp's service
//! ends and `main` returns with exit code 0.

#[cfg(target_os = "wasi")]
mod reactor;
#[cfg(target_os = "wasi")]
mod stdin;
#[cfg(target_os = "wasi")]
mod stdout;
#[cfg(target_os = "wasi")]
mod wasi_run;

#[cfg(target_os = "wasi")]
pub use reactor::{Readiness, TICK, sleep};
#[cfg(target_os = "wasi")]
pub use stdin::Stdin;
#[cfg(target_os = "wasi")]
pub use stdout::Stdout;
#[cfg(target_os = "wasi")]
pub use wasi_run::{run, stdio};

#[cfg(not(target_os = "wasi"))]
mod native;
#[cfg(not(target_os = "wasi"))]
pub use native::{run, stdio};
