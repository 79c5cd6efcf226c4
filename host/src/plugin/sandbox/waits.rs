//! The host's waiting functions, wrapped to tell a guest that waits from one that computes.
//!
//! A sandboxed server lives as long as its connection and is idle most of the time, so its time
//! limit cannot be a deadline on the whole run (a plugin call's): it is a limit on *computing
//! without waiting*. The epoch callback (`limits::arm_busy_limit`) measures from
//! [`BusyClock::since`]; this file moves that mark forward each time the guest really waits —
//! blocks in `poll`, `pollable.block`, or a blocking stream read or write that had to wait for
//! the other side. A wait that was over at once (a poll of something already ready, a read with
//! data queued) does not count: a guest spinning on ready pollables is computing. wasmtime's
//! own implementations do the work; only the mark is ours.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use wasmtime::component::{Linker, Resource, ResourceTable};
use wasmtime_wasi::p2::bindings::io::poll::{Host as _, HostPollable as _};
use wasmtime_wasi::p2::bindings::io::streams::{
    self, Host as _, HostInputStream as _, HostOutputStream as _,
};
use wasmtime_wasi::p2::{DynInputStream, DynOutputStream, DynPollable, StreamError};

/// When the guest last stopped waiting: the start of its current stretch of computing.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BusyClock {
    since: Instant,
}

impl Default for BusyClock {
    fn default() -> Self {
        Self { since: Instant::now() }
    }
}

impl BusyClock {
    /// The start of the guest's current stretch of computing.
    pub fn since(&self) -> Instant {
        self.since
    }

    fn waited(&mut self) {
        self.since = Instant::now();
    }
}

/// What the wrapped functions need of a store's data.
pub(crate) trait Waits: Send + 'static {
    /// The resource table the guest's pollables and streams live in, and the clock to move.
    fn waits(&mut self) -> (&mut ResourceTable, &mut BusyClock);
}

/// The interfaces wasmtime defines the wrapped functions in, by the names its linker uses.
const POLL: &str = "wasi:io/poll@0.2.12";
const STREAMS: &str = "wasi:io/streams@0.2.12";

/// Replaces wasmtime's waiting functions with the wrapped ones. Call it after
/// `wasmtime_wasi::p2::add_to_linker_*` with shadowing allowed.
pub(crate) fn add_to_linker<T: Waits>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    let mut poll = linker.instance(POLL)?;
    poll.func_wrap_async("poll", |mut store, (pollables,): (Vec<Resource<DynPollable>>,)| {
        Box::new(async move {
            let (table, clock) = store.data_mut().waits();
            let (ready, waited) = Watched::new(table.poll(pollables)).await;
            mark(clock, waited);
            Ok((ready?,))
        })
    })?;
    poll.func_wrap_async("[method]pollable.block", |mut store, (pollable,): (Resource<DynPollable>,)| {
        Box::new(async move {
            let (table, clock) = store.data_mut().waits();
            let (done, waited) = Watched::new(table.block(pollable)).await;
            mark(clock, waited);
            done
        })
    })?;
    let mut streams = linker.instance(STREAMS)?;
    streams.func_wrap_async(
        "[method]input-stream.blocking-read",
        |mut store, (stream, len): (Resource<DynInputStream>, u64)| {
            Box::new(async move {
                let (table, clock) = store.data_mut().waits();
                let (read, waited) = Watched::new(table.blocking_read(stream, len)).await;
                mark(clock, waited);
                Ok((stream_result(table, read)?,))
            })
        },
    )?;
    streams.func_wrap_async(
        "[method]output-stream.blocking-write-and-flush",
        |mut store, (stream, bytes): (Resource<DynOutputStream>, Vec<u8>)| {
            Box::new(async move {
                let (table, clock) = store.data_mut().waits();
                let (written, waited) = Watched::new(table.blocking_write_and_flush(stream, bytes)).await;
                mark(clock, waited);
                Ok((stream_result(table, written)?,))
            })
        },
    )?;
    streams.func_wrap_async(
        "[method]output-stream.blocking-flush",
        |mut store, (stream,): (Resource<DynOutputStream>,)| {
            Box::new(async move {
                let (table, clock) = store.data_mut().waits();
                let (flushed, waited) = Watched::new(table.blocking_flush(stream)).await;
                mark(clock, waited);
                Ok((stream_result(table, flushed)?,))
            })
        },
    )?;
    Ok(())
}

fn mark(clock: &mut BusyClock, waited: bool) {
    if waited {
        clock.waited();
    }
}

/// A stream operation's outcome as the guest receives it (a closed stream or an error
/// resource), or the trap it turned into.
fn stream_result<V>(
    table: &mut ResourceTable,
    result: Result<V, StreamError>,
) -> wasmtime::Result<Result<V, streams::StreamError>> {
    match result {
        Ok(value) => Ok(Ok(value)),
        Err(e) => Ok(Err(table.convert_stream_error(e)?)),
    }
}

/// A future that also says whether it had to wait (returned `Pending` at least once).
struct Watched<F> {
    inner: Pin<Box<F>>,
    waited: bool,
}

impl<F: Future> Watched<F> {
    fn new(inner: F) -> Self {
        Self { inner: Box::pin(inner), waited: false }
    }
}

impl<F: Future> Future for Watched<F> {
    type Output = (F::Output, bool);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.inner.as_mut().poll(cx) {
            Poll::Ready(out) => Poll::Ready((out, self.waited)),
            Poll::Pending => {
                self.waited = true;
                Poll::Pending
            }
        }
    }
}
