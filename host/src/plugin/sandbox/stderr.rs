//! A guest's stderr: a sink that keeps only the most recent bytes and never refuses a write.
//!
//! wasmtime-wasi's `MemoryOutputPipe` has a fixed capacity and, once full, answers every write
//! with "closed"; a Rust guest's `eprintln!` then panics ("failed printing to stderr"), so a
//! chatty plugin trapped after 16 KiB. The host reads stderr only to quote a crash (the panic
//! message is the last thing a guest prints), so the tail is what matters: older bytes are
//! dropped as new ones arrive, and the guest always sees a stream that accepts everything.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError};

/// Bytes of a guest's stderr the host keeps: a panic message with its location and a few lines
/// before it fit many times over; memory per store stays fixed however much the guest writes.
pub(crate) const STDERR_TAIL_BYTES: usize = 16 * 1024;
/// What one `check-write` permits. Any size works (writes never fail); this bounds how much
/// the guest hands over per call, which the host copies out of its memory.
const WRITE_PERMIT: usize = 64 * 1024;

/// The shared tail of one store's stderr: the store holds one clone, the crash report another.
#[derive(Debug, Clone, Default)]
pub(crate) struct StderrTail {
    tail: Arc<Mutex<VecDeque<u8>>>,
}

impl StderrTail {
    /// The kept bytes, oldest first.
    pub fn contents(&self) -> Vec<u8> {
        self.lock().iter().copied().collect()
    }

    fn lock(&self) -> MutexGuard<'_, VecDeque<u8>> {
        // Appending bytes cannot leave the buffer half-updated in a way that matters.
        self.tail.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Appends `bytes`, dropping the oldest so at most [`STDERR_TAIL_BYTES`] stay.
    fn push(&self, bytes: &[u8]) {
        let bytes = bytes.get(bytes.len().saturating_sub(STDERR_TAIL_BYTES)..).unwrap_or_default();
        let mut tail = self.lock();
        let overflow = (tail.len() + bytes.len()).saturating_sub(STDERR_TAIL_BYTES).min(tail.len());
        tail.drain(..overflow);
        tail.extend(bytes);
    }
}

#[wasmtime_wasi::async_trait]
impl OutputStream for StderrTail {
    fn write(&mut self, bytes: bytes::Bytes) -> Result<(), StreamError> {
        self.push(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StreamError> {
        Ok(())
    }

    fn check_write(&mut self) -> Result<usize, StreamError> {
        Ok(WRITE_PERMIT)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for StderrTail {
    /// Always writable: nothing is ever waited for.
    async fn ready(&mut self) {}
}

impl AsyncWrite for StderrTail {
    fn poll_write(self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.push(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl IsTerminal for StderrTail {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for StderrTail {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_bytes_and_accepts_every_write() {
        let mut tail = StderrTail::default();
        for i in 0..100u8 {
            let line = vec![b'a' + i % 26; 1024];
            assert!(OutputStream::write(&mut tail, line.into()).is_ok());
            assert_eq!(tail.check_write().ok(), Some(WRITE_PERMIT));
        }
        assert!(OutputStream::write(&mut tail, bytes::Bytes::from_static(b"panicked at the end")).is_ok());
        let kept = tail.contents();
        assert_eq!(kept.len(), STDERR_TAIL_BYTES);
        assert!(kept.ends_with(b"panicked at the end"));
        // One write bigger than the whole tail keeps its own end.
        let huge = vec![b'z'; STDERR_TAIL_BYTES * 3];
        assert!(OutputStream::write(&mut tail, huge.into()).is_ok());
        assert_eq!(tail.contents(), vec![b'z'; STDERR_TAIL_BYTES]);
    }
}
