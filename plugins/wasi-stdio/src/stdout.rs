//! WASI stdout as a tokio `AsyncWrite`; writes block until the host has taken the bytes.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;
use wasip2::cli::stdout::get_stdout;
use wasip2::io::streams::{OutputStream, StreamError};

/// The most `blocking-write-and-flush` accepts in one call.
const CHUNK: usize = 4096;

/// The component's stdout.
pub struct Stdout {
    stream: OutputStream,
}

impl Stdout {
    pub fn new() -> Self {
        Self { stream: get_stdout() }
    }
}

impl Default for Stdout {
    fn default() -> Self {
        Self::new()
    }
}

fn to_io(error: StreamError) -> io::Error {
    match error {
        StreamError::Closed => io::Error::new(io::ErrorKind::BrokenPipe, "stdout is closed"),
        StreamError::LastOperationFailed(error) => {
            io::Error::other(format!("writing stdout: {}", error.to_debug_string()))
        }
    }
}

impl AsyncWrite for Stdout {
    /// Writes all of `buf`: the host's stdout is in memory and drained by the host, so blocking
    /// here is short, and a partial write would only make rmcp call again.
    fn poll_write(self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        for chunk in buf.chunks(CHUNK) {
            if let Err(error) = self.stream.blocking_write_and_flush(chunk) {
                return Poll::Ready(Err(to_io(error)));
            }
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.stream.blocking_flush().map_err(to_io))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_flush(cx)
    }
}
