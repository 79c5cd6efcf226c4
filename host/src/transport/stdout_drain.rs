//! A stdio server's stdout, read by rmcp while the session lives and drained to its end once
//! rmcp lets go of it. rmcp closes the server's stdin and drops its stdout at the same moment;
//! a server still writing as it leaves (a last notification, a reply to the input it just read)
//! then wrote into a closed pipe and Node died of `EPIPE` instead of exiting on the closed
//! input. Kept open and read until the server closes it (it exits, or its group is ended), the
//! pipe lets every server leave the way the MCP stdio shutdown asks: stdin closed, then exit.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt as _, ReadBuf};

/// Most bytes read and thrown away after the session ends: a server that keeps writing instead
/// of exiting is ended by its grace (SIGTERM, SIGKILL) long before this, but the drain is
/// bounded whatever happens.
const DRAIN_LIMIT: u64 = 64 * 1024 * 1024;

/// `inner`, read as itself, and drained on a task of its own when dropped.
pub struct DrainOnDrop<R: AsyncRead + Unpin + Send + 'static> {
    inner: Option<R>,
}

impl<R: AsyncRead + Unpin + Send + 'static> DrainOnDrop<R> {
    /// Wraps `inner`.
    pub fn new(inner: R) -> Self {
        Self { inner: Some(inner) }
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> AsyncRead for DrainOnDrop<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut().inner.as_mut() {
            Some(inner) => Pin::new(inner).poll_read(cx, buf),
            None => Poll::Ready(Ok(())),
        }
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> Drop for DrainOnDrop<R> {
    fn drop(&mut self) {
        let Some(inner) = self.inner.take() else { return };
        // Outside an async runtime (it is shutting down) the pipe just closes, as before.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = tokio::io::copy(&mut inner.take(DRAIN_LIMIT), &mut tokio::io::sink()).await;
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt as _;

    /// The writer keeps writing after the reader is dropped, and is not refused.
    #[tokio::test]
    async fn writes_after_the_drop_still_land() -> std::io::Result<()> {
        let (reader, mut writer) = tokio::io::duplex(16);
        let mut read = DrainOnDrop::new(reader);
        writer.write_all(b"first\n").await?;
        let mut line = [0u8; 6];
        read.read_exact(&mut line).await?;
        assert_eq!(&line, b"first\n");
        drop(read);
        // Far more than the duplex buffer: without the drain this would fail (reader gone).
        writer.write_all(&[b'x'; 4096]).await?;
        writer.shutdown().await?;
        Ok(())
    }
}
