//! The last lines a child process wrote to stderr, kept for error messages.
//!
//! Stderr is read on its own task so it never mixes with the JSON-RPC stream on stdout, and is
//! drained continuously so a chatty server never blocks on a full pipe. Memory stays bounded
//! however much it writes: a fixed number of lines, each clipped.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncRead, AsyncReadExt};

/// Lines kept: enough for a stack trace's head or a usage message.
pub const TAIL_LINES: usize = 20;
/// Bytes kept per line; the rest of a longer line is dropped.
pub const LINE_BYTES: usize = 512;

/// A shared, bounded ring of the most recent stderr lines.
#[derive(Debug, Clone, Default)]
pub struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
}

impl StderrTail {
    /// Starts draining `reader` on a background task; the task ends at EOF.
    pub fn drain<R: AsyncRead + Unpin + Send + 'static>(mut reader: R) -> Self {
        let tail = Self::default();
        let sink = tail.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            let mut line: Vec<u8> = Vec::new();
            loop {
                let n = match reader.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                for &byte in buf.get(..n).unwrap_or_default() {
                    if byte == b'\n' {
                        sink.push(&line);
                        line.clear();
                    } else if line.len() < LINE_BYTES {
                        line.push(byte);
                    }
                }
            }
            if !line.is_empty() {
                sink.push(&line);
            }
        });
        tail
    }

    fn push(&self, raw: &[u8]) {
        let text = String::from_utf8_lossy(raw).trim_end_matches('\r').to_string();
        if text.trim().is_empty() {
            return;
        }
        tracing::debug!(target: "toolport::server_stderr", "{text}");
        if let Ok(mut lines) = self.lines.lock() {
            if lines.len() == TAIL_LINES {
                lines.pop_front();
            }
            lines.push_back(text);
        }
    }

    /// The kept lines, oldest first.
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().map(|l| l.iter().cloned().collect()).unwrap_or_default()
    }

    /// The last `n` lines joined with ` | `, for one-line error messages; `None` when empty.
    pub fn summary(&self, n: usize) -> Option<String> {
        let lines = self.lines();
        if lines.is_empty() {
            return None;
        }
        let skip = lines.len().saturating_sub(n);
        Some(lines.get(skip..).unwrap_or_default().join(" | "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keeps_only_the_last_lines_each_clipped() {
        let mut text = String::new();
        for i in 0..50 {
            text.push_str(&format!("line {i}\n"));
        }
        text.push_str(&"y".repeat(5000));
        let tail = StderrTail::drain(std::io::Cursor::new(text.into_bytes()));
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let lines = tail.lines();
        assert_eq!(lines.len(), TAIL_LINES);
        assert_eq!(lines.first().map(String::as_str), Some("line 31"));
        assert_eq!(lines.last().map(String::len), Some(LINE_BYTES));
        assert_eq!(tail.summary(2).as_deref().map(|s| s.starts_with("line 49 | yyy")), Some(true));
    }
}
