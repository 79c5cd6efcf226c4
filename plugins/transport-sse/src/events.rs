//! A small `text/event-stream` parser: enough of the SSE format for MCP (event names, multi-line
//! data, comments, any line ending), with a cap so a server cannot grow one event forever.

/// One dispatched event.
pub struct Event {
    /// `event:` field; `message` when absent.
    pub kind: String,
    /// `data:` lines joined with `\n`.
    pub data: String,
}

/// The longest event (or unterminated line) accepted.
const MAX_EVENT: usize = 16 << 20;

/// Carries partial lines and the event being built across reads, and what a reconnect needs:
/// the server's last `retry:` and `id:` (which, per the SSE format, outlive their event).
#[derive(Default)]
pub struct Parser {
    /// The reconnection delay the server asked for, in milliseconds.
    pub retry_ms: Option<u64>,
    /// The last event id, sent back as `Last-Event-ID` on reconnect (empty: none).
    pub last_id: String,
    line: Vec<u8>,
    kind: String,
    data: Vec<String>,
    data_len: usize,
    /// A `\r` ended the last chunk: a `\n` starting the next one belongs to it.
    after_cr: bool,
}

impl Parser {
    /// A parser for a new stream: partial lines and events are dropped, `retry` and the last
    /// id carry over.
    pub fn fresh(self) -> Parser {
        Parser { retry_ms: self.retry_ms, last_id: self.last_id, ..Parser::default() }
    }

    /// Feeds bytes; returns the events completed by them.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<Event>, String> {
        let mut out = Vec::new();
        for &b in bytes {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    let line = String::from_utf8_lossy(&std::mem::take(&mut self.line)).into_owned();
                    if let Some(event) = self.line_done(&line) {
                        out.push(event);
                    }
                }
                _ => self.line.push(b),
            }
            if self.line.len() + self.data_len > MAX_EVENT {
                return Err(format!("the server sent an event longer than {} MiB", MAX_EVENT >> 20));
            }
        }
        Ok(out)
    }

    fn line_done(&mut self, line: &str) -> Option<Event> {
        if line.is_empty() {
            let kind = std::mem::take(&mut self.kind);
            let data = std::mem::take(&mut self.data);
            self.data_len = 0;
            if data.is_empty() {
                return None;
            }
            let kind = if kind.is_empty() { "message".to_string() } else { kind };
            return Some(Event { kind, data: data.join("\n") });
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => self.kind = value.to_string(),
            "data" => {
                self.data_len += value.len() + 1;
                self.data.push(value.to_string());
            }
            // Only ASCII digits count; anything else is ignored, as the format says.
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.retry_ms = value.parse().ok();
            }
            "id" if !value.contains('\0') => self.last_id = value.to_string(),
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_and_id_are_kept_for_the_reconnect() {
        let mut p = Parser::default();
        let got =
            p.feed(b"retry: 250\nid: 7\nevent: endpoint\ndata: /m\n\nretry: soon\n\n").unwrap_or_default();
        assert_eq!(got.len(), 1);
        assert_eq!((p.retry_ms, p.last_id.as_str()), (Some(250), "7"));
    }

    #[test]
    fn events_across_chunks_and_line_endings() {
        let mut p = Parser::default();
        let mut got = p.feed(b"event: endpoint\r\ndata: /message?sessionId=1\r").unwrap_or_default();
        got.extend(p.feed(b"\n\r\n: keep-alive\n\ndata: {\"a\":\ndata: 1}\n\n").unwrap_or_default());
        let got: Vec<(String, String)> = got.into_iter().map(|e| (e.kind, e.data)).collect();
        assert_eq!(
            got,
            [
                ("endpoint".to_string(), "/message?sessionId=1".to_string()),
                ("message".to_string(), "{\"a\":\n1}".to_string())
            ]
        );
    }
}
