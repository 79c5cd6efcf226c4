//! [`run`] and [`stdio`] for the component build.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::reactor;
use crate::{Stdin, Stdout};

/// The component's stdin and stdout, for rmcp's `(read, write)` transport.
pub fn stdio() -> (Stdin, Stdout) {
    (Stdin::new(), Stdout::new())
}

/// Runs `main` to completion on a current-thread runtime that idles in `wasi:io/poll` (see the
/// crate docs).
pub fn run<F: Future>(main: F) -> io::Result<F::Output> {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_time().on_thread_park(reactor::park).build()?;
    Ok(runtime.block_on(Ticked { inner: Box::pin(main) }))
}

/// The `block_on` future, registering its waker as the reactor's tick each time it is polled.
struct Ticked<F> {
    inner: Pin<Box<F>>,
}

impl<F: Future> Future for Ticked<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        reactor::set_tick(cx.waker());
        self.inner.as_mut().poll(cx)
    }
}
