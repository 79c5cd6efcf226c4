//! Lines on a stdio server's stdout that are not JSON-RPC: a banner, a `console.log`, a
//! logger writing to the wrong stream. rmcp skips them without a word at any verbosity, so a
//! server that prints only those ends in a connect timeout that says nothing. [`Sieve`] reads
//! the child's stdout on rmcp's behalf, passes every byte through unchanged (what rmcp skips,
//! it still skips), and notes each line that is not JSON-RPC: the first is a warning at once,
//! then one more at 10, 100, 1000… lines so far, never a flood; and [`StdoutNoise::explain`]
//! appends what it saw to a failed or timed-out handshake's error.
//!
//! A line is taken for JSON-RPC when its first byte past blanks (and a BOM) is `{` or `[` and
//! it holds `"jsonrpc"` (every JSON-RPC 2.0 message does, a JSON log line does not). Only the
//! first [`KEPT_BYTES`] of a line are kept, to quote it; quoted, it is one escaped line
//! (`text::escape_line`) with URL secrets and the definition's `env` values masked, clipped
//! to [`QUOTED_CHARS`].

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use memchr::memmem;
use tokio::io::{AsyncRead, ReadBuf};

use crate::config::ServerDef;

/// Bytes of a line kept until it is known to be JSON-RPC (and of the first other line, to
/// quote it).
const KEPT_BYTES: usize = 512;
/// Characters of the first line quoted in a warning or an error.
pub const QUOTED_CHARS: usize = 100;
/// What every JSON-RPC 2.0 message holds.
const TOKEN: &[u8] = b"\"jsonrpc\"";
/// An `env` value shorter than this is not masked in a quote (`1`, `true`, `dev` would mask
/// ordinary words).
const MASKED_MIN_CHARS: usize = 4;

/// What one stdio server wrote to stdout that is not JSON-RPC: how many lines, and the first,
/// quoted. Shared by the [`Sieve`] and whoever reports the connect's outcome.
#[derive(Debug, Clone, Default)]
pub struct StdoutNoise {
    seen: Arc<Mutex<Seen>>,
}

#[derive(Debug, Default)]
struct Seen {
    lines: u64,
    first: Option<String>,
}

impl StdoutNoise {
    /// What the server printed that is not JSON-RPC, when it printed any, to append to a
    /// failure: `connect timed out after 30000 ms` then `; the server printed 3 lines that are
    /// not JSON-RPC on stdout, the first: "Listening on port 3000"`.
    pub fn explain(&self) -> Option<String> {
        let seen = self.seen.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match (&seen.first, seen.lines) {
            (Some(first), 1) => {
                Some(format!("; the server printed 1 line that is not JSON-RPC on stdout: \"{first}\""))
            }
            (Some(first), n) => Some(format!(
                "; the server printed {n} lines that are not JSON-RPC on stdout, the first: \"{first}\""
            )),
            (None, _) => None,
        }
    }

    /// Notes one line that is not JSON-RPC (`raw`: its first bytes) and says so when it is the
    /// first or the count reaches a power of ten.
    fn note(&self, server: &str, raw: &[u8], masks: &[String]) {
        let mut seen = self.seen.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        seen.lines += 1;
        let lines = seen.lines;
        let first = seen.first.get_or_insert_with(|| quote(raw, masks)).clone();
        drop(seen);
        if lines == 1 {
            tracing::warn!(
                server = %server,
                "skipped a line on stdout that is not JSON-RPC (a stdio server writes only JSON-RPC \
                 there; its logs belong on stderr): \"{first}\""
            );
        } else if is_power_of_ten(lines) {
            tracing::warn!(
                server = %server,
                "skipped {lines} lines on stdout so far that are not JSON-RPC, the first: \"{first}\""
            );
        }
    }
}

fn is_power_of_ten(mut n: u64) -> bool {
    while n >= 10 && n.is_multiple_of(10) {
        n /= 10;
    }
    n == 1
}

/// `raw` as one line a person may read: lossy UTF-8, the definition's `env` values and URL
/// secrets masked, every control or hidden character escaped, clipped to [`QUOTED_CHARS`].
fn quote(raw: &[u8], masks: &[String]) -> String {
    let mut text = String::from_utf8_lossy(raw).trim().to_string();
    for value in masks {
        text = text.replace(value.as_str(), crate::config::MASK);
    }
    let text = crate::redact::redact_urls(&text);
    let text = crate::text::escape_line(&text);
    if text.chars().count() <= QUOTED_CHARS {
        return text.into_owned();
    }
    let mut clipped: String = text.chars().take(QUOTED_CHARS - 3).collect();
    clipped.push_str("...");
    clipped
}

/// Where the sieve is in the current line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    /// Nothing but blanks yet.
    Start,
    /// Began with `{` or `[`; `"jsonrpc"` not seen yet.
    Json,
    /// JSON-RPC: nothing to look at until its end.
    Message,
    /// Something else.
    Text,
}

/// The child's stdout as rmcp reads it, every byte passed through, each line that is not
/// JSON-RPC noted in a [`StdoutNoise`].
pub struct Sieve<R> {
    inner: R,
    server: String,
    noise: StdoutNoise,
    /// The definition's `env` values, masked in a quote.
    masks: Vec<String>,
    line: Line,
    /// The line's first [`KEPT_BYTES`], to quote it.
    kept: Vec<u8>,
    /// The line's last bytes, one short of the token: the token may straddle two reads.
    carry: Vec<u8>,
    finder: memmem::Finder<'static>,
}

impl<R> Sieve<R> {
    /// Reads `inner` (the stdout of `def`'s child), noting into `noise`.
    pub fn new(inner: R, def: &ServerDef, noise: StdoutNoise) -> Self {
        let masks = def
            .env
            .iter()
            .map(|(_, value)| value.clone())
            .filter(|value| value.chars().count() >= MASKED_MIN_CHARS)
            .collect();
        Self {
            inner,
            server: def.name.clone(),
            noise,
            masks,
            line: Line::Start,
            kept: Vec::with_capacity(KEPT_BYTES),
            carry: Vec::with_capacity(2 * TOKEN.len()),
            finder: memmem::Finder::new(TOKEN),
        }
    }

    /// Looks at what was just read.
    fn inspect(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            match memchr::memchr(b'\n', bytes) {
                Some(at) => {
                    self.take(&bytes[..at]);
                    self.end_line();
                    bytes = &bytes[at + 1..];
                }
                None => {
                    self.take(bytes);
                    bytes = &[];
                }
            }
        }
    }

    /// Part of a line, its end not in it.
    fn take(&mut self, mut part: &[u8]) {
        if self.line == Line::Start {
            let blank = |b: &&u8| matches!(b, b' ' | b'\t' | b'\r' | 0xEF | 0xBB | 0xBF);
            part = &part[part.iter().take_while(blank).count()..];
            self.line = match part.first() {
                None => return,
                Some(b'{' | b'[') => Line::Json,
                Some(_) => Line::Text,
            };
        }
        match self.line {
            Line::Json => {
                let before = self.carry.len();
                self.carry.extend_from_slice(&part[..part.len().min(TOKEN.len())]);
                if self.finder.find(&self.carry).is_some() || self.finder.find(part).is_some() {
                    self.line = Line::Message;
                    return;
                }
                // The last bytes of the line so far, one short of the token.
                self.carry.truncate(before);
                self.carry.extend_from_slice(&part[part.len().saturating_sub(TOKEN.len() - 1)..]);
                let over = self.carry.len().saturating_sub(TOKEN.len() - 1);
                self.carry.drain(..over);
                self.keep(part);
            }
            Line::Text => self.keep(part),
            Line::Start | Line::Message => {}
        }
    }

    fn keep(&mut self, part: &[u8]) {
        let room = KEPT_BYTES.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&part[..part.len().min(room)]);
    }

    fn end_line(&mut self) {
        if matches!(self.line, Line::Json | Line::Text) {
            self.noise.note(&self.server, &self.kept, &self.masks);
        }
        self.line = Line::Start;
        self.kept.clear();
        self.carry.clear();
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Sieve<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            this.inspect(&buf.filled()[before..]);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def_with_env(value: &str) -> ServerDef {
        ServerDef { name: "s".into(), env: vec![("TOKEN".into(), value.into())], ..ServerDef::default() }
    }

    /// What a sieve notes when `bytes` arrive in reads of `chunk` bytes.
    fn sieved(bytes: &[u8], chunk: usize) -> String {
        let noise = StdoutNoise::default();
        let mut sieve = Sieve::new(tokio::io::empty(), &def_with_env("tok-s3cr3t"), noise.clone());
        for part in bytes.chunks(chunk) {
            sieve.inspect(part);
        }
        format!("failed{}", noise.explain().unwrap_or_default())
    }

    #[test]
    fn only_lines_that_are_not_json_rpc_are_noted_however_the_reads_fall() {
        let mut stream = Vec::new();
        stream.extend_from_slice(b"Listening on port 3000\r\n\n   \n");
        stream.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
        stream.extend_from_slice(b"{\"result\":{\"text\":\"");
        stream.extend_from_slice(&[b'x'; 3000]);
        stream.extend_from_slice(b"\"},\"jsonrpc\":\"2.0\",\"id\":2}\n");
        stream.extend_from_slice(
            b"{\"level\":30,\"msg\":\"ready\"}\n{\n\xEF\xBB\xBF[{\"jsonrpc\":\"2.0\",\"method\":\"m\"}]\n",
        );
        let expected = "failed; the server printed 3 lines that are not JSON-RPC on stdout, the first: \
                        \"Listening on port 3000\"";
        for chunk in [1, 2, 7, 8, 9, 10, 64, 4096, stream.len()] {
            assert_eq!(sieved(&stream, chunk), expected, "reads of {chunk} bytes");
        }
    }

    #[test]
    fn a_clean_stream_leaves_the_error_alone_and_one_line_is_singular() {
        assert_eq!(sieved(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n", 5), "failed");
        assert_eq!(sieved(b"partial line with no end", 5), "failed");
        assert_eq!(
            sieved(b"hello\n", 3),
            "failed; the server printed 1 line that is not JSON-RPC on stdout: \"hello\""
        );
    }

    #[test]
    fn a_quote_is_one_masked_escaped_clipped_line() {
        let masks = vec!["tok-s3cr3t".to_string()];
        let raw = b"key=tok-s3cr3t at https://u:pw@h/x?token=abc \x1b[2J\xe2\x80\xa8done";
        assert_eq!(quote(raw, &masks), "key=*** at https://***@h/x?token=*** \\u{1b}[2J\\u{2028}done");
        let long = quote(&[b'y'; 400], &masks);
        assert_eq!(long, format!("{}...", "y".repeat(QUOTED_CHARS - 3)));
    }

    #[test]
    fn warnings_after_the_first_come_at_powers_of_ten() {
        let said: Vec<u64> = (1..=1000).filter(|n| is_power_of_ten(*n)).collect();
        assert_eq!(said, [1, 10, 100, 1000]);
    }
}
