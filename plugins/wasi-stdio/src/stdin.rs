//! WASI stdin as a tokio `AsyncRead` that waits through the reactor instead of spinning.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use wasip2::cli::stdin::get_stdin;
use wasip2::io::streams::{InputStream, StreamError};

use crate::reactor::Readiness;

/// The most one `read` asks the host for.
const MAX_READ: usize = 64 * 1024;

/// The component's stdin. End of file is the stream closing.
pub struct Stdin {
    // Declared before `stream`: the pollable is the stream's child and must be dropped first.
    readiness: Readiness,
    stream: InputStream,
    /// Bytes the host returned beyond the caller's buffer, handed out first next time.
    pending: Vec<u8>,
    closed: bool,
}

impl Stdin {
    pub fn new() -> Self {
        let stream = get_stdin();
        let readiness = Readiness::new(stream.subscribe());
        Self { readiness, stream, pending: Vec::new(), closed: false }
    }
}

impl Default for Stdin {
    fn default() -> Self {
        Self::new()
    }
}

impl AsyncRead for Stdin {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.pending.is_empty() {
            let n = this.pending.len().min(buf.remaining());
            buf.put_slice(&this.pending[..n]);
            this.pending.drain(..n);
            return Poll::Ready(Ok(()));
        }
        if this.closed || buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        // Two tries: a pollable that says "ready" is followed by a read that returns data or an
        // error; a host that says ready and then has nothing gets the task re-queued, not a spin.
        for _ in 0..2 {
            let want = buf.remaining().min(MAX_READ) as u64;
            match this.stream.read(want) {
                Ok(bytes) if bytes.is_empty() => {
                    if this.readiness.poll_ready(cx).is_pending() {
                        return Poll::Pending;
                    }
                }
                Ok(bytes) => {
                    let n = bytes.len().min(buf.remaining());
                    buf.put_slice(&bytes[..n]);
                    this.pending.extend_from_slice(&bytes[n..]);
                    return Poll::Ready(Ok(()));
                }
                Err(StreamError::Closed) => {
                    this.closed = true;
                    return Poll::Ready(Ok(()));
                }
                Err(StreamError::LastOperationFailed(error)) => {
                    return Poll::Ready(Err(io::Error::other(format!(
                        "reading stdin: {}",
                        error.to_debug_string()
                    ))));
                }
            }
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
